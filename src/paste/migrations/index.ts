import { type Kysely, sql } from 'kysely';
import type { Migrations } from '../../platform/db/migrate.ts';
import { encryptionMigration } from './002_encryption.ts';

/**
 * Tables of the text sharing service. Spec fields keep the spec's names; extras:
 * burn_after_read, delete_token_hash, size, deleted_at/deleted_reason (soft delete).
 * Content lives once per SHA-256 in paste_contents, zstd-compressed; touched_at is bumped by
 * every create that reuses it, which is what stops the cleanup from deleting a blob a
 * concurrent create has just started to reference (see repository.ts). No foreign key from
 * pastes.content_hash: its per-row check (a lookup and a row lock on the blob) slows every
 * insert, and content and paste are written in one statement and removed by the cleanup only
 * when unreferenced.
 */
export const pasteMigrations: Migrations = {
  '001_paste': {
    async up(db: Kysely<unknown>) {
      await sql`create sequence paste_id_seq`.execute(db);
      await sql`
        create table paste_users (
          id bigint generated always as identity primary key,
          email varchar(255) not null unique,
          api_key_hash varchar(64) not null unique,
          created_at timestamptz not null
        )`.execute(db);
      await sql`
        create table paste_contents (
          hash varchar(64) primary key,
          data bytea not null,
          encoding text not null default 'zstd',
          size int not null,
          touched_at timestamptz not null
        )`.execute(db);
      await sql`
        create table pastes (
          id bigint primary key,
          short_url varchar(8) not null unique,
          content_hash varchar(64) not null,
          content_type varchar(50) not null default 'text/plain',
          syntax varchar(50),
          created_at timestamptz not null,
          expires_at timestamptz,
          user_id bigint references paste_users (id),
          views bigint not null default 0,
          is_private boolean not null default false,
          password_hash varchar(255),
          burn_after_read boolean not null default false,
          delete_token_hash varchar(64) not null,
          size int not null,
          deleted_at timestamptz,
          deleted_reason text check (deleted_reason in ('expired', 'deleted', 'burned'))
        )`.execute(db);
      // The cleanup's two scans: live pastes by expiry, soft-deleted ones by deletion time.
      await sql`create index pastes_expiry on pastes (expires_at) where deleted_at is null and expires_at is not null`.execute(
        db,
      );
      await sql`create index pastes_deleted on pastes (deleted_at) where deleted_at is not null`.execute(db);
      await sql`create index pastes_user on pastes (user_id, id) where user_id is not null`.execute(db);
      await sql`create index pastes_content on pastes (content_hash)`.execute(db);
    },
  },
  '002_encryption': encryptionMigration,
};
