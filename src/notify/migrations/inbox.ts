import { type Kysely, sql } from 'kysely';
import type { Migrations } from '../../platform/db/migrate.ts';

/**
 * Keys start with '200_' (after the core's '001_' and the templates' '100_'). The dev inbox keeps
 * what the embedded providers "sent"; `delivery_id` is unique, so a redelivered message is stored
 * once and answers with the same provider id (exactly-once at the provider).
 */
export const inboxMigrations: Migrations = {
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
  '201_notify_inbox_provider_id_not_indexed': {
    async up(db: Kysely<unknown>) {
      // Nothing looks a message up by its provider id (receipts match the delivery's), and the ids
      // are UUIDv7s made here: the unique index was one more index entry per message stored.
      await sql`alter table notify_inbox drop constraint if exists notify_inbox_provider_message_id_key`.execute(
        db,
      );
    },
  },
};
