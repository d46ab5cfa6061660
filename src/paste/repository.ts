import { sql } from 'kysely';
import type { Database } from '../platform/db/index.ts';
import { createStatements } from '../platform/db/prepared.ts';
import type { StoredContent } from './content.ts';
import type { NewPaste, PasteDb, PasteRow, PasteTables, UserRow } from './tables.ts';

export type PasteRepository = ReturnType<typeof createPasteRepository>;

/**
 * The create statement, the same text for every batch size: the rows travel as one array per
 * column (`unnest`), the compressed blobs as one binary parameter cut by offset. A multi-row
 * VALUES list made PostgreSQL parse, analyse and plan 13 parameters per row, and a text that
 * changes with the batch size cannot be prepared; as a prepared statement its parse and analysis
 * happen once per connection (see bench/README.md, paste-create).
 */
// Raw SQL: a bulk unnest insert of content and pastes in one prepared statement whose text no batch size changes.
const INSERT_PASTES = `
  with content as (
    insert into paste_contents (hash, data, size, touched_at)
    select c.hash, substring($1::bytea from c.start for c.length), c.size, $6::timestamptz
    from unnest($2::varchar[], $3::int[], $4::int[], $5::int[]) as c(hash, start, length, size)
    on conflict (hash) do update set touched_at = excluded.touched_at
  )
  insert into pastes (id, short_url, content_hash, content_type, syntax, created_at, expires_at, user_id,
                      is_private, password_hash, burn_after_read, delete_token_hash, size, encryption)
  select * from unnest($7::bigint[], $8::varchar[], $9::varchar[], $10::varchar[], $11::varchar[],
                       $12::timestamptz[], $13::timestamptz[], $14::bigint[], $15::boolean[], $16::varchar[],
                       $17::boolean[], $18::varchar[], $19::int[], $20::varchar[])`;

/** SQL of the text sharing service; no rules here (they live in the service). */
export function createPasteRepository(database: Database) {
  const db: PasteDb = database.db.withTables<PasteTables>();
  const statements = createStatements(db, database.kind === 'postgres');
  return {
    /** Reserves `count` sequence values in one round trip (ids are handed out from memory). */
    async reserveIds(count: number): Promise<bigint[]> {
      const rows = await db
        .selectFrom(sql<{ n: number }>`generate_series(1, ${count})`.as('n'))
        .select(sql<bigint>`nextval('paste_id_seq')`.as('id'))
        .execute();
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
        pastes.map((paste) => paste.encryption ?? null),
      ]);
    },

    async findWithContent(
      shortUrl: string,
    ): Promise<(PasteRow & { data: Uint8Array; encoding: string }) | undefined> {
      return db
        .selectFrom('pastes as p')
        .innerJoin('paste_contents as c', 'c.hash', 'p.content_hash')
        .selectAll('p')
        .select(['c.data', 'c.encoding'])
        .where('p.short_url', '=', shortUrl)
        .executeTakeFirst();
    },

    async find(shortUrl: string): Promise<PasteRow | undefined> {
      return db.selectFrom('pastes').selectAll().where('short_url', '=', shortUrl).executeTakeFirst();
    },

    /** Burn after read: only one reader can win this update; it counts the view in the same write. */
    async burn(id: bigint, now: Date): Promise<boolean> {
      const result = await db
        .updateTable('pastes')
        .set({ deleted_at: now, deleted_reason: 'burned', views: sql`views + 1` })
        .where('id', '=', id)
        .where('deleted_at', 'is', null)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
        .executeTakeFirst();
      return result.numUpdatedRows === 1n;
    },

    async softDelete(id: bigint, now: Date): Promise<boolean> {
      const result = await db
        .updateTable('pastes')
        .set({ deleted_at: now, deleted_reason: 'deleted' })
        .where('id', '=', id)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      return result.numUpdatedRows === 1n;
    },

    /** Adds batched view counts and returns the new totals (which include other instances' flushes). */
    async addViews(counts: Map<bigint, number>): Promise<{ short_url: string; views: bigint }[]> {
      const ids = [...counts.keys()].map(String);
      const deltas = [...counts.values()];
      // Raw SQL: one update of many rows by id, with each row's own increment, from unnest.
      const { rows } = await sql<{ short_url: string; views: bigint }>`
        update pastes p set views = p.views + v.n
        from unnest(${ids}::bigint[], ${deltas}::int[]) as v(id, n)
        where p.id = v.id
        returning p.short_url, p.views`.execute(db);
      return rows;
    },

    async insertUser(email: string, apiKeyHash: string, now: Date): Promise<UserRow | undefined> {
      return db
        .insertInto('paste_users')
        .values({ email, api_key_hash: apiKeyHash, created_at: now })
        .onConflict((conflict) => conflict.column('email').doNothing())
        .returning(['id', 'email', 'created_at'])
        .executeTakeFirst();
    },

    async findUserByKeyHash(apiKeyHash: string): Promise<UserRow | undefined> {
      return db
        .selectFrom('paste_users')
        .select(['id', 'email', 'created_at'])
        .where('api_key_hash', '=', apiKeyHash)
        .executeTakeFirst();
    },

    /** A user's live pastes, newest first, keyset-paginated by id. */
    async listUserPastes(userId: bigint, now: Date, limit: number, beforeId?: bigint): Promise<PasteRow[]> {
      let query = db
        .selectFrom('pastes')
        .selectAll()
        .where('user_id', '=', userId)
        .where('deleted_at', 'is', null)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
      if (beforeId !== undefined) query = query.where('id', '<', beforeId);
      return query.orderBy('id', 'desc').limit(limit).execute();
    },

    /** Cleanup step 1: soft-deletes up to `limit` expired pastes; returns their short_urls. */
    async softDeleteExpired(now: Date, limit: number): Promise<string[]> {
      const expired = db
        .selectFrom('pastes')
        .select('id')
        .where('deleted_at', 'is', null)
        .where('expires_at', 'is not', null)
        .where('expires_at', '<=', now)
        .orderBy('expires_at')
        .limit(limit)
        .forUpdate()
        .skipLocked();
      const rows = await db
        .updateTable('pastes')
        .set({ deleted_at: now, deleted_reason: 'expired' })
        .where('id', 'in', expired)
        .returning('short_url')
        .execute();
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
        const purgeable = trx
          .selectFrom('pastes')
          .select('id')
          .where('deleted_at', 'is not', null)
          .where('deleted_at', '<=', cutoff)
          .orderBy('deleted_at')
          .limit(limit)
          .forUpdate()
          .skipLocked();
        const rows = await trx
          .deleteFrom('pastes')
          .where('id', 'in', purgeable)
          .returning(['short_url', 'content_hash'])
          .execute();
        if (rows.length === 0) return { shortUrls: [], contentsRemoved: 0 };
        const hashes = [...new Set(rows.map((row) => row.content_hash))];
        const removed = await trx
          .deleteFrom('paste_contents as c')
          .where('c.hash', '=', sql<string>`any(${hashes}::varchar[])`)
          .where('c.touched_at', '<', touchedBefore)
          .where((eb) =>
            eb.not(
              eb.exists(
                eb
                  .selectFrom('pastes as p')
                  .select(sql`1`.as('one'))
                  .whereRef('p.content_hash', '=', 'c.hash'),
              ),
            ),
          )
          .executeTakeFirst();
        return {
          shortUrls: rows.map((row) => row.short_url),
          contentsRemoved: Number(removed.numDeletedRows),
        };
      });
    },
  };
}
