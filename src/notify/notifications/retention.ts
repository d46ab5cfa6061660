import { sql } from 'kysely';
import type { Clock } from '../../platform/clock.ts';
import type { Db } from '../../platform/db/index.ts';
import { uuidv7Floor } from '../../platform/ids.ts';
import type { RetentionPolicy } from '../../platform/jobs/retention.ts';
import type { DeliveryStatus } from '../tables.ts';

/**
 * Statuses something may still act on: the worker's claim and the dev inbox's statement take
 * `queued`, `scheduled` and `sending` (delivery/handler.ts `OPEN`), the outbox sweep publishes
 * `queued` and `scheduled` (a scheduled send may fall due long after the window). Every other
 * status is final: `sent` (a late receipt only adds `delivered_at`), `delivered`, `failed`,
 * `skipped`, `rate_limited`, `cancelled` (taken back by its sender), and `dead_lettered` — its dead letter, the only way back to `queued`
 * (redrive), is kept 14 days (DEAD_LETTER_KEEP_MS), under the 30 days here; with a shorter
 * NOTIFY_RETENTION a redrive of a removed delivery finds no row and its message is dropped (logged).
 */
export const OPEN_STATUSES: DeliveryStatus[] = ['queued', 'scheduled', 'sending'];

/**
 * Notifications go with their deliveries and attempts once the notification is older than
 * `keepMs` (NOTIFY_RETENTION) and every delivery is final and was last changed before that too
 * (a send scheduled weeks ahead is kept for the window after it went out).
 *
 * Finding them: notification ids are UUIDv7s made when the notification is accepted, so the
 * primary key is in creation order and `id < uuidv7Floor(cutoff)` is a range of it: no index on
 * `created_at`, which would be one more index entry on the accept's hot insert. `created_at`
 * stays the rule (the id bound is only the way in): a row whose id and clock disagree is removed
 * late, never early. Deliveries and attempts are found on their own keys' first column.
 *
 * Deduplication does not need the removed rows. A client id (body `id`, `Idempotency-Key`)
 * counts as a repeat for 24 h only (accept.ts `DEDUP_WINDOW_MS`), the queue drops a second copy
 * of a message for 24 h, and the platform's idempotency keys live 24 h: the 30-day default
 * keeps every record well past them. A NOTIFY_RETENTION under 24 h (tests, soak runs) shortens
 * the accept's window to it; a queue copy of a removed (final) delivery is dropped by the worker.
 *
 * Migration 002 dropped the deliveries' foreign key because notifications were never deleted;
 * they now are, here only, in the statement that deletes their deliveries, so the key would
 * still guard nothing.
 */
const FRONT = '00000000-0000-0000-0000-000000000000';
const RESCAN_MS = 3600_000;

export function notificationRetention(db: Db, keepMs: number, clock: Clock): RetentionPolicy {
  /**
   * Notifications after `after` and older than `cutoff` with nothing left to do, in id order (a
   * range of the primary key). The deliveries' range is repeated inside, so the anti-join's scan
   * of their key starts there too rather than at its front.
   */
  const removable = (after: string, cutoff: Date) => {
    const bound = uuidv7Floor(cutoff);
    return sql`n.id > ${after}::uuid and n.id < ${bound}::uuid and n.created_at < ${cutoff}
      and not exists (select from notification_deliveries d where d.notification_id = n.id
        and d.notification_id > ${after}::uuid and d.notification_id < ${bound}::uuid
        and (d.status in (${sql.join(OPEN_STATUSES)}) or d.updated_at >= ${cutoff}))`;
  };
  // Where the last batch stopped: the next one starts there, not at the front of the key, whose
  // entries of the rows just removed stay until vacuum and were walked again by every batch, each
  // slower than the last (figures in the README, "Retention"). Once an hour (of the cutoff) a
  // batch starts at the front again, for the rows kept then that are final now.
  let cursor = { after: FRONT, since: 0 };
  const start = (cutoff: Date) => {
    if (cutoff.getTime() - cursor.since >= RESCAN_MS) cursor = { after: FRONT, since: cutoff.getTime() };
    return cursor.after;
  };
  return {
    table: 'notifications',
    keepMs,
    async removeBatch(cutoff, limit) {
      const after = start(cutoff);
      // Raw SQL: a data-modifying CTE, so a notification, its deliveries and its attempts go in one
      // statement (one transaction, row locks for its milliseconds); `= any(array(...))` makes the
      // deletes probe the keys rather than hash the batch against whole tables.
      const { rows } = await sql<{ removed: number; last: string | null }>`with old as (
          select n.id from notifications n where ${removable(after, cutoff)}
          order by n.id limit ${limit}),
        attempts as (delete from notification_attempts where notification_id = any(array(select id from old))),
        deliveries as (delete from notification_deliveries where notification_id = any(array(select id from old))),
        removed as (delete from notifications where id = any(array(select id from old)) returning id)
        select count(*)::int as removed, max(id::text) as last from removed`.execute(db);
      const { removed = 0, last = null } = rows[0] ?? {};
      if (last) cursor.after = last;
      return removed;
    },
    async oldest() {
      // The first removable notification on the primary key from where the batches stopped: the
      // walk passes only the old ones kept on purpose (still open), so it is short; none when the
      // job keeps up.
      const cutoff = new Date(clock.now().getTime() - keepMs);
      const after = start(cutoff);
      // Raw SQL: the same predicate as removeBatch, and the notification's last write.
      const { rows } = await sql<{ at: Date }>`select greatest(n.created_at,
          (select max(d.updated_at) from notification_deliveries d where d.notification_id = n.id)) as at
        from notifications n where ${removable(after, cutoff)}
        order by n.id limit 1`.execute(db);
      return rows[0]?.at ?? undefined;
    },
  };
}
