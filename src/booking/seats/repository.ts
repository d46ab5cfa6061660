import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import type { BookingDb, HoldStatus } from '../tables.ts';

export interface HoldRow {
  id: string;
  show_id: string;
  user_id: string;
  seat_ids: string[];
  seats: string[];
  total_minor: number;
  status: HoldStatus;
  expires_at: Date;
  created_at: Date;
  released_at: Date | null;
  release_reason: string | null;
}

export interface NewHold {
  id: string;
  show_id: string;
  user_id: string;
  seat_ids: string[];
  seats: string[];
  total_minor: number;
  expires_at: Date;
  created_at: Date;
}

/** Seats the claim could not take; `closed` when the show's inventory is closed (cancelled). */
export interface ClaimResult {
  /** Seat ids it could not claim, with when their hold ends (Infinity when booked or closed). */
  taken: { id: string; until: number }[];
  closed: boolean;
}

export interface SeatStateRow {
  seat_id: string;
  status: 'AVAILABLE' | 'HELD' | 'BOOKED' | 'CLOSED';
  held_until: Date | null;
}

const HOLD_COLUMNS = sql`id, show_id, user_id, seat_ids::text[] as seat_ids, seats, total_minor::int8 as total_minor,
  status, expires_at, created_at, released_at, release_reason`;

export function createSeatsRepository(db: BookingDb, options: { unsafeNoArbiter: boolean }) {
  return {
    async seatStates(showId: string): Promise<SeatStateRow[]> {
      const { rows } = await sql<SeatStateRow>`select seat_id, status, held_until from booking_show_seats
        where show_id = ${showId} and status <> 'AVAILABLE'`.execute(db);
      return rows;
    },

    /**
     * The arbiter, one statement (one round trip, one commit). `wanted` locks the requested seat
     * rows in seat order (so concurrent holds never deadlock) and, having waited for any
     * transaction holding them, sees their latest committed state; `verdict` is true only if
     * every seat exists and is free (AVAILABLE, or HELD by a hold that has expired). Only then does
     * the UPDATE claim them all and the hold row get inserted; otherwise nothing is written.
     * Concurrent claims of a seat queue on its row lock, and the loser sees the winner's hold.
     * Holds commit asynchronously (`synchronous_commit` off for this transaction only): a database
     * crash may forget the last moment's holds, whole (their seats free again), never half of one
     * and never a booking or payment — and it saves the WAL flush that otherwise caps throughput.
     * Returns the seat ids it could not claim (empty on success).
     */
    async claimSeats(hold: NewHold, now: Date): Promise<ClaimResult> {
      if (options.unsafeNoArbiter) return claimSeatsUnsafely(db, hold, now);
      const { rows } = await sql<{ ok: boolean; taken: string[]; taken_until: number[]; closed: boolean }>`
        with settings as (select set_config('synchronous_commit', 'off', true)),
        wanted as (
          select seat_id, status, held_until,
            (status = 'AVAILABLE' or (status = 'HELD' and held_until <= ${now})) as free
          from booking_show_seats
          where show_id = ${hold.show_id} and seat_id = any(${hold.seat_ids}::uuid[])
          order by seat_id
          for update
        ),
        verdict as (
          select count(*) filter (where free) = ${hold.seat_ids.length} as ok from wanted, settings
        ),
        claimed as (
          update booking_show_seats ss set status = 'HELD', hold_id = ${hold.id}, held_until = ${hold.expires_at}
          from verdict
          where verdict.ok and ss.show_id = ${hold.show_id} and ss.seat_id = any(${hold.seat_ids}::uuid[])
          returning ss.seat_id
        ),
        inserted as (
          insert into booking_holds (id, show_id, user_id, seat_ids, seats, total_minor, status, expires_at, created_at)
          select ${hold.id}, ${hold.show_id}, ${hold.user_id}, ${hold.seat_ids}::uuid[], ${hold.seats}::text[],
            ${hold.total_minor}, 'HELD', ${hold.expires_at}, ${hold.created_at}
          from verdict where verdict.ok
          returning id
        )
        select coalesce((select ok from verdict), false) and (select count(*) from claimed) = ${hold.seat_ids.length}
            and (select count(*) from inserted) = 1 as ok,
          array(select seat_id::text from wanted where not free order by seat_id) as taken,
          array(select case when status = 'HELD' then extract(epoch from held_until)::float8 * 1000
              else 'Infinity'::float8 end
            from wanted where not free order by seat_id) as taken_until,
          exists (select 1 from wanted where status = 'CLOSED') as closed`.execute(db);
      const result = rows[0];
      if (result?.ok) return { taken: [], closed: false };
      // Seats missing from the inventory altogether count as taken too (they are not the hold's).
      const taken =
        result.taken.length > 0
          ? result.taken.map((id, index) => ({ id, until: Number(result.taken_until[index]) }))
          : hold.seat_ids.map((id) => ({ id, until: 0 }));
      return { taken, closed: result.closed };
    },

    async findHold(id: string): Promise<HoldRow | undefined> {
      const { rows } = await sql<HoldRow>`select ${HOLD_COLUMNS} from booking_holds where id = ${id}`.execute(
        db,
      );
      return rows[0] ? normalise(rows[0]) : undefined;
    },

    /** Releases a HELD hold (user cancelled it, payment failed or timed out); false when not HELD. */
    async releaseHold(id: string, reason: string, now: Date): Promise<{ show_id: string } | undefined> {
      const { rows } = await sql<{ show_id: string }>`
        with released as (
          update booking_holds set status = 'RELEASED', released_at = ${now}, release_reason = ${reason}
          where id = ${id} and status = 'HELD'
          returning id, show_id, seat_ids
        ), freed as (
          update booking_show_seats ss set status = 'AVAILABLE', hold_id = null, held_until = null
          from released
          where ss.show_id = released.show_id and ss.seat_id = any(released.seat_ids) and ss.hold_id = released.id
            and ss.status = 'HELD'
          returning ss.seat_id
        )
        select show_id, (select count(*) from freed) as freed from released`.execute(db);
      return rows[0];
    },

    /**
     * The sweeper: marks holds past their expiry EXPIRED and frees the seats that are still theirs
     * (a seat may already belong to a newer hold, which took it the moment this one expired).
     */
    async expireHolds(now: Date, limit = 1000): Promise<{ holds: number; showIds: string[] }> {
      const { rows } = await sql<{ show_id: string; holds: number }>`
        with expired as (
          update booking_holds set status = 'EXPIRED', released_at = ${now}, release_reason = 'expired'
          where id in (
            select id from booking_holds where status = 'HELD' and expires_at <= ${now}
            order by expires_at limit ${limit} for update skip locked
          )
          returning id, show_id, seat_ids
        ), freed as (
          update booking_show_seats ss set status = 'AVAILABLE', hold_id = null, held_until = null
          from expired
          where ss.show_id = expired.show_id and ss.seat_id = any(expired.seat_ids) and ss.hold_id = expired.id
            and ss.status = 'HELD'
          returning ss.seat_id
        )
        select show_id, count(*)::int as holds, (select count(*) from freed) as freed from expired group by show_id`.execute(
        db,
      );
      return {
        holds: rows.reduce((sum, row) => sum + row.holds, 0),
        showIds: rows.map((row) => row.show_id),
      };
    },

    /** Keeps a hold's seats while its payment is in flight (never shortens it). */
    async extendHold(id: string, until: Date): Promise<void> {
      await sql`
        with extended as (
          update booking_holds set expires_at = greatest(expires_at, ${until}) where id = ${id} and status = 'HELD'
          returning id, show_id, seat_ids
        )
        update booking_show_seats ss set held_until = greatest(ss.held_until, ${until})
        from extended e
        where ss.show_id = e.show_id and ss.seat_id = any(e.seat_ids) and ss.hold_id = e.id and ss.status = 'HELD'`.execute(
        db,
      );
    },

    /** Audit: seats claimed by more than one live hold or booking, and live holds missing seats. */
    async integrity(showId: string, now: Date) {
      const { rows } = await sql<{
        double_booked: number;
        incomplete: number;
        held: number;
        booked: number;
        live_holds: number;
      }>`
        with live as (
          select id, unnest(seat_ids) as seat_id from booking_holds
          where show_id = ${showId} and (status = 'BOOKED' or (status = 'HELD' and expires_at > ${now}))
        )
        select
          (select count(*)::int from (select seat_id from live group by seat_id having count(*) > 1) d) as double_booked,
          (select count(*)::int from live l where not exists (
            select 1 from booking_show_seats ss where ss.show_id = ${showId} and ss.seat_id = l.seat_id and ss.hold_id = l.id
          )) as incomplete,
          (select count(*)::int from booking_show_seats where show_id = ${showId} and status = 'HELD' and held_until > ${now}) as held,
          (select count(*)::int from booking_show_seats where show_id = ${showId} and status = 'BOOKED') as booked,
          (select count(distinct id)::int from live) as live_holds`.execute(db);
      return rows[0];
    },
  };
}

