import { type Kysely, sql, type Transaction } from 'kysely';
import type { Db } from '../platform/db/index.ts';
import type { ParkingTables, PaymentRow, TicketRow } from './tables.ts';

/**
 * What entry, exit and the lot share: the typed handle on the parking tables, the column
 * selections of `TicketRow` and `PaymentRow`, and the reads of one ticket or payment.
 */
export type ParkingDb = Kysely<ParkingTables>;
export type Executor = ParkingDb | Transaction<ParkingTables>;

export const parkingDb = (db: Db): ParkingDb => db.withTables<ParkingTables>();

/** A ticket's columns under the names of `TicketRow` (tsc checks them against it). */
export const TICKET_COLUMNS = [
  'parking_tickets.id',
  'parking_tickets.license_plate as licensePlate',
  'parking_tickets.vehicle_type as vehicleType',
  'parking_tickets.spot_id as spotId',
  'parking_tickets.floor',
  'parking_tickets.spot_type as spotType',
  'parking_tickets.status',
  'parking_tickets.entry_time as entryTime',
  'parking_tickets.entry_panel_id as entryPanelId',
  'parking_tickets.exit_time as exitTime',
  'parking_tickets.exit_panel_id as exitPanelId',
  'parking_tickets.lost_at as lostAt',
  'parking_tickets.paid_at as paidAt',
  'parking_tickets.current_payment_id as currentPaymentId',
  'parking_tickets.code',
  'parking_tickets.reservation_id as reservationId',
  'parking_tickets.reserved_from as reservedFrom',
  'parking_tickets.reserved_until as reservedUntil',
] as const;

export const PAYMENT_COLUMNS = [
  'parking_payments.id',
  'parking_payments.ticket_id as ticketId',
  'parking_payments.kind',
  'parking_payments.amount_minor as amountMinor',
  'parking_payments.currency',
  'parking_payments.status',
  'parking_payments.payment_url as paymentUrl',
  'parking_payments.failure_reason as failureReason',
  'parking_payments.duration_ms as durationMs',
  'parking_payments.created_at as createdAt',
  'parking_payments.updated_at as updatedAt',
  'parking_payments.retryable',
] as const;

/** The same ticket columns for the raw statements' `returning` (the arbiter). */
export const RETURNING_TICKET = sql.join(
  TICKET_COLUMNS.map((column) => {
    const [ref, alias] = column.split(' as ');
    return sql`${sql.ref(ref)} as ${sql.ref(alias ?? ref.replace('parking_tickets.', ''))}`;
  }),
);

/** bigint columns arrive as BigInt (platform setting); amounts and durations fit a number. */
export function numbers<Row extends { amountMinor: bigint; durationMs: bigint }>(
  row: Row,
): Omit<Row, 'amountMinor' | 'durationMs'> & { amountMinor: number; durationMs: number } {
  return { ...row, amountMinor: Number(row.amountMinor), durationMs: Number(row.durationMs) };
}

export function createTicketReads(db: ParkingDb) {
  return {
    async ticket(id: string, executor: Executor = db): Promise<TicketRow | undefined> {
      return executor
        .selectFrom('parking_tickets')
        .select(TICKET_COLUMNS)
        .where('id', '=', id)
        .executeTakeFirst();
    },

    async payment(id: string, executor: Executor = db): Promise<PaymentRow | undefined> {
      const row = await executor
        .selectFrom('parking_payments')
        .select(PAYMENT_COLUMNS)
        .where('id', '=', id)
        .executeTakeFirst();
      return row && numbers(row);
    },

    /**
     * The id of the ticket a short code names: the vehicle inside with that code, else the newest
     * paid ticket that had it (a receipt asked for after the exit), in the live tables or the archive.
     */
    async ticketIdByCode(code: string): Promise<string | undefined> {
      // One index each: the vehicles inside (unique), the paid tickets, the archive.
      const inside = await db
        .selectFrom('parking_tickets')
        .select('id')
        .where('code', '=', code)
        .where(sql<boolean>`status in ('ACTIVE', 'LOST')`)
        .executeTakeFirst();
      if (inside) return inside.id;
      const paid = await db
        .selectFrom('parking_tickets')
        .select('id')
        .where('code', '=', code)
        .where(sql<boolean>`status = 'PAID'`)
        .orderBy('entry_time', 'desc')
        .limit(1)
        .executeTakeFirst();
      if (paid) return paid.id;
      const archived = await db
        .selectFrom('parking_tickets_archive')
        .select('id')
        .where('code', '=', code)
        .orderBy('entry_time', 'desc')
        .limit(1)
        .executeTakeFirst();
      return archived?.id;
    },

    /** The ticket of a vehicle still inside (ACTIVE or LOST), if any. */
    async ticketInside(licensePlate: string): Promise<TicketRow | undefined> {
      return db
        .selectFrom('parking_tickets')
        .select(TICKET_COLUMNS)
        .where('license_plate', '=', licensePlate)
        .where('status', 'in', ['ACTIVE', 'LOST'])
        .executeTakeFirst();
    },
  };
}
