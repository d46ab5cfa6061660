import { sql } from 'kysely';
import type { Database } from '../platform/db/index.ts';
import { createStatements } from '../platform/db/prepared.ts';
import type { StoredContent } from './content.ts';

export interface PasteRow {
  id: bigint;
  short_url: string;
  content_hash: string;
  content_type: string;
  syntax: string | null;
  created_at: Date;
  expires_at: Date | null;
  user_id: bigint | null;
  views: bigint;
  is_private: boolean;
  password_hash: string | null;
  burn_after_read: boolean;
  delete_token_hash: string;
  size: number;
  deleted_at: Date | null;
  deleted_reason: 'expired' | 'deleted' | 'burned' | null;
}

export type NewPaste = Omit<PasteRow, 'views' | 'deleted_at' | 'deleted_reason' | 'content_hash'>;

export interface UserRow {
  id: bigint;
  email: string;
  created_at: Date;
}

export type PasteRepository = ReturnType<typeof createPasteRepository>;

/**
 * The create statement, the same text for every batch size: the rows travel as one array per
 * column (`unnest`), the compressed blobs as one binary parameter cut by offset. A multi-row
 * VALUES list made PostgreSQL parse, analyse and plan 13 parameters per row, and a text that
 * changes with the batch size cannot be prepared; as a prepared statement its parse and analysis
 * happen once per connection (see bench/README.md, paste-create).
 */
const INSERT_PASTES = `
  with content as (
    insert into paste_contents (hash, data, size, touched_at)
    select c.hash, substring($1::bytea from c.start for c.length), c.size, $6::timestamptz
    from unnest($2::varchar[], $3::int[], $4::int[], $5::int[]) as c(hash, start, length, size)
    on conflict (hash) do update set touched_at = excluded.touched_at
  )
  insert into pastes (id, short_url, content_hash, content_type, syntax, created_at, expires_at, user_id,
                      is_private, password_hash, burn_after_read, delete_token_hash, size)
  select * from unnest($7::bigint[], $8::varchar[], $9::varchar[], $10::varchar[], $11::varchar[],
                       $12::timestamptz[], $13::timestamptz[], $14::bigint[], $15::boolean[], $16::varchar[],
                       $17::boolean[], $18::varchar[], $19::int[])`;

