import { type Kysely, sql } from 'kysely';
import type { Migrations } from '../../platform/db/migrate.ts';

/**
 * The delivery core's tables. A notification has one delivery per requested channel; the
 * delivery carries the status a user sees and each provider try is an attempt row.
 * `published_at` is null until a worker claimed the delivery or the outbox sweep published it
 * (see notifications/outbox.ts).
 */
export const coreMigrations: Migrations = {
  '001_notify_core': {
    async up(db: Kysely<unknown>) {
      await sql`
        create table notify_preferences (
          user_id text primary key,
          push_enabled boolean not null default true,
          sms_enabled boolean not null default true,
          email_enabled boolean not null default true,
          quiet_hours_start time,
          quiet_hours_end time,
          timezone text not null default 'UTC',
          email text,
          phone text,
          locale text,
          updated_at timestamptz not null
        )`.execute(db);
      await sql`
        create table notify_push_subscriptions (
          user_id text not null,
          endpoint text not null,
          p256dh text not null,
          auth text not null,
          created_at timestamptz not null,
          primary key (user_id, endpoint)
        )`.execute(db);
      await sql`
        create table notifications (
          id uuid primary key,
          user_id text not null,
          client_id text,
          request_hash text,
          type varchar(20) not null,
          priority text not null check (priority in ('critical', 'high', 'normal', 'low')),
          lane text not null check (lane in ('realtime', 'batch')),
          batch_id uuid,
          data jsonb not null,
          accepted jsonb not null,
          created_at timestamptz not null
        )`.execute(db);
      await sql`create unique index notifications_client_id on notifications (user_id, client_id)
        where client_id is not null`.execute(db);
      await sql`create index notifications_user_history on notifications (user_id, created_at desc, id desc)`.execute(
        db,
      );
      await sql`
        create table notification_deliveries (
          notification_id uuid not null references notifications (id),
          channel text not null check (channel in ('push', 'sms', 'email')),
          user_id text not null,
          lane text not null,
          status text not null check (status in ('queued', 'sending', 'sent', 'delivered', 'failed',
            'dead_lettered', 'skipped', 'rate_limited', 'scheduled')),
          reason text,
          content text,
          provider text,
          provider_message_id text,
          attempts int not null default 0,
          created_at timestamptz not null,
          scheduled_for timestamptz,
          published_at timestamptz,
          sent_at timestamptz,
          delivered_at timestamptz,
          updated_at timestamptz not null,
          primary key (notification_id, channel)
        )`.execute(db);
      await sql`create index notification_deliveries_unpublished on notification_deliveries
        (coalesce(scheduled_for, created_at)) where published_at is null`.execute(db);
      await sql`create index notification_deliveries_provider_message on notification_deliveries (provider_message_id)
        where provider_message_id is not null`.execute(db);
      await sql`
        create table notification_attempts (
          id bigserial primary key,
          notification_id uuid not null,
          channel text not null,
          attempt int not null,
          at timestamptz not null,
          error text,
          provider text
        )`.execute(db);
      await sql`create index notification_attempts_delivery on notification_attempts (notification_id, channel, id)`.execute(
        db,
      );
    },
  },
  '002_notify_deliveries_without_foreign_key': {
    async up(db: Kysely<unknown>) {
      // Deliveries are written only by the accept's insert, in the statement that writes their
      // notification (joined to its rows), and notifications are never deleted: the key's check
      // (a lookup and a row lock on the notification per delivery) was a large part of that
      // insert's PostgreSQL work and guarded nothing.
      await sql`alter table notification_deliveries
        drop constraint if exists notification_deliveries_notification_id_fkey`.execute(db);
    },
  },
  '003_notify_preferences_version': {
    async up(db: Kysely<unknown>) {
      // Counts the writes of a user's preferences: a queue message that carries what the accept
      // knew of them (notifications/outbox.ts) is delivered as it is only while the count is still the same.
      await sql`alter table notify_preferences add column if not exists version integer not null default 0`.execute(
        db,
      );
    },
  },
  '004_notify_email_marketing': {
    async up(db: Kysely<unknown>) {
      // Marketing e-mail on its own switch: a one-click unsubscribe (List-Unsubscribe, RFC 8058)
      // stops bulk mail without stopping the booking confirmations the same address gets.
      await sql`alter table notify_preferences
        add column if not exists email_marketing_enabled boolean not null default true`.execute(db);
    },
  },
  '005_notify_scheduled': {
    async up(db: Kysely<unknown>) {
      // `cancelled`: a pending delivery (queued, or scheduled by `send_at` or quiet hours) its
      // sender took back (DELETE /api/notifications/{id}); final, like `skipped`.
      await sql`alter table notification_deliveries
        drop constraint if exists notification_deliveries_status_check`.execute(db);
      await sql`alter table notification_deliveries add constraint notification_deliveries_status_check
        check (status in ('queued', 'sending', 'sent', 'delivered', 'failed', 'dead_lettered', 'skipped',
          'rate_limited', 'scheduled', 'cancelled'))`.execute(db);
    },
  },
  '006_notify_digests': {
    async up(db: Kysely<unknown>) {
      // `digested`: an event of a digestible type, delivered as part of its window's one message
      // (digests/), never on its own.
      await sql`alter table notification_deliveries
        drop constraint if exists notification_deliveries_status_check`.execute(db);
      await sql`alter table notification_deliveries add constraint notification_deliveries_status_check
        check (status in ('queued', 'sending', 'sent', 'delivered', 'failed', 'dead_lettered', 'skipped',
          'rate_limited', 'scheduled', 'cancelled', 'digested'))`.execute(db);
      // Which types are digestible, and their window: a fixed length, or daily at a local time.
      await sql`
        create table notify_digest_types (
          type varchar(20) primary key,
          every_seconds integer check (every_seconds > 0),
          daily_at text check (daily_at ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
          updated_at timestamptz not null,
          check ((every_seconds is null) <> (daily_at is null))
        )`.execute(db);
      // One open window per user, type and channel (the partial unique index): concurrent events
      // of every process meet on it, and the row lock of its upsert orders them with the flush.
      await sql`
        create table notify_digests (
          id uuid primary key,
          user_id text not null,
          type varchar(20) not null,
          channel text not null,
          status text not null check (status in ('open', 'closed', 'sent')),
          priority text not null,
          events integer not null default 0,
          flush_at timestamptz not null,
          created_at timestamptz not null,
          closed_at timestamptz,
          notification_id uuid
        )`.execute(db);
      await sql`create unique index notify_digests_open on notify_digests (user_id, type, channel)
        where status = 'open'`.execute(db);
      await sql`create index notify_digests_due on notify_digests (flush_at) where status = 'open'`.execute(
        db,
      );
      await sql`create index notify_digests_closed on notify_digests (closed_at) where status = 'closed'`.execute(
        db,
      );
      await sql`
        create table notify_digest_items (
          digest_id uuid not null,
          notification_id uuid not null,
          data jsonb not null,
          created_at timestamptz not null,
          primary key (digest_id, notification_id)
        )`.execute(db);
    },
  },
  '007_notify_sender': {
    async up(db: Kysely<unknown>) {
      // Who sent the notification (platform/auth `callerId`: `service:{key name}`, `admin:{name}`,
      // or `in-process` for another module's NotifyApi.send): a service may cancel only its own.
      // Rows from before stay null, cancellable by an admin only. No index: it is read with its row.
      await sql`alter table notifications add column if not exists sent_by text`.execute(db);
    },
  },
  '008_notify_digests_sent': {
    async up(db: Kysely<unknown>) {
      // The retention's way to sent windows, oldest flush first (digests/retention.ts). Partial: the
      // open and closed windows the flush works on have their own indexes and are never removed.
      await sql`create index if not exists notify_digests_sent on notify_digests (closed_at)
        where status = 'sent'`.execute(db);
    },
  },
  '009_notify_attempt_base': {
    async up(db: Kysely<unknown>) {
      // The tries a delivery had when it was last redriven from the dead letters: its retry
      // schedule counts from there (delivery/handler.ts), its `attempts` keeps counting them all.
      await sql`alter table notification_deliveries
        add column if not exists attempt_base int not null default 0`.execute(db);
    },
  },
};
