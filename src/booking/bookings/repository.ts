import { sql, type Transaction } from 'kysely';
import type { BookingDb, BookingStatus, BookingTables, RefundStatus } from '../tables.ts';

export interface BookingRow {
  id: string;
  hold_id: string;
  user_id: string;
  show_id: string;
  status: BookingStatus;
  seats: string[];
  total_minor: number;
  currency: string;
  payment_id: string | null;
  booking_time: Date;
  payment_deadline: Date;
  confirmed_at: Date | null;
  failed_at: Date | null;
  failure_reason: string | null;
  cancelled_at: Date | null;
  cancel_reason: string | null;
  refund_minor: number | null;
  refund_status: RefundStatus | null;
}

export interface PaymentRow {
  payment_id: string;
  booking_id: string;
  status: 'PENDING' | 'COMPLETED' | 'FAILED' | 'REFUNDED';
  amount_minor: number;
  refund_status: RefundStatus | null;
  refund_minor: number | null;
  refund_reason: string | null;
}

/** What settling a successful payment did. */
export type SettleResult =
  | { kind: 'confirmed'; booking: BookingRow }
  | { kind: 'already_confirmed' }
  /** The booking is not waiting for this payment (paid twice, failed, timed out, cancelled): refund it. */
  | { kind: 'refund'; reason: string; booking: BookingRow; released?: boolean };

const BOOKING_COLUMNS = sql`id, hold_id, user_id, show_id, status, seats, total_minor::int8 as total_minor, currency,
  payment_id, booking_time, payment_deadline, confirmed_at, failed_at, failure_reason, cancelled_at, cancel_reason,
  refund_minor::int8 as refund_minor, refund_status`;

type Tx = Transaction<BookingTables>;