/** SQL of the text sharing service; no rules here (they live in the service). */
export function createPasteRepository(database: Database) {
  const { db } = database;
  const statements = createStatements(db, database.kind === 'postgres');
  return {
    /** Reserves `count` sequence values in one round trip (ids are handed out from memory). */
    async reserveIds(count: number): Promise<bigint[]> {
      const { rows } = await sql<{ id: bigint }>`
        select nextval('paste_id_seq') as id from generate_series(1, ${count})`.execute(db);
      return rows.map((row) => row.id);
    },

    /**
     * Stores pastes and their content (once per hash) in one statement, so no content row is
     * ever left without its paste and a batch of creates costs one commit. On a known hash the
     * upsert bumps touched_at: that takes the row lock, and a concurrent cleanup that wants to
     * delete the blob re-checks `touched_at < cutoff` on the updated row and leaves it alone.
     */
    async insertPastes(items: { paste: NewPaste; content: StoredContent }[], now: Date): Promise<void> {
      // One row per hash: ON CONFLICT DO UPDATE may not touch a row twice in one statement.
      const contents = [...new Map(items.map(({ content }) => [content.hash, content])).values()];
      const starts: number[] = [];
      let offset = 1;
      for (const content of contents) {
        starts.push(offset);
        offset += content.data.length;
      }
      const pastes = items.map(({ paste }) => paste);
      await statements.text('paste_insert', INSERT_PASTES, [
        Buffer.concat(contents.map((content) => content.data)),
        contents.map((content) => content.hash),
        starts,
        contents.map((content) => content.data.length),
        contents.map((content) => content.size),
        now,
        pastes.map((paste) => String(paste.id)),
        pastes.map((paste) => paste.short_url),
        items.map(({ content }) => content.hash),
        pastes.map((paste) => paste.content_type),
        pastes.map((paste) => paste.syntax),
        pastes.map((paste) => paste.created_at),
        pastes.map((paste) => paste.expires_at),
        pastes.map((paste) => (paste.user_id === null ? null : String(paste.user_id))),
        pastes.map((paste) => paste.is_private),
        pastes.map((paste) => paste.password_hash),
        pastes.map((paste) => paste.burn_after_read),
        pastes.map((paste) => paste.delete_token_hash),
        pastes.map((paste) => paste.size),
      ]);
    },

    async findWithContent(
      shortUrl: string,
    ): Promise<(PasteRow & { data: Uint8Array; encoding: string }) | undefined> {
      const { rows } = await sql<PasteRow & { data: Uint8Array; encoding: string }>`
        select p.*, c.data, c.encoding from pastes p join paste_contents c on c.hash = p.content_hash
        where p.short_url = ${shortUrl}`.execute(db);
      return rows[0];
    },

    async find(shortUrl: string): Promise<PasteRow | undefined> {
      const { rows } = await sql<PasteRow>`select * from pastes where short_url = ${shortUrl}`.execute(db);
      return rows[0];
    },

    /** Burn after read: only one reader can win this update; it counts the view in the same write. */
    async burn(id: bigint, now: Date): Promise<boolean> {
      const result = await sql`
        update pastes set deleted_at = ${now}, deleted_reason = 'burned', views = views + 1
        where id = ${id} and deleted_at is null and (expires_at is null or expires_at > ${now})`.execute(db);
      return Number(result.numAffectedRows ?? 0n) === 1;
    },

    async softDelete(id: bigint, now: Date): Promise<boolean> {
      const result = await sql`
        update pastes set deleted_at = ${now}, deleted_reason = 'deleted'
        where id = ${id} and deleted_at is null`.execute(db);
      return Number(result.numAffectedRows ?? 0n) === 1;
    },

    /** Adds batched view counts and returns the new totals (which include other instances' flushes). */
    async addViews(counts: Map<bigint, number>): Promise<{ short_url: string; views: bigint }[]> {
      const ids = [...counts.keys()].map(String);
      const deltas = [...counts.values()];
      const { rows } = await sql<{ short_url: string; views: bigint }>`
        update pastes p set views = p.views + v.n
        from unnest(${ids}::bigint[], ${deltas}::int[]) as v(id, n)
        where p.id = v.id
        returning p.short_url, p.views`.execute(db);
      return rows;
    },

    async insertUser(email: string, apiKeyHash: string, now: Date): Promise<UserRow | undefined> {
      const { rows } = await sql<UserRow>`
        insert into paste_users (email, api_key_hash, created_at) values (${email}, ${apiKeyHash}, ${now})
        on conflict (email) do nothing
        returning id, email, created_at`.execute(db);
      return rows[0];
    },

    async findUserByKeyHash(apiKeyHash: string): Promise<UserRow | undefined> {
      const { rows } = await sql<UserRow>`
        select id, email, created_at from paste_users where api_key_hash = ${apiKeyHash}`.execute(db);
      return rows[0];
    },

    /** A user's live pastes, newest first, keyset-paginated by id. */
    async listUserPastes(userId: bigint, now: Date, limit: number, beforeId?: bigint): Promise<PasteRow[]> {
      const { rows } = await sql<PasteRow>`
        select * from pastes
        where user_id = ${userId} and deleted_at is null and (expires_at is null or expires_at > ${now})
          ${beforeId === undefined ? sql`` : sql`and id < ${beforeId}`}
        order by id desc limit ${limit}`.execute(db);
      return rows;
    },

    /** Cleanup step 1: soft-deletes up to `limit` expired pastes; returns their short_urls. */
    async softDeleteExpired(now: Date, limit: number): Promise<string[]> {
      const { rows } = await sql<{ short_url: string }>`
        update pastes set deleted_at = ${now}, deleted_reason = 'expired'
        where id in (
          select id from pastes
          where deleted_at is null and expires_at is not null and expires_at <= ${now}
          order by expires_at limit ${limit}
          for update skip locked
        )
        returning short_url`.execute(db);
      return rows.map((row) => row.short_url);
    },

    /**
     * Cleanup step 2: hard-deletes up to `limit` pastes soft-deleted before `cutoff`, and in the
     * same transaction the content no other paste references. A blob touched after
     * `touchedBefore` is kept: a create may be about to reference it (it is removed with its
     * last paste later).
     */
    async purgeDeleted(
      cutoff: Date,
      touchedBefore: Date,
      limit: number,
    ): Promise<{ shortUrls: string[]; contentsRemoved: number }> {
      return db.transaction().execute(async (trx) => {
        const { rows } = await sql<{ short_url: string; content_hash: string }>`
          delete from pastes where id in (
            select id from pastes where deleted_at is not null and deleted_at <= ${cutoff}
            order by deleted_at limit ${limit}
            for update skip locked
          )
          returning short_url, content_hash`.execute(trx);
        if (rows.length === 0) return { shortUrls: [], contentsRemoved: 0 };
        const hashes = [...new Set(rows.map((row) => row.content_hash))];
        const removed = await sql`
          delete from paste_contents c
          where c.hash = any(${hashes}::varchar[]) and c.touched_at < ${touchedBefore}
            and not exists (select 1 from pastes p where p.content_hash = c.hash)`.execute(trx);
        return {
          shortUrls: rows.map((row) => row.short_url),
          contentsRemoved: Number(removed.numAffectedRows ?? 0n),
        };
      });
    },

    async contentExists(hash: string): Promise<boolean> {
      const { rows } = await sql`select 1 from paste_contents where hash = ${hash}`.execute(db);
      return rows.length > 0;
    },
  };
}
