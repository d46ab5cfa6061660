import { sql } from 'kysely';
import type { Db } from '../platform/db/index.ts';
import type { RetentionPolicy } from '../platform/jobs/retention.ts';
import type { BookingRetentionSettings } from './settings.ts';
import type { BookingDb, BookingTables } from './tables.ts';

/** The longest lead of a reminder (24 h before the show): a reminder is never sent earlier. */
const REMINDER_LEAD_MS = 24 * 3_600_000;

/**
 * The booking tables that grow with traffic, each with what it keeps (README, "Retention").
 * Bookings, their payments and the shows themselves are business records and are not here.
 * `booking_hold_users` is not either: one row per user who ever held, the change counter a
 * concurrent claim compares and the bound on the user's live holds, which a delete would reset
 * (README).
 */
export function bookingRetention(database: Db, windows: BookingRetentionSettings): RetentionPolicy[] {
  const db: BookingDb = database.withTables<BookingTables>();
  return [
    endedHolds(db, windows.holdsMs),
    queueEntries(db, windows.queueMs),
    showSeats(db, windows.showSeatsMs),
    reminders(db, windows.remindersMs),
  ];
}

/**
 * Holds that ended (RELEASED, EXPIRED) more than the window ago and that no booking references.
 * A hold a booking references (its booking failed or was cancelled) stays with the booking: the
 * first batch that passes it marks it `retained`, which takes it out of the partial index the
 * batches read, so they never read the kept history again.
 */
function endedHolds(db: BookingDb, keepMs: number): RetentionPolicy {
  // Raw SQL: one statement reads a batch of ended holds, deletes the free ones and marks the booked ones (CTEs).
  const batch = (cutoff: Date, limit: number) =>
    sql<{ scanned: number; removed: number }>`
      with scanned as (
        select h.id, exists (select 1 from booking_bookings b where b.hold_id = h.id) as booked
        from booking_holds h
        where h.status in ('RELEASED', 'EXPIRED') and not h.retained and h.released_at < ${cutoff}
        order by h.released_at
        limit ${limit}
      ), removed as (
        delete from booking_holds h using scanned s
        where h.id = s.id and not s.booked and h.status in ('RELEASED', 'EXPIRED')
        returning 1
      ), retained as (
        update booking_holds h set retained = true from scanned s where h.id = s.id and s.booked
        returning 1
      )
      select (select count(*)::int from scanned) as scanned, (select count(*)::int from removed) as removed,
        (select count(*)::int from retained) as retained`.execute(db);
  return {
    table: 'booking_holds',
    keepMs,
    async removeBatch(cutoff, limit) {
      // Holds marked instead of removed do not count: go on until `limit` are removed or none are left.
      let removed = 0;
      while (removed < limit) {
        const wanted = limit - removed;
        const { rows } = await batch(cutoff, wanted);
        removed += rows[0].removed;
        if (rows[0].scanned < wanted) break;
      }
      return removed;
    },
    async oldest() {
      const row = await db
        .selectFrom('booking_holds')
        .select((eb) => eb.fn.min('released_at').as('at'))
        .where('status', 'in', ['RELEASED', 'EXPIRED'])
        .where('retained', '=', false)
        .executeTakeFirst();
      return row?.at ?? undefined;
    },
  };
}

/**
 * Waiting-room entries of shows that ended, and entries whose admission ended (DONE, or ADMITTED
 * and run out), more than the window ago. Removing one changes no answer: a user without an
 * entry stands where a DONE or run-out one does, and joining again puts them at the back either way.
 */
