import { sql } from 'kysely';
import type { Clock } from '../../platform/clock.ts';
import type { Db } from '../../platform/db/index.ts';
import type { RetentionPolicy } from '../../platform/jobs/retention.ts';
import type { NotifyDb } from '../tables.ts';

/** How often a batch starts at the front of the index again (as notifications/retention.ts does). */
const RESCAN_MS = 3600_000;
const FRONT = new Date(0);

/**
 * Digest windows (`notify_digests`) whose message was stored (`sent`) longer ago than `keepMs`
 * (NOTIFY_RETENTION, as the notifications: the window's message is one of them), with any items
 * they still hold (`markSent` removes them with the send; a window is removed with whatever is left).
 * Open windows and closed ones whose message is not stored yet are what the `notify.digests` job
 * still acts on: they stay, however old. After its send nothing reads a window: the message's
 * client id (`digest:{windowId}`) is its replay guard, and that lives in `notifications`.
 *
 * `closed_at` is the flush (the close and the message's store are a moment apart; a window stuck
 * `closed` for days is removed a window after its close, once it is sent). Found on the partial
 * index `notify_digests_sent (closed_at, id) where status = 'sent'` (migration 008), oldest first.
 */
export function digestRetention(database: Db, keepMs: number, clock: Clock): RetentionPolicy {
  const db: NotifyDb = database.withTables();
  // Where the last batch stopped, as in notifications/retention.ts: the index's entries of the rows
  // just removed stay until vacuum, and starting at the front walked them again in every batch. A
  // flush closes its windows at one instant, so the next batch starts at that instant (`>=`): the
  // rest of those windows, if a batch ended among them. Once an hour a batch starts at the front
  // again, for windows closed long ago and sent only now (a template that failed for a while).
  let cursor = { after: FRONT, since: 0 };
  const start = (cutoff: Date) => {
    if (cutoff.getTime() - cursor.since >= RESCAN_MS) cursor = { after: FRONT, since: cutoff.getTime() };
    return cursor.after;
  };
  const removable = (after: Date, cutoff: Date) =>
    db
      .selectFrom('notify_digests')
      .where('status', '=', 'sent')
      .where('closed_at', '>=', after)
      .where('closed_at', '<', cutoff);
  return {
    table: 'notify_digests',
    keepMs,
    async removeBatch(cutoff, limit) {
      const old = removable(start(cutoff), cutoff).select('id').orderBy('closed_at').limit(limit);
      const { removed, last } = await db
        .with('old', () => old)
        // `= any(array(…))`: the items' key is probed per window, where `in` hashed the batch
        // against the whole items table (the open windows' events).
        .with('items', (q) =>
          q.deleteFrom('notify_digest_items').where(sql<boolean>`digest_id = any(array(select id from old))`),
        )
        .with('gone', (q) =>
          q
            .deleteFrom('notify_digests')
            .where('id', 'in', q.selectFrom('old').select('id'))
            .returning('closed_at'),
        )
        .selectFrom('gone')
        .select([sql<number>`count(*)::int`.as('removed'), sql<Date | null>`max(closed_at)`.as('last')])
        .executeTakeFirstOrThrow();
      if (last) cursor.after = new Date(last);
      return removed;
    },
    async oldest() {
      const cutoff = new Date(clock.now().getTime() - keepMs);
      const row = await removable(start(cutoff), cutoff)
        .select('closed_at')
        .orderBy('closed_at')
        .limit(1)
        .executeTakeFirst();
      return row?.closed_at ?? undefined;
    },
  };
}
