import { type Kysely, sql } from 'kysely';
import type { Migration } from '../../platform/db/migrate.ts';

/**
 * End-to-end encrypted pastes (README, *Encrypted pastes*): `encryption` names the envelope's
 * scheme, null for a plain paste. Everything else an encrypted paste needs (iv, salt, iterations)
 * travels inside its envelope, which is stored as the content; no other column is needed, and no
 * column ever holds a key or a password. Nullable without a default: adding it rewrites no rows.
 */
export const encryptionMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`alter table pastes add column encryption varchar(20)
      check (encryption in ('aes-256-gcm'))`.execute(db);
  },
};