function queueEntries(db: BookingDb, keepMs: number): RetentionPolicy {
  return {
    table: 'booking_queue_entries',
    keepMs,
    async removeBatch(cutoff, limit) {
      const result = await db
        .deleteFrom('booking_queue_entries as e')
        .using('booking_shows as s')
        .whereRef('s.id', '=', 'e.show_id')
        // On the target row, so a rejoin (WAITING again) committed meanwhile is re-checked and kept.
        .where((eb) =>
          eb.or([
            eb('s.end_time', '<', cutoff),
            eb.and([eb('e.status', '<>', 'WAITING'), eb('e.admitted_until', '<', cutoff)]),
          ]),
        )
        .where(({ eb, refTuple, selectFrom }) =>
          eb(
            refTuple('e.show_id', 'e.user_id'),
            'in',
            selectFrom('booking_queue_entries as q')
              .innerJoin('booking_shows as qs', 'qs.id', 'q.show_id')
              .select(['q.show_id', 'q.user_id'])
              .where((inner) =>
                inner.or([
                  inner('qs.end_time', '<', cutoff),
                  inner.and([inner('q.status', '<>', 'WAITING'), inner('q.admitted_until', '<', cutoff)]),
                ]),
              )
              .limit(limit)
              .$asTuple('show_id', 'user_id'),
          ),
        )
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
    async oldest() {
      // When each entry became removable: its show's end, or its admission's when that came first.
      const row = await db
        .selectFrom('booking_queue_entries as e')
        .innerJoin('booking_shows as s', 's.id', 'e.show_id')
        .select(
          sql<Date | null>`min(case when e.status = 'WAITING' then s.end_time
            else least(s.end_time, e.admitted_until) end)`.as('at'),
        )
        .executeTakeFirst();
      return row?.at ?? undefined;
    },
  };
}

/**
 * The seat inventory of shows that ended more than the window ago, whole shows at a time: each
 * statement takes shows (oldest end first) until their seats reach `limit`, marks them
 * `inventory_removed_at` and deletes their rows, so a show's inventory is there or gone, never
 * half. The marked shows leave the partial index the batches read (shows are kept for ever).
 */
function showSeats(db: BookingDb, keepMs: number): RetentionPolicy {
  return {
    table: 'booking_show_seats',
    keepMs,
    async removeBatch(cutoff, limit) {
      const removedAt = new Date(cutoff.getTime() + keepMs);
      // Raw SQL: shows picked by a running sum of their seats, marked and emptied in one statement (CTEs).
      const { rows } = await sql<{ removed: number }>`
        with due as (
          select id, screen_id, end_time from booking_shows
          where inventory_removed_at is null and end_time < ${cutoff}
          order by end_time, id
          limit ${limit}
        ), sized as (
          select due.id, sum(sc.total_seats) over (order by due.end_time, due.id) - sc.total_seats as before
          from due join booking_screens sc on sc.id = due.screen_id
        ), marked as (
          update booking_shows s set inventory_removed_at = ${removedAt}
          from sized
          where s.id = sized.id and sized.before < ${limit} and s.inventory_removed_at is null
          returning s.id
        ), removed as (
          delete from booking_show_seats ss using marked where ss.show_id = marked.id
          returning 1
        )
        select count(*)::int as removed from removed`.execute(db);
      return rows[0].removed;
    },
    async oldest() {
      const row = await db
        .selectFrom('booking_shows')
        .select((eb) => eb.fn.min('end_time').as('at'))
        .where('inventory_removed_at', 'is', null)
        .executeTakeFirst();
      return row?.at ?? undefined;
    },
  };
}

/**
 * Sent reminders, read only while their show is ahead (`dueReminders`). A reminder is sent at
 * most 24 h before its show, so `sent_at + 24 h` is no earlier than the show's start: a row goes
 * once that is more than the window ago, found by its `sent_at` index without a join.
 */
function reminders(db: BookingDb, keepMs: number): RetentionPolicy {
  return {
    table: 'booking_reminders',
    keepMs,
    async removeBatch(cutoff, limit) {
      const sentBefore = new Date(cutoff.getTime() - REMINDER_LEAD_MS);
      const result = await db
        .deleteFrom('booking_reminders')
        .where('sent_at', '<', sentBefore)
        .where(({ eb, refTuple, selectFrom }) =>
          eb(
            refTuple('booking_id', 'kind'),
            'in',
            selectFrom('booking_reminders as r')
              .select(['r.booking_id', 'r.kind'])
              .where('r.sent_at', '<', sentBefore)
              .orderBy('r.sent_at')
              .limit(limit)
              .$asTuple('booking_id', 'kind'),
          ),
        )
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
    async oldest() {
      const row = await db
        .selectFrom('booking_reminders')
        .select((eb) => eb.fn.min('sent_at').as('at'))
        .executeTakeFirst();
      return row?.at ? new Date(row.at.getTime() + REMINDER_LEAD_MS) : undefined;
    },
  };
}
