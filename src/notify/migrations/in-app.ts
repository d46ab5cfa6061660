import { type Kysely, sql } from 'kysely';
import type { Migrations } from '../../platform/db/migrate.ts';
import { seedDefaults } from './templates.ts';

/**
 * Keys start with '300_' (after the inbox's '200_'). The in-app channel: a fourth channel in the
 * deliveries' and templates' checks, its opt-out, its templates' link, and the feed it writes.
 */
export const inAppMigrations: Migrations = {
  '300_notify_in_app': {
    async up(db: Kysely<unknown>) {
      // The checks were declared inline in 001 and 100, so PostgreSQL named them `{table}_channel_check`.
      for (const table of ['notification_deliveries', 'notify_templates']) {
        await sql`alter table ${sql.table(table)} drop constraint if exists ${sql.id(`${table}_channel_check`)}`.execute(
          db,
        );
        await sql`alter table ${sql.table(table)} add constraint ${sql.id(`${table}_channel_check`)}
          check (channel in ('push', 'sms', 'email', 'in_app'))`.execute(db);
      }
      await sql`alter table notify_preferences add column if not exists in_app_enabled boolean not null default true`.execute(
        db,
      );
      await sql`alter table notify_templates add column if not exists link text`.execute(db);
      // One row per notification (a notification has one in-app delivery), so a redelivered message
      // stores nothing more. `seq` orders a user's items: keyset pages and the SSE event ids.
      await sql`
        create table notify_feed (
          seq bigserial primary key,
          notification_id uuid not null unique,
          user_id text not null,
          type varchar(20) not null,
          title text not null,
          body text not null,
          link text,
          created_at timestamptz not null,
          seen_at timestamptz,
          read_at timestamptz,
          archived_at timestamptz
        )`.execute(db);
      await sql`create index notify_feed_user on notify_feed (user_id, seq desc)`.execute(db);
      // The unread count reads only these entries, however long the feed grows.
      await sql`create index notify_feed_unread on notify_feed (user_id, seq)
        where read_at is null and archived_at is null`.execute(db);
      await seedDefaults(db, ['in_app']);
    },
  },
  '301_notify_feed_retention': {
    async up(db: Kysely<unknown>) {
      // The retention's ways to old items, oldest first (feed/retention.ts): by when they arrived,
      // and archived ones by when they were archived. Pages and counts read by user; these serve
      // only the deletes.
      await sql`create index if not exists notify_feed_created on notify_feed (created_at)`.execute(db);
      await sql`create index if not exists notify_feed_archived on notify_feed (archived_at)
        where archived_at is not null`.execute(db);
    },
  },
};
