import { sql } from 'kysely';
import type { BookingDb } from '../tables.ts';

export interface EntryRow {
  user_id: string;
  seq: number;
  status: 'WAITING' | 'ADMITTED' | 'DONE';
  admitted_until: Date | null;
  /** 1-based place among those waiting (WAITING only). */
  position: number | null;
}

/** Queue positions live in PostgreSQL: an entry per (show, user), ordered by a global sequence. */
export function createWaitingRoomRepository(db: BookingDb) {
  return {
    /** Joins the queue, or rejoins at the back when a previous admission was used up or ran out. */
    async join(showId: string, userId: string, now: Date): Promise<void> {
      await sql`
        insert into booking_queue_entries (show_id, user_id, seq, status, joined_at)
        values (${showId}, ${userId}, nextval('booking_queue_seq'), 'WAITING', ${now})
        on conflict (show_id, user_id) do update
          set seq = excluded.seq, status = 'WAITING', joined_at = excluded.joined_at, admitted_at = null, admitted_until = null
          where booking_queue_entries.status = 'DONE'
             or (booking_queue_entries.status = 'ADMITTED' and booking_queue_entries.admitted_until <= ${now})`.execute(
        db,
      );
    },

    /**
     * Admits the longest-waiting users into the free slots (capacity minus live admissions), one
     * admitter per show at a time (advisory lock), so two processes never admit past capacity.
     */
    async admit(showId: string, capacity: number, until: Date, now: Date): Promise<string[]> {
      // Cheap check first: while every slot is taken (the usual state of a hot show), no lock.
      const { rows: live } = await sql<{ n: number }>`select count(*)::int as n from booking_queue_entries
        where show_id = ${showId} and status = 'ADMITTED' and admitted_until > ${now}`.execute(db);
      if ((live[0]?.n ?? 0) >= capacity) return [];
      return db.transaction().execute(async (tx) => {
        await sql`select pg_advisory_xact_lock(hashtextextended(${`booking.queue:${showId}`}, 0))`.execute(
          tx,
        );
        const { rows: active } = await sql<{ n: number }>`select count(*)::int as n from booking_queue_entries
          where show_id = ${showId} and status = 'ADMITTED' and admitted_until > ${now}`.execute(tx);
        const free = capacity - (active[0]?.n ?? 0);
        if (free <= 0) return [];
        const { rows } = await sql<{ user_id: string }>`
          update booking_queue_entries set status = 'ADMITTED', admitted_at = ${now}, admitted_until = ${until}
          where show_id = ${showId} and user_id in (
            select user_id from booking_queue_entries where show_id = ${showId} and status = 'WAITING'
            order by seq limit ${free}
          )
          returning user_id`.execute(tx);
        return rows.map((row) => row.user_id);
      });
    },

    /** Entries of some users with their place in line (one query for every listener of a process). */
    async entries(showId: string, userIds: string[]): Promise<EntryRow[]> {
      const { rows } = await sql<EntryRow>`
        with ranked as (
          select user_id, seq, status, admitted_until,
            case when status = 'WAITING'
              then (row_number() over (partition by status = 'WAITING' order by seq))::int end as position
          from booking_queue_entries where show_id = ${showId}
        )
        select user_id::text as user_id, seq::int8 as seq, status, admitted_until, position
        from ranked where user_id = any(${userIds}::uuid[])`.execute(db);
      return rows.map((row) => ({ ...row, seq: Number(row.seq) }));
    },

    async entry(showId: string, userId: string): Promise<EntryRow | undefined> {
      const { rows } = await sql<EntryRow>`
        select e.user_id::text as user_id, e.seq::int8 as seq, e.status, e.admitted_until,
          case when e.status = 'WAITING' then (select count(*)::int + 1 from booking_queue_entries w
            where w.show_id = e.show_id and w.status = 'WAITING' and w.seq < e.seq) end as position
        from booking_queue_entries e where e.show_id = ${showId} and e.user_id = ${userId}`.execute(db);
      return rows[0] ? { ...rows[0], seq: Number(rows[0].seq) } : undefined;
    },

    /** When the live admissions end, earliest first (for the wait estimate). */
    async admissionEnds(showId: string, now: Date): Promise<Date[]> {
      const { rows } = await sql<{ admitted_until: Date }>`select admitted_until from booking_queue_entries
        where show_id = ${showId} and status = 'ADMITTED' and admitted_until > ${now}
        order by admitted_until`.execute(db);
      return rows.map((row) => row.admitted_until);
    },

    async waitingCount(showId: string): Promise<number> {
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from booking_queue_entries
        where show_id = ${showId} and status = 'WAITING'`.execute(db);
      return rows[0]?.n ?? 0;
    },

    /** The user booked: their slot goes to the next in line. */
    async finish(showId: string, userId: string): Promise<boolean> {
      const result = await sql`update booking_queue_entries set status = 'DONE'
        where show_id = ${showId} and user_id = ${userId} and status = 'ADMITTED'`.execute(db);
      return Number(result.numAffectedRows ?? 0n) > 0;
    },

    async showsWithWaiting(): Promise<string[]> {
      const { rows } = await sql<{ show_id: string }>`select distinct show_id from booking_queue_entries
        where status = 'WAITING'`.execute(db);
      return rows.map((row) => row.show_id);
    },
  };
}

export type WaitingRoomRepository = ReturnType<typeof createWaitingRoomRepository>;