export function createBookingsRepository(db: BookingDb) {
  async function lockBooking(tx: Tx, id: string): Promise<BookingRow | undefined> {
    const { rows } =
      await sql<BookingRow>`select ${BOOKING_COLUMNS} from booking_bookings where id = ${id} for update`.execute(
        tx,
      );
    return rows[0] ? normalise(rows[0]) : undefined;
  }

  /** Releases the seats a hold still has (HELD or BOOKED) and marks the hold RELEASED. */
  async function releaseHoldSeats(tx: Tx, holdId: string, reason: string, now: Date): Promise<void> {
    await sql`update booking_show_seats ss set status = 'AVAILABLE', hold_id = null, held_until = null
      from booking_holds h
      where h.id = ${holdId} and ss.show_id = h.show_id and ss.seat_id = any(h.seat_ids) and ss.hold_id = h.id
        and ss.status in ('HELD', 'BOOKED')`.execute(tx);
    await sql`update booking_holds set status = 'RELEASED', released_at = ${now}, release_reason = ${reason}
      where id = ${holdId} and status in ('HELD', 'BOOKED')`.execute(tx);
  }

  return {
    db,

    /** The booking of a hold, created PENDING if there is none yet (one booking per hold). */
    async findOrCreate(booking: {
      id: string;
      hold_id: string;
      user_id: string;
      show_id: string;
      seats: string[];
      total_minor: number;
      currency: string;
      booking_time: Date;
      payment_deadline: Date;
      email: string | null;
      phone: string | null;
    }): Promise<{ booking: BookingRow; created: boolean }> {
      const { rows } = await sql<BookingRow>`
        insert into booking_bookings (id, hold_id, user_id, show_id, status, seats, total_minor, currency,
          booking_time, payment_deadline, email, phone)
        values (${booking.id}, ${booking.hold_id}, ${booking.user_id}, ${booking.show_id}, 'PENDING',
          ${booking.seats}::text[], ${booking.total_minor}, ${booking.currency}, ${booking.booking_time},
          ${booking.payment_deadline}, ${booking.email}, ${booking.phone})
        on conflict (hold_id) do nothing
        returning ${BOOKING_COLUMNS}`.execute(db);
      if (rows[0]) return { booking: normalise(rows[0]), created: true };
      const { rows: existing } = await sql<BookingRow>`select ${BOOKING_COLUMNS} from booking_bookings
        where hold_id = ${booking.hold_id}`.execute(db);
      return { booking: normalise(existing[0]), created: false };
    },

    async find(id: string): Promise<BookingRow | undefined> {
      const { rows } =
        await sql<BookingRow>`select ${BOOKING_COLUMNS} from booking_bookings where id = ${id}`.execute(db);
      return rows[0] ? normalise(rows[0]) : undefined;
    },

    async contact(id: string): Promise<{ email: string | null; phone: string | null } | undefined> {
      const { rows } = await sql<{ email: string | null; phone: string | null }>`select email, phone
        from booking_bookings where id = ${id}`.execute(db);
      return rows[0];
    },

    async byUser(userId: string, limit: number): Promise<BookingRow[]> {
      const { rows } = await sql<BookingRow>`select ${BOOKING_COLUMNS} from booking_bookings
        where user_id = ${userId} order by booking_time desc limit ${limit}`.execute(db);
      return rows.map(normalise);
    },

    async addPayment(payment: {
      payment_id: string;
      booking_id: string;
      amount_minor: number;
      created_at: Date;
    }) {
      await sql`insert into booking_payments (payment_id, booking_id, status, amount_minor, created_at)
        values (${payment.payment_id}, ${payment.booking_id}, 'PENDING', ${payment.amount_minor}, ${payment.created_at})
        on conflict (payment_id) do nothing`.execute(db);
    },

    async payments(bookingId: string): Promise<PaymentRow[]> {
      const { rows } =
        await sql<PaymentRow>`select payment_id, booking_id, status, amount_minor::int8 as amount_minor,
          refund_status, refund_minor::int8 as refund_minor, refund_reason
        from booking_payments where booking_id = ${bookingId} order by created_at`.execute(db);
      return rows.map((row) => ({
        ...row,
        amount_minor: Number(row.amount_minor),
        refund_minor: row.refund_minor === null ? null : Number(row.refund_minor),
      }));
    },

    /** Undoes a booking attempt whose card details were refused before any charge (bad input changes nothing). */
    async forgetAttempt(bookingId: string, paymentId: string, bookingCreated: boolean): Promise<void> {
      await db.transaction().execute(async (tx) => {
        await sql`delete from booking_payments where payment_id = ${paymentId}`.execute(tx);
        if (bookingCreated) {
          await sql`delete from booking_bookings b where b.id = ${bookingId} and b.status = 'PENDING'
            and not exists (select 1 from booking_payments p where p.booking_id = b.id)`.execute(tx);
        }
      });
    },

    async setPaymentStatus(paymentId: string, status: PaymentRow['status'], now: Date): Promise<void> {
      await sql`update booking_payments set status = ${status}, settled_at = coalesce(settled_at, ${now})
        where payment_id = ${paymentId}`.execute(db);
    },

    /**
     * A payment succeeded. If the booking waits for it and every seat of the hold is still the
     * hold's, the seats become BOOKED and the booking CONFIRMED, in one transaction. Otherwise the
     * payment must be refunded: a second payment for a confirmed booking, or a late one for a
     * booking that failed, timed out or lost its seats.
     */
    async settleSuccess(bookingId: string, paymentId: string, now: Date): Promise<SettleResult | undefined> {
      return db.transaction().execute(async (tx) => {
        const booking = await lockBooking(tx, bookingId);
        if (!booking) return undefined;
        await sql`update booking_payments set status = 'COMPLETED', settled_at = ${now}
          where payment_id = ${paymentId} and status = 'PENDING'`.execute(tx);
        if (booking.status === 'CONFIRMED' && booking.payment_id === paymentId)
          return { kind: 'already_confirmed' };
        if (booking.status === 'CONFIRMED') return { kind: 'refund', reason: 'duplicate payment', booking };
        if (booking.status !== 'PENDING') {
          return {
            kind: 'refund',
            reason: `late payment for a ${booking.status.toLowerCase()} booking`,
            booking,
          };
        }
        const { rows: seats } = await sql<{ seat_id: string }>`select ss.seat_id from booking_show_seats ss
          join booking_holds h on h.id = ${booking.hold_id}
          where ss.show_id = h.show_id and ss.seat_id = any(h.seat_ids) and ss.hold_id = h.id and ss.status = 'HELD'
          order by ss.seat_id for update of ss`.execute(tx);
        if (seats.length !== booking.seats.length) {
          await releaseHoldSeats(tx, booking.hold_id, 'seats lost before payment', now);
          const failed = await markFailed(tx, booking.id, 'seats_released', now);
          return {
            kind: 'refund',
            reason: 'the seats were released before the payment arrived',
            booking: failed,
            released: true,
          };
        }
        await sql`update booking_show_seats ss set status = 'BOOKED', held_until = null
          from booking_holds h
          where h.id = ${booking.hold_id} and ss.show_id = h.show_id and ss.seat_id = any(h.seat_ids)
            and ss.hold_id = h.id and ss.status = 'HELD'`.execute(tx);
        await sql`update booking_holds set status = 'BOOKED' where id = ${booking.hold_id}`.execute(tx);
        const { rows } = await sql<BookingRow>`update booking_bookings
          set status = 'CONFIRMED', payment_id = ${paymentId}, confirmed_at = ${now}
          where id = ${booking.id} returning ${BOOKING_COLUMNS}`.execute(tx);
        return { kind: 'confirmed', booking: normalise(rows[0]) };
      });
    },

    /**
     * A payment failed (declined) or never answered: the booking fails and its hold is released,
     * unless another payment of the booking is still pending or went through.
     */
    async settleFailure(
      bookingId: string,
      paymentId: string | undefined,
      reason: string,
      now: Date,
    ): Promise<BookingRow | undefined> {
      return db.transaction().execute(async (tx) => {
        const booking = await lockBooking(tx, bookingId);
        if (booking?.status !== 'PENDING') return undefined;
        if (paymentId) {
          const { rows: tracked } =
            await sql`update booking_payments set status = 'FAILED', settled_at = ${now}
            where payment_id = ${paymentId} and status = 'PENDING' returning payment_id`.execute(tx);
          // Not an attempt this booking waits for (e.g. one dropped for bad card details): no effect.
          if (tracked.length === 0) return undefined;
          const { rows } = await sql<{ n: number }>`select count(*)::int as n from booking_payments
            where booking_id = ${bookingId} and status in ('PENDING', 'COMPLETED')`.execute(tx);
          if ((rows[0]?.n ?? 0) > 0) return undefined;
        }
        await releaseHoldSeats(tx, booking.hold_id, reason, now);
        return markFailed(tx, booking.id, reason, now);
      });
    },

    /** PENDING bookings whose payment deadline has passed. */
    async overdue(now: Date, limit: number): Promise<{ id: string }[]> {
      const { rows } = await sql<{ id: string }>`select id from booking_bookings
        where status = 'PENDING' and payment_deadline <= ${now} order by payment_deadline limit ${limit}`.execute(
        db,
      );
      return rows;
    },

    /** The user cancels a confirmed booking: seats free again, refund recorded as pending. */
    async cancel(
      bookingId: string,
      refundMinor: number,
      reason: string,
      now: Date,
    ): Promise<BookingRow | undefined> {
      return db.transaction().execute(async (tx) => {
        const booking = await lockBooking(tx, bookingId);
        if (booking?.status !== 'CONFIRMED') return undefined;
        await releaseHoldSeats(tx, booking.hold_id, 'booking cancelled', now);
        const { rows } =
          await sql<BookingRow>`update booking_bookings set status = 'CANCELLED', cancelled_at = ${now},
            cancel_reason = ${reason}, refund_minor = ${refundMinor},
            refund_status = ${refundMinor > 0 ? 'PENDING' : null}
          where id = ${bookingId} returning ${BOOKING_COLUMNS}`.execute(tx);
        if (refundMinor > 0 && booking.payment_id) {
          await sql`update booking_payments set refund_status = 'PENDING', refund_minor = ${refundMinor}, refund_reason = ${reason}
            where payment_id = ${booking.payment_id}`.execute(tx);
        }
        return normalise(rows[0]);
      });
    },

    /**
     * Cancels a show: its inventory closes, holds are released, confirmed bookings are cancelled
     * with a full refund pending, pending ones fail (a payment arriving later is refunded).
     */
    async cancelShow(showId: string, reason: string, now: Date) {
      return db.transaction().execute(async (tx) => {
        const { rows: shows } = await sql<{ id: string }>`update booking_shows
          set status = 'CANCELLED', cancelled_at = ${now}, cancel_reason = ${reason}
          where id = ${showId} and status = 'SCHEDULED' returning id`.execute(tx);
        if (shows.length === 0) return undefined;
        await sql`update booking_show_seats set status = 'CLOSED', hold_id = null, held_until = null
          where show_id = ${showId}`.execute(tx);
        await sql`update booking_holds set status = 'RELEASED', released_at = ${now}, release_reason = 'show cancelled'
          where show_id = ${showId} and status in ('HELD', 'BOOKED')`.execute(tx);
        const { rows: cancelled } = await sql<BookingRow>`update booking_bookings
          set status = 'CANCELLED', cancelled_at = ${now}, cancel_reason = ${reason},
            refund_minor = total_minor, refund_status = 'PENDING'
          where show_id = ${showId} and status = 'CONFIRMED' returning ${BOOKING_COLUMNS}`.execute(tx);
        await sql`update booking_payments p set refund_status = 'PENDING', refund_minor = p.amount_minor,
            refund_reason = ${reason}
          from booking_bookings b
          where b.show_id = ${showId} and b.status = 'CANCELLED' and p.payment_id = b.payment_id
            and p.refund_status is null`.execute(tx);
        const { rows: failed } = await sql<BookingRow>`update booking_bookings
          set status = 'FAILED', failed_at = ${now}, failure_reason = 'show_cancelled'
          where show_id = ${showId} and status = 'PENDING' returning ${BOOKING_COLUMNS}`.execute(tx);
        return { cancelled: cancelled.map(normalise), failed: failed.map(normalise) };
      });
    },

    /** Marks a payment's refund as pending (e.g. a duplicate payment), unless one is recorded already. */
    async requestRefund(paymentId: string, amountMinor: number, reason: string): Promise<void> {
      await sql`update booking_payments set refund_status = 'PENDING', refund_minor = ${amountMinor}, refund_reason = ${reason}
        where payment_id = ${paymentId} and refund_status is null`.execute(db);
    },

    async refundDone(paymentId: string, status: RefundStatus): Promise<{ booking_id: string } | undefined> {
      const { rows } = await sql<{ booking_id: string }>`update booking_payments
        set refund_status = ${status}, status = case when ${status} = 'COMPLETED' then 'REFUNDED' else status end,
          refund_attempts = refund_attempts + 1
        where payment_id = ${paymentId} returning booking_id`.execute(db);
      if (rows[0]) {
        await sql`update booking_bookings set refund_status = ${status}
          where id = ${rows[0].booking_id} and payment_id = ${paymentId}`.execute(db);
      }
      return rows[0];
    },

    async refundAttemptFailed(paymentId: string): Promise<void> {
      await sql`update booking_payments set refund_attempts = refund_attempts + 1 where payment_id = ${paymentId}`.execute(
        db,
      );
    },

    async pendingRefunds(limit: number): Promise<PaymentRow[]> {
      const { rows } =
        await sql<PaymentRow>`select payment_id, booking_id, status, amount_minor::int8 as amount_minor,
          refund_status, refund_minor::int8 as refund_minor, refund_reason
        from booking_payments where refund_status = 'PENDING' order by created_at limit ${limit}`.execute(db);
      return rows.map((row) => ({
        ...row,
        amount_minor: Number(row.amount_minor),
        refund_minor: row.refund_minor === null ? null : Number(row.refund_minor),
      }));
    },

    /** Confirmed bookings whose reminder is due now (and was not sent): see README for the rule. */
    async dueReminders(kind: '24h' | '2h', now: Date, limit: number): Promise<BookingRow[]> {
      const lead = kind === '24h' ? '24 hours' : '2 hours';
      const { rows } = await sql<BookingRow>`
        select ${BOOKING_COLUMNS} from booking_bookings where id in (
          select b.id from booking_bookings b join booking_shows s on s.id = b.show_id
          where b.status = 'CONFIRMED' and s.status = 'SCHEDULED'
            and s.show_time - ${sql.raw(`interval '${lead}'`)} <= ${now}
            and s.show_time > ${now}
            ${kind === '24h' ? sql`and s.show_time - interval '2 hours' > ${now}` : sql``}
            and b.confirmed_at < s.show_time - ${sql.raw(`interval '${lead}'`)}
            and not exists (select 1 from booking_reminders r where r.booking_id = b.id and r.kind = ${kind})
          limit ${limit}
        )`.execute(db);
      return rows.map(normalise);
    },

    async reminderSent(bookingId: string, kind: string, now: Date): Promise<void> {
      await sql`insert into booking_reminders (booking_id, kind, sent_at) values (${bookingId}, ${kind}, ${now})
        on conflict do nothing`.execute(db);
    },
  };

  async function markFailed(tx: Tx, id: string, reason: string, now: Date): Promise<BookingRow> {
    const { rows } = await sql<BookingRow>`update booking_bookings set status = 'FAILED', failed_at = ${now},
      failure_reason = ${reason} where id = ${id} returning ${BOOKING_COLUMNS}`.execute(tx);
    return normalise(rows[0]);
  }
}

function normalise(row: BookingRow): BookingRow {
  return {
    ...row,
    total_minor: Number(row.total_minor),
    refund_minor: row.refund_minor === null ? null : Number(row.refund_minor),
  };
}

export type BookingsRepository = ReturnType<typeof createBookingsRepository>;