/**
 * TEST ONLY (BOOKING_UNSAFE_NO_ARBITER=1): the naive check-then-write, with a pause between check
 * and write so the race test's negative control reliably shows what happens without the arbiter.
 */
async function claimSeatsUnsafely(db: BookingDb, hold: NewHold, now: Date): Promise<ClaimResult> {
  const { rows } = await sql<{ seat_id: string }>`select seat_id::text as seat_id from booking_show_seats
    where show_id = ${hold.show_id} and seat_id = any(${hold.seat_ids}::uuid[])
      and (status = 'AVAILABLE' or (status = 'HELD' and held_until <= ${now}))`.execute(db);
  const free = new Set(rows.map((row) => row.seat_id));
  const taken = hold.seat_ids.filter((id) => !free.has(id));
  if (taken.length > 0) return { taken: taken.map((id) => ({ id, until: 0 })), closed: false };
  await sleep(20);
  await sql`update booking_show_seats set status = 'HELD', hold_id = ${hold.id}, held_until = ${hold.expires_at}
    where show_id = ${hold.show_id} and seat_id = any(${hold.seat_ids}::uuid[])`.execute(db);
  await sql`insert into booking_holds (id, show_id, user_id, seat_ids, seats, total_minor, status, expires_at, created_at)
    values (${hold.id}, ${hold.show_id}, ${hold.user_id}, ${hold.seat_ids}::uuid[], ${hold.seats}::text[],
      ${hold.total_minor}, 'HELD', ${hold.expires_at}, ${hold.created_at})`.execute(db);
  return { taken: [], closed: false };
}

function normalise(row: HoldRow): HoldRow {
  return { ...row, total_minor: Number(row.total_minor) };
}

export type SeatsRepository = ReturnType<typeof createSeatsRepository>;
