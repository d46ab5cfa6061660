import { sql } from 'kysely';
import type { Db } from '../../platform/db/index.ts';
import type { BookingDb, BookingTables } from '../tables.ts';

export interface CheckInRow {
  booking_id: string;
  show_id: string;
  door: string;
  checked_in_by: string;
  checked_in_at: Date;
}

/** Door check-ins: one row per admitted booking (its primary key decides who admits). */
export function createDoorRepository(database: Db) {
  const db: BookingDb = database.withTables<BookingTables>();
  return {
    /**
     * Admits the booking if it is still CONFIRMED and nobody admitted it yet, in one statement:
     * concurrent scans (any process, any door) race on the primary key and exactly one inserts.
     * Undefined when it was not inserted (admitted before, or no longer CONFIRMED).
     */
    async admit(row: CheckInRow): Promise<CheckInRow | undefined> {
      return db
        .insertInto('booking_check_ins')
        .columns(['booking_id', 'show_id', 'door', 'checked_in_by', 'checked_in_at'])
        .expression(
          db
            .selectFrom('booking_bookings')
            .select([
              'id',
              'show_id',
              sql<string>`${row.door}::text`.as('door'),
              sql<string>`${row.checked_in_by}::text`.as('checked_in_by'),
              sql<Date>`${row.checked_in_at}::timestamptz`.as('checked_in_at'),
            ])
            .where('id', '=', row.booking_id)
            .where('show_id', '=', row.show_id)
            .where('status', '=', 'CONFIRMED'),
        )
        .onConflict((oc) => oc.column('booking_id').doNothing())
        .returning(['booking_id', 'show_id', 'door', 'checked_in_by', 'checked_in_at'])
        .executeTakeFirst();
    },

    async find(bookingId: string): Promise<CheckInRow | undefined> {
      return db
        .selectFrom('booking_check_ins')
        .select(['booking_id', 'show_id', 'door', 'checked_in_by', 'checked_in_at'])
        .where('booking_id', '=', bookingId)
        .executeTakeFirst();
    },
  };
}

export type DoorRepository = ReturnType<typeof createDoorRepository>;
