import { type Selectable, sql } from 'kysely';
import type { Db } from '../../platform/db/index.ts';
import type { BookingDb, BookingTables } from '../tables.ts';

type QueueEntry = Selectable<BookingTables['booking_queue_entries']>;

export type EntryRow = Pick<QueueEntry, 'user_id' | 'status' | 'admitted_until'> & {
  seq: number;
  /** 1-based place among those waiting (WAITING only). */
  position: number | null;
};

/** Queue positions live in PostgreSQL: an entry per (show, user), ordered by a global sequence. */
export function createWaitingRoomRepository(database: Db) {
  const db: BookingDb = database.withTables<BookingTables>();

  /** Live admissions of a show (ADMITTED and not run out). */
  const liveAdmissions = (executor: BookingDb, showId: string, now: Date) =>
    executor
      .selectFrom('booking_queue_entries')
      .select(sql<number>`count(*)::int`.as('n'))
      .where('show_id', '=', showId)
      .where('status', '=', 'ADMITTED')
      .where('admitted_until', '>', now)
      .executeTakeFirst();

  return {
    /** Joins the queue, or rejoins at the back when a previous admission was used up or ran out. */
    async join(showId: string, userId: string, now: Date): Promise<void> {
      await db
        .insertInto('booking_queue_entries')
        .values({
          show_id: showId,
          user_id: userId,
          seq: sql`nextval('booking_queue_seq')`,
          status: 'WAITING',
          joined_at: now,
        })
        .onConflict((conflict) =>
          conflict
            .columns(['show_id', 'user_id'])
            .doUpdateSet((eb) => ({
              seq: eb.ref('excluded.seq'),
              status: 'WAITING',
              joined_at: eb.ref('excluded.joined_at'),
              admitted_at: null,
              admitted_until: null,
            }))
            .where((eb) =>
              eb.or([
                eb('booking_queue_entries.status', '=', 'DONE'),
                eb.and([
                  eb('booking_queue_entries.status', '=', 'ADMITTED'),
                  eb('booking_queue_entries.admitted_until', '<=', now),
                ]),
              ]),
            ),
        )
        .execute();
    },

    /**
     * Admits the longest-waiting users into the free slots (capacity minus live admissions), one
     * admitter per show at a time (advisory lock), so two processes never admit past capacity.
     */
    async admit(showId: string, capacity: number, until: Date, now: Date): Promise<string[]> {
      // Cheap check first: while every slot is taken (the usual state of a hot show), no lock.
      if (((await liveAdmissions(db, showId, now))?.n ?? 0) >= capacity) return [];
      return db.transaction().execute(async (tx) => {
        await tx
          .selectNoFrom(
            sql`pg_advisory_xact_lock(hashtextextended(${`booking.queue:${showId}`}, 0))`.as('locked'),
          )
          .execute();
        const free = capacity - ((await liveAdmissions(tx, showId, now))?.n ?? 0);
        if (free <= 0) return [];
        const rows = await tx
          .updateTable('booking_queue_entries')
          .set({ status: 'ADMITTED', admitted_at: now, admitted_until: until })
          .where('show_id', '=', showId)
          .where('user_id', 'in', (eb) =>
            eb
              .selectFrom('booking_queue_entries')
              .select('user_id')
              .where('show_id', '=', showId)
              .where('status', '=', 'WAITING')
              .orderBy('seq')
              .limit(free),
          )
          .returning('user_id')
          .execute();
        return rows.map((row) => row.user_id);
      });
    },

    /** Entries of some users with their place in line (one query for every listener of a process). */
    async entries(showId: string, userIds: string[]): Promise<EntryRow[]> {
      const rows = await db
        .with('ranked', (qb) =>
          qb
            .selectFrom('booking_queue_entries')
            .select([
              'user_id',
              'seq',
              'status',
              'admitted_until',
              sql<number | null>`case when status = 'WAITING'
                then (row_number() over (partition by status = 'WAITING' order by seq))::int end`.as(
                'position',
              ),
            ])
            .where('show_id', '=', showId),
        )
        .selectFrom('ranked')
        .select(['user_id', 'seq', 'status', 'admitted_until', 'position'])
        .where('user_id', '=', sql<string>`any(${userIds}::uuid[])`)
        .execute();
      return rows.map((row) => ({ ...row, seq: Number(row.seq) }));
    },

    async entry(showId: string, userId: string): Promise<EntryRow | undefined> {
      const row = await db
        .selectFrom('booking_queue_entries as e')
        .select((eb) => [
          'e.user_id',
          'e.seq',
          'e.status',
          'e.admitted_until',
          eb
            .case()
            .when('e.status', '=', 'WAITING')
            .then(
              eb
                .selectFrom('booking_queue_entries as w')
                .select(sql<number>`count(*)::int + 1`.as('position'))
                .whereRef('w.show_id', '=', 'e.show_id')
                .where('w.status', '=', 'WAITING')
                .whereRef('w.seq', '<', 'e.seq'),
            )
            .end()
            .as('position'),
        ])
        .where('e.show_id', '=', showId)
        .where('e.user_id', '=', userId)
        .executeTakeFirst();
      return row ? { ...row, seq: Number(row.seq) } : undefined;
    },

    /** When the live admissions end, earliest first (for the wait estimate). */
    async admissionEnds(showId: string, now: Date): Promise<Date[]> {
      const rows = await db
        .selectFrom('booking_queue_entries')
        .select('admitted_until')
        .where('show_id', '=', showId)
        .where('status', '=', 'ADMITTED')
        .where('admitted_until', '>', now)
        .orderBy('admitted_until')
        .$narrowType<{ admitted_until: Date }>()
        .execute();
      return rows.map((row) => row.admitted_until);
    },

    async waitingCount(showId: string): Promise<number> {
      const row = await db
        .selectFrom('booking_queue_entries')
        .select(sql<number>`count(*)::int`.as('n'))
        .where('show_id', '=', showId)
        .where('status', '=', 'WAITING')
        .executeTakeFirst();
      return row?.n ?? 0;
    },

    /** The user booked: their slot goes to the next in line. */
    async finish(showId: string, userId: string): Promise<boolean> {
      const result = await db
        .updateTable('booking_queue_entries')
        .set({ status: 'DONE' })
        .where('show_id', '=', showId)
        .where('user_id', '=', userId)
        .where('status', '=', 'ADMITTED')
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    /** Users waiting and shows with a queue, over every show (the metrics' scrape-time read). */
    async waitingTotals(): Promise<{ users: number; shows: number }> {
      const row = await db
        .selectFrom('booking_queue_entries')
        .select([
          sql<number>`count(*)::int`.as('users'),
          sql<number>`count(distinct show_id)::int`.as('shows'),
        ])
        .where('status', '=', 'WAITING')
        .executeTakeFirst();
      return { users: row?.users ?? 0, shows: row?.shows ?? 0 };
    },

    async showsWithWaiting(): Promise<string[]> {
      const rows = await db
        .selectFrom('booking_queue_entries')
        .select('show_id')
        .distinct()
        .where('status', '=', 'WAITING')
        .execute();
      return rows.map((row) => row.show_id);
    },
  };
}

export type WaitingRoomRepository = ReturnType<typeof createWaitingRoomRepository>;
