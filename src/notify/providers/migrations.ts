import { type Kysely, sql } from 'kysely';
import type { Migrations } from '../../platform/db/migrate.ts';

/**
 * Keys start with '200_' (after the core's '001_' and the templates' '100_'). The dev inbox keeps
 * what the embedded providers "sent"; `delivery_id` is unique, so a redelivered message is stored
 * once and answers with the same provider id (exactly-once at the provider).
 */
export const providerMigrations: Migrations = {
  '200_notify_inbox': {
    async up(db: Kysely<unknown>) {
      await sql`
        create table notify_inbox (
          id uuid primary key,
          delivery_id text not null unique,
          notification_id text not null,
          channel varchar(20) not null,
          type varchar(20) not null,
          user_id text not null,
          address text,
          subject text,
          text text not null,
          html text,
          provider_message_id text not null unique,
          created_at timestamptz not null
        )`.execute(db);
      await sql`create index notify_inbox_user on notify_inbox (user_id, created_at desc)`.execute(db);
      await sql`create index notify_inbox_recent on notify_inbox (created_at desc)`.execute(db);
    },
  },
};
