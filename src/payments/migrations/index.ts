import { type Kysely, sql } from 'kysely';
import type { Migrations } from '../../platform/db/migrate.ts';

export const paymentsMigrations: Migrations = {
  '001_payments': {
    async up(db: Kysely<unknown>) {
      // Status transitions are in README.md. `attempt_id` is the one outstanding charge attempt
      // (our idempotency key at the gateway); `version`/`notified_version` form an outbox: the
      // owner's handler has seen the latest transition when they are equal.
      await sql`
        create table payments (
          id uuid primary key,
          purpose text not null,
          reference text not null,
          description text not null,
          amount_minor bigint not null check (amount_minor > 0),
          currency text not null,
          status text not null check (status in ('PENDING', 'COMPLETED', 'FAILED', 'REFUNDED')),
          allow_retry boolean not null,
          idempotency_key text,
          return_url text,
          attempt_id uuid,
          attempt_started_at timestamptz,
          attempts int not null default 0,
          gateway_charge_id text,
          card_last4 text check (card_last4 ~ '^[0-9]{4}$'),
          card_brand text,
          failure_code text,
          failure_message text,
          refunded_minor bigint not null default 0 check (refunded_minor >= 0 and refunded_minor <= amount_minor),
          refund_reason text,
          version int not null default 1,
          notified_version int not null default 1,
          last_event text,
          created_at timestamptz not null,
          updated_at timestamptz not null,
          completed_at timestamptz,
          failed_at timestamptz,
          refunded_at timestamptz,
          check (status <> 'COMPLETED' or gateway_charge_id is not null)
        )`.execute(db);
      await sql`create unique index payments_idempotency on payments (purpose, idempotency_key)
        where idempotency_key is not null`.execute(db);
      await sql`create index payments_reference on payments (purpose, reference)`.execute(db);
      await sql`create index payments_outstanding on payments (attempt_started_at) where attempt_id is not null`.execute(
        db,
      );
      await sql`create index payments_unnotified on payments (updated_at) where notified_version < version`.execute(
        db,
      );
      await sql`
        create table payment_refunds (
          id uuid primary key,
          payment_id uuid not null references payments (id),
          amount_minor bigint not null check (amount_minor > 0),
          reason text not null,
          idempotency_key text not null,
          status text not null check (status in ('PENDING', 'SUCCEEDED', 'FAILED')),
          gateway_refund_id text,
          created_at timestamptz not null,
          completed_at timestamptz
        )`.execute(db);
      // A failed refund may be retried with the same key; a pending or done one may not repeat.
      await sql`create unique index payment_refunds_key on payment_refunds (payment_id, idempotency_key)
        where status <> 'FAILED'`.execute(db);
      await sql`create index payment_refunds_pending on payment_refunds (created_at) where status = 'PENDING'`.execute(
        db,
      );
      await sql`
        create table payment_webhook_events (
          event_id text primary key,
          type text not null,
          received_at timestamptz not null
        )`.execute(db);
      await sql`create index payment_webhook_events_received on payment_webhook_events (received_at)`.execute(
        db,
      );
      // The sandbox gateway's own books: in a real deployment these live at the gateway.
      await sql`
        create table payments_sandbox_charges (
          id text primary key,
          idempotency_key text not null unique,
          payment_id text not null,
          status text not null,
          amount_minor bigint not null,
          currency text not null,
          last4 text not null,
          brand text not null,
          failure_code text,
          failure_message text,
          refunded_minor bigint not null default 0,
          created_at timestamptz not null,
          updated_at timestamptz not null
        )`.execute(db);
      await sql`
        create table payments_sandbox_refunds (
          id text primary key,
          idempotency_key text not null unique,
          charge_id text not null references payments_sandbox_charges (id),
          amount_minor bigint not null,
          created_at timestamptz not null
        )`.execute(db);
    },
  },
};
