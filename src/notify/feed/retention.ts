import { sql } from 'kysely';
import type { Clock } from '../../platform/clock.ts';
import type { Db } from '../../platform/db/index.ts';
import type { RetentionPolicy } from '../../platform/jobs/retention.ts';
import type { NotifyDb } from '../tables.ts';

/**
 * The in-app feed's retention (README, "Retention"): every item goes `keepMs` after it arrived
 * (NOTIFY_FEED_RETENTION, 90 days), read or not, and an archived one `archivedKeepMs` after it was
 * archived (NOTIFY_FEED_ARCHIVED_RETENTION, 30 days), whichever comes first. The unread count is
 * counted from the rows at every read, so it falls with the unread items removed and never
 * disagrees with the list; a page left open shows the new count at its next read or mark.
 */
export function feedRetention(
  database: Db,
  options: { keepMs: number; archivedKeepMs: number; clock: Clock },
): RetentionPolicy[] {
  const db: NotifyDb = database.withTables();
  return [
    oldestFirst(db, 'notify_feed', 'created_at', options.keepMs, options.clock),
    oldestFirst(db, 'notify_feed_archived', 'archived_at', options.archivedKeepMs, options.clock),
  ];
}

/**
 * Items whose `column` lies before the cutoff, oldest first on that column's index (migration 301:
 * `notify_feed_created`, and `notify_feed_archived`, partial on archived items). Each batch starts
 * where the last one stopped (`>=`, for items of one instant split between batches): the index's
 * entries of the rows just removed stay until vacuum, and a batch from the front walked them all
 * again. Nothing lands behind the cursor: both columns are set to the time of the write, and an
 * item taken out of the archive and archived again gets a new `archived_at`.
 */
function oldestFirst(
  db: NotifyDb,
  table: string,
  column: 'created_at' | 'archived_at',
  keepMs: number,
  clock: Clock,
): RetentionPolicy {
  let after = new Date(0);
  const removable = (cutoff: Date) =>
    db
      .selectFrom('notify_feed')
      .where(column, 'is not', null)
      .where(column, '>=', after)
      .where(column, '<', cutoff);
  return {
    table,
    keepMs,
    async removeBatch(cutoff, limit) {
      const { removed, last } = await db
        .with('gone', (q) =>
          q
            .deleteFrom('notify_feed')
            .where('seq', 'in', removable(cutoff).select('seq').orderBy(column).limit(limit))
            .returning(column),
        )
        .selectFrom('gone')
        .select([
          sql<number>`count(*)::int`.as('removed'),
          sql<Date | null>`max(${sql.ref(column)})`.as('last'),
        ])
        .executeTakeFirstOrThrow();
      if (last) after = new Date(last);
      return removed;
    },
    async oldest() {
      const cutoff = new Date(clock.now().getTime() - keepMs);
      const row = await removable(cutoff).select(column).orderBy(column).limit(1).executeTakeFirst();
      return row?.[column] ?? undefined;
    },
  };
}
