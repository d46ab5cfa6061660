import { type Kysely, sql } from 'kysely';
import type { Migrations } from './db/migrate.ts';

/** Tables the platform itself needs: the embedded job queue, idempotency records, job ticks. */
export const platformMigrations: Migrations = {
  '001_platform': {
    async up(db: Kysely<unknown>) {
      await sql`
        create table queue_messages (
          id bigint generated always as identity primary key,
          topic text not null,
          key text not null,
          dedup_id text not null,
          payload jsonb not null,
          attempt int not null default 0,
          status text not null default 'ready' check (status in ('ready', 'dead')),
          visible_at timestamptz not null,
          lease_until timestamptz,
          last_error text,
          created_at timestamptz not null,
          dead_at timestamptz
        )`.execute(db);
      // The head of each key is found through this index (the NOT EXISTS probe of the claim query).
      await sql`create index queue_messages_key on queue_messages (topic, key, id) where status = 'ready'`.execute(
        db,
      );
      await sql`create index queue_messages_ready on queue_messages (topic, id) where status = 'ready'`.execute(
        db,
      );
      await sql`create index queue_messages_dead on queue_messages (topic, dead_at) where status = 'dead'`.execute(
        db,
      );
      await sql`
        create table queue_dedup (
          topic text not null,
          dedup_id text not null,
          expires_at timestamptz not null,
          primary key (topic, dedup_id)
        )`.execute(db);
      await sql`create index queue_dedup_expiry on queue_dedup (expires_at)`.execute(db);
      await sql`
        create table idempotency_keys (
          scope text not null,
          key text not null,
          request_hash text not null,
          status text not null check (status in ('in_progress', 'done')),
          response_status int,
          response_headers jsonb,
          response_body text,
          created_at timestamptz not null,
          expires_at timestamptz not null,
          primary key (scope, key)
        )`.execute(db);
      await sql`create index idempotency_keys_expiry on idempotency_keys (expires_at)`.execute(db);
      await sql`
        create table job_ticks (
          job text not null,
          tick_at timestamptz not null,
          instance text not null,
          started_at timestamptz not null,
          finished_at timestamptz,
          outcome text,
          primary key (job, tick_at)
        )`.execute(db);
    },
  },
  // The publisher's trace context (TRACING=otlp), so a delivery's span joins the request's trace.
  '002_queue_trace_context': {
    async up(db: Kysely<unknown>) {
      await sql`alter table queue_messages add column trace_context jsonb`.execute(db);
    },
  },
};
