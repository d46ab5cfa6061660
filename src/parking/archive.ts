import { sql } from 'kysely';
import type { Db } from '../platform/db/index.ts';
import type { RetentionPolicy } from '../platform/jobs/retention.ts';
import { parkingDb } from './rows.ts';

const TICKET_COLUMNS = sql.raw(
  `id, license_plate, vehicle_type, spot_id, floor, spot_type, status, entry_time, entry_panel_id,
   exit_time, exit_panel_id, lost_at, paid_at, current_payment_id, code, reservation_id, reserved_from,
   reserved_until`,
);
const PAYMENT_COLUMNS = sql.raw(
  `id, ticket_id, kind, amount_minor, currency, status, payment_url, failure_reason, duration_ms,
   created_at, updated_at, retryable`,
);

/**
 * Paid tickets move to `parking_tickets_archive`, with their payments to
 * `parking_payments_archive`, once they were paid more than `keepMs` ago; ACTIVE and LOST tickets
 * (vehicles inside) never move. One statement per batch: the tickets are picked and locked
 * (`skip locked`: a ticket a payment outcome is updating waits for the next batch), their rows
 * deleted and inserted into the archive together, so a ticket is in exactly one place. Reads of a
 * ticket by id fall back to the archive (`createTicketReads`).
 */
export function ticketArchive(db: Db, keepMs: number): RetentionPolicy {
  return {
    table: 'parking_tickets',
    keepMs,
    async removeBatch(cutoff, limit) {
      const archivedAt = new Date(cutoff.getTime() + keepMs);
      // Raw SQL: data-modifying CTEs move a batch of tickets and their payments in one statement.
      const result = await sql`
        with picked as (
          select id from parking_tickets
          where status = 'PAID' and paid_at < ${cutoff}
          order by paid_at
          limit ${limit}
          for update skip locked
        ), payments as (
          delete from parking_payments p using picked where p.ticket_id = picked.id
          returning p.*
        ), tickets as (
          delete from parking_tickets t using picked where t.id = picked.id
          returning t.*
        ), archived_payments as (
          insert into parking_payments_archive (${PAYMENT_COLUMNS}, archived_at)
          select ${PAYMENT_COLUMNS}, ${archivedAt}::timestamptz from payments
        )
        insert into parking_tickets_archive (${TICKET_COLUMNS}, archived_at)
        select ${TICKET_COLUMNS}, ${archivedAt}::timestamptz from tickets`.execute(db);
      return Number(result.numAffectedRows ?? 0n);
    },
    async oldest() {
      const { rows } = await sql<{ at: Date | null }>`
        select min(paid_at) as at from parking_tickets where status = 'PAID'`.execute(db);
      return rows[0]?.at ?? undefined;
    },
  };
}

/**
 * Ended reservations (USED, NO_SHOW, CANCELLED) are deleted `keepMs` after they ended (their last
 * change), the tickets' archive age: a used one's window lives on in its ticket. BOOKED and HELD
 * ones never go.
 */
export function reservationRetention(db: Db, keepMs: number): RetentionPolicy {
  const parking = parkingDb(db);
  const ended = ['USED', 'NO_SHOW', 'CANCELLED'] as const;
  return {
    table: 'parking_reservations',
    keepMs,
    async removeBatch(cutoff, limit) {
      const picked = parking
        .selectFrom('parking_reservations')
        .select('id')
        .where('status', 'in', ended)
        .where('updated_at', '<', cutoff)
        .orderBy('updated_at')
        .limit(limit);
      const result = await parking
        .deleteFrom('parking_reservations')
        .where('id', 'in', picked)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
    async oldest() {
      const row = await parking
        .selectFrom('parking_reservations')
        .select((eb) => eb.fn.min('updated_at').as('at'))
        .where('status', 'in', ended)
        .executeTakeFirst();
      return row?.at ?? undefined;
    },
  };
}
