import { sql } from 'kysely';
import type { Db } from '../../platform/db/index.ts';
import type { FeedRow, NotifyDb } from '../tables.ts';

/** What the feed provider stores: one in-app delivery, rendered. */
export interface FeedEntry {
  notificationId: string;
  userId: string;
  type: string;
  title: string;
  body: string;
  link: string | null;
  at: Date;
}

/** Which items a page lists: the feed without archived items (default), only unread, only archived. */
export type FeedFilter = 'active' | 'unread' | 'archived';
export type FeedMark = 'seen' | 'read' | 'unread' | 'archived' | 'unarchived';

/** SQL only: the in-app feed (rules in service.ts). */
export function createFeedRepository(database: Db) {
  const db: NotifyDb = database.withTables();

  /** The columns each mark sets; `read` implies `seen`, as a reader has seen what they read. */
  const marks = (mark: FeedMark, now: Date) => {
    switch (mark) {
      case 'seen':
        return { seen_at: sql<Date>`coalesce(seen_at, ${now})` };
      case 'read':
        return {
          seen_at: sql<Date>`coalesce(seen_at, ${now})`,
          read_at: sql<Date>`coalesce(read_at, ${now})`,
        };
      case 'unread':
        return { read_at: null };
      case 'archived':
        return { archived_at: sql<Date>`coalesce(archived_at, ${now})` };
      case 'unarchived':
        return { archived_at: null };
    }
  };

  return {
    /**
     * Stores an in-app delivery once: a repeat of the notification (a redelivered queue message)
     * answers the stored row's `seq`. A per-user transaction lock makes a user's `seq` follow the
     * order their items commit in, so a reader that has seen `seq` n never misses a later commit
     * with a smaller one (the realtime and batch lanes may write one user's items at once).
     */
    async store(entry: FeedEntry): Promise<{ seq: string; created: boolean }> {
      return db.transaction().execute(async (tx) => {
        await sql`select pg_advisory_xact_lock(hashtext(${`notify_feed:${entry.userId}`}))`.execute(tx);
        const inserted = await tx
          .insertInto('notify_feed')
          .values({
            notification_id: entry.notificationId,
            user_id: entry.userId,
            type: entry.type,
            title: entry.title,
            body: entry.body,
            link: entry.link,
            created_at: entry.at,
          })
          .onConflict((conflict) => conflict.column('notification_id').doNothing())
          .returning('seq')
          .executeTakeFirst();
        if (inserted) return { seq: String(inserted.seq), created: true };
        const stored = await tx
          .selectFrom('notify_feed')
          .select('seq')
          .where('notification_id', '=', entry.notificationId)
          .executeTakeFirstOrThrow();
        return { seq: String(stored.seq), created: false };
      });
    },

    /** Newest first, `before` a seq (keyset), at most `limit`. */
    async page(userId: string, filter: FeedFilter, limit: number, before?: string): Promise<FeedRow[]> {
      let query = db.selectFrom('notify_feed').selectAll().where('user_id', '=', userId);
      if (filter === 'active') query = query.where('archived_at', 'is', null);
      if (filter === 'unread') query = query.where('archived_at', 'is', null).where('read_at', 'is', null);
      if (filter === 'archived') query = query.where('archived_at', 'is not', null);
      if (before !== undefined) query = query.where('seq', '<', before);
      return query.orderBy('seq', 'desc').limit(limit).execute();
    },

    /** Oldest first, after a seq: what a live stream has not sent yet. */
    async after(userId: string, seq: string, limit: number): Promise<FeedRow[]> {
      return db
        .selectFrom('notify_feed')
        .selectAll()
        .where('user_id', '=', userId)
        .where('seq', '>', seq)
        .orderBy('seq', 'asc')
        .limit(limit)
        .execute();
    },

    /** The user's newest seq ('0' for an empty feed): where a live stream without Last-Event-ID starts. */
    async lastSeq(userId: string): Promise<string> {
      const row = await db
        .selectFrom('notify_feed')
        .select(sql<string | null>`max(seq)::text`.as('seq'))
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return row?.seq ?? '0';
    },

    async unread(userId: string): Promise<number> {
      const row = await db
        .selectFrom('notify_feed')
        .select(sql<number>`count(*)::int`.as('count'))
        .where('user_id', '=', userId)
        .where('read_at', 'is', null)
        .where('archived_at', 'is', null)
        .executeTakeFirstOrThrow();
      return row.count;
    },

    async item(userId: string, id: string): Promise<FeedRow | undefined> {
      return db
        .selectFrom('notify_feed')
        .selectAll()
        .where('notification_id', '=', id)
        .where('user_id', '=', userId)
        .executeTakeFirst();
    },

    /** One item; undefined when the user has no such item. */
    async markOne(userId: string, id: string, mark: FeedMark, now: Date): Promise<FeedRow | undefined> {
      return db
        .updateTable('notify_feed')
        .set(marks(mark, now))
        .where('notification_id', '=', id)
        .where('user_id', '=', userId)
        .returningAll()
        .executeTakeFirst();
    },

    /**
     * Every item of the user up to `seq` (inclusive) that the mark changes: "mark all as read" up to
     * what the reader saw, so an item that arrived meanwhile stays unread. Answers how many changed.
     */
    async markUpTo(userId: string, seq: string, mark: FeedMark, now: Date): Promise<number> {
      const column = {
        seen: 'seen_at',
        read: 'read_at',
        unread: 'read_at',
        archived: 'archived_at',
        unarchived: 'archived_at',
      } as const;
      const setting = mark === 'seen' || mark === 'read' || mark === 'archived';
      const result = await db
        .updateTable('notify_feed')
        .set(marks(mark, now))
        .where('user_id', '=', userId)
        .where('seq', '<=', seq)
        .where(column[mark], setting ? 'is' : 'is not', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
  };
}

export type FeedRepository = ReturnType<typeof createFeedRepository>;
