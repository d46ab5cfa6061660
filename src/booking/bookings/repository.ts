import { type Selectable, sql, type Transaction } from 'kysely';
import type { Db } from '../../platform/db/index.ts';
import { recountMovieCity } from '../catalogue/repository.ts';
import type { BookingDb, BookingTables, RefundStatus } from '../tables.ts';

type Bookings = Selectable<BookingTables['booking_bookings']>;
type Payments = Selectable<BookingTables['booking_payments']>;

/** A booking as the service sees it (its contact details are read apart), amounts in minor units. */
export type BookingRow = Omit<Bookings, 'email' | 'phone' | 'total_minor' | 'refund_minor'> & {
  total_minor: number;
  refund_minor: number | null;
};

export type PaymentRow = Pick<
  Payments,
  'payment_id' | 'booking_id' | 'status' | 'refund_status' | 'refund_reason'
> & { amount_minor: number; refund_minor: number | null };

/** What settling a successful payment did. */
export type SettleResult =
  | { kind: 'confirmed'; booking: BookingRow }
  | { kind: 'already_confirmed' }
  /** The booking is not waiting for this payment (paid twice, failed, timed out, cancelled): refund it. */
  | { kind: 'refund'; reason: string; booking: BookingRow; released?: boolean };

/** What settling a failed payment (or a passed deadline) did. */
export type FailureResult =
  /** Declined: the booking waits for another card while its hold lasts. */
  | { kind: 'declined'; booking: BookingRow; holdExpiresAt: Date }
  /** A charge never answered in time: the booking FAILED, the hold released. */
  | { kind: 'failed'; booking: BookingRow }
  /** The hold ended with only declined attempts: FAILED `hold_expired`, seats released. */
  | { kind: 'lapsed'; booking: BookingRow };

const BOOKING_COLUMNS = [
  'id',
  'hold_id',
  'user_id',
  'show_id',
  'status',
  'seats',
  'total_minor',
  'currency',
  'payment_id',
  'booking_time',
  'payment_deadline',
  'confirmed_at',
  'failed_at',
  'failure_reason',
  'cancelled_at',
  'cancel_reason',
  'refund_minor',
  'refund_status',
] as const;

const PAYMENT_COLUMNS = [
  'payment_id',
  'booking_id',
  'status',
  'amount_minor',
  'refund_status',
  'refund_minor',
  'refund_reason',
] as const;

type Tx = Transaction<BookingTables>;

/** An update of the seats a hold still has (its show's seats it lists that still name it); the caller sets. */
const seatsOfHold = (tx: Tx, holdId: string) =>
  tx
    .updateTable('booking_show_seats as ss')
    .from('booking_holds as h')
    .where('h.id', '=', holdId)
    .whereRef('ss.show_id', '=', 'h.show_id')
    .where((eb) => eb('ss.seat_id', '=', eb.fn.any('h.seat_ids')))
    .whereRef('ss.hold_id', '=', 'h.id');

export function createBookingsRepository(database: Db) {
  const db: BookingDb = database.withTables<BookingTables>();

  async function lockBooking(tx: Tx, id: string): Promise<BookingRow | undefined> {
    const row = await tx
      .selectFrom('booking_bookings')
      .select(BOOKING_COLUMNS)
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst();
    return row && normalise(row);
  }

  /** Releases the seats a hold still has (HELD or BOOKED) and marks the hold RELEASED. */
  async function releaseHoldSeats(tx: Tx, holdId: string, reason: string, now: Date): Promise<void> {
    await seatsOfHold(tx, holdId)
      .set({ status: 'AVAILABLE', hold_id: null, held_until: null })
      .where('ss.status', 'in', ['HELD', 'BOOKED'])
      .execute();
    await tx
      .updateTable('booking_holds')
      .set({ status: 'RELEASED', released_at: now, release_reason: reason })
      .where('id', '=', holdId)
      .where('status', 'in', ['HELD', 'BOOKED'])
      .execute();
  }

  async function markFailed(tx: Tx, id: string, reason: string, now: Date): Promise<BookingRow> {
    const row = await tx
      .updateTable('booking_bookings')
      .set({ status: 'FAILED', failed_at: now, failure_reason: reason })
      .where('id', '=', id)
      .returning(BOOKING_COLUMNS)
      .executeTakeFirstOrThrow();
    return normalise(row);
  }

  /** A payment succeeded and the booking waits for it: its seats become BOOKED, the booking CONFIRMED. */
  async function confirm(tx: Tx, booking: BookingRow, paymentId: string, now: Date): Promise<BookingRow> {
    await seatsOfHold(tx, booking.hold_id)
      .set({ status: 'BOOKED', held_until: null })
      .where('ss.status', '=', 'HELD')
      .execute();
    await tx
      .updateTable('booking_holds')
      .set({ status: 'BOOKED' })
      .where('id', '=', booking.hold_id)
      .execute();
    const row = await tx
      .updateTable('booking_bookings')
      .set({ status: 'CONFIRMED', payment_id: paymentId, confirmed_at: now })
      .where('id', '=', booking.id)
      .returning(BOOKING_COLUMNS)
      .executeTakeFirstOrThrow();
    return normalise(row);
  }

  return {
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
      const created = await db
        .insertInto('booking_bookings')
        .values({ ...booking, status: 'PENDING', seats: sql<string[]>`${booking.seats}::text[]` })
        .onConflict((conflict) => conflict.column('hold_id').doNothing())
        .returning(BOOKING_COLUMNS)
        .executeTakeFirst();
      if (created) return { booking: normalise(created), created: true };
      const existing = await db
        .selectFrom('booking_bookings')
        .select(BOOKING_COLUMNS)
        .where('hold_id', '=', booking.hold_id)
        .executeTakeFirstOrThrow();
      return { booking: normalise(existing), created: false };
    },

    async find(id: string): Promise<BookingRow | undefined> {
      const row = await db
        .selectFrom('booking_bookings')
        .select(BOOKING_COLUMNS)
        .where('id', '=', id)
        .executeTakeFirst();
      return row && normalise(row);
    },

    async contact(id: string): Promise<{ email: string | null; phone: string | null } | undefined> {
      return db
        .selectFrom('booking_bookings')
        .select(['email', 'phone'])
        .where('id', '=', id)
        .executeTakeFirst();
    },

    async byUser(userId: string, limit: number): Promise<BookingRow[]> {
      const rows = await db
        .selectFrom('booking_bookings')
        .select(BOOKING_COLUMNS)
        .where('user_id', '=', userId)
        // Not bookings of the user's: a hold whose cards were declined (its live hold is listed
        // instead), and one that ran out so.
        .where((eb) =>
          eb.not(
            eb.or([
              eb('status', '=', 'FAILED').and('failure_reason', '=', 'hold_expired'),
              eb('status', '=', 'PENDING').and(
                eb.not(
                  eb.exists(
                    eb
                      .selectFrom('booking_payments as p')
                      .select(sql`1`.as('one'))
                      .whereRef('p.booking_id', '=', 'booking_bookings.id')
                      .where('p.status', 'in', ['PENDING', 'COMPLETED']),
                  ),
                ),
              ),
            ]),
          ),
        )
        .orderBy('booking_time', 'desc')
        .limit(limit)
        .execute();
      return rows.map(normalise);
    },

    async addPayment(payment: {
      payment_id: string;
      booking_id: string;
      amount_minor: number;
      created_at: Date;
    }) {
      await db
        .insertInto('booking_payments')
        .values({ ...payment, status: 'PENDING' })
        .onConflict((conflict) => conflict.column('payment_id').doNothing())
        .execute();
    },

    async payments(bookingId: string): Promise<PaymentRow[]> {
      const rows = await db
        .selectFrom('booking_payments')
        .select(PAYMENT_COLUMNS)
        .where('booking_id', '=', bookingId)
        .orderBy('created_at')
        .execute();
      return rows.map(normalisePayment);
    },

    /** Undoes a booking attempt whose card details were refused before any charge (bad input changes nothing). */
    async forgetAttempt(bookingId: string, paymentId: string, bookingCreated: boolean): Promise<void> {
      await db.transaction().execute(async (tx) => {
        await tx.deleteFrom('booking_payments').where('payment_id', '=', paymentId).execute();
        if (bookingCreated) {
          await tx
            .deleteFrom('booking_bookings as b')
            .where('b.id', '=', bookingId)
            .where('b.status', '=', 'PENDING')
            .where(({ not, exists, selectFrom }) =>
              not(
                exists(
                  selectFrom('booking_payments as p')
                    .select(sql`1`.as('one'))
                    .whereRef('p.booking_id', '=', 'b.id'),
                ),
              ),
            )
            .execute();
        }
      });
    },

    async setPaymentStatus(paymentId: string, status: PaymentRow['status'], now: Date): Promise<void> {
      await db
        .updateTable('booking_payments')
        .set((eb) => ({ status, settled_at: eb.fn.coalesce('settled_at', eb.val(now)) }))
        .where('payment_id', '=', paymentId)
        .execute();
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
        await tx
          .updateTable('booking_payments')
          .set({ status: 'COMPLETED', settled_at: now })
          .where('payment_id', '=', paymentId)
          // FAILED too: a declined payment may be paid again with another card (hosted page).
          .where('status', 'in', ['PENDING', 'FAILED'])
          .execute();
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
        const seats = await tx
          .selectFrom('booking_show_seats as ss')
          .innerJoin('booking_holds as h', (join) => join.on('h.id', '=', booking.hold_id))
          .select('ss.seat_id')
          .whereRef('ss.show_id', '=', 'h.show_id')
          .where((eb) => eb('ss.seat_id', '=', eb.fn.any('h.seat_ids')))
          .whereRef('ss.hold_id', '=', 'h.id')
          .where('ss.status', '=', 'HELD')
          .orderBy('ss.seat_id')
          .forUpdate('ss')
          .execute();
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
        return { kind: 'confirmed', booking: await confirm(tx, booking, paymentId, now) };
      });
    },

    /**
     * A payment failed (declined), or the booking's deadline passed (`paymentId` undefined).
     *
     * A decline keeps the hold: the booking stays PENDING with no payment in flight, and the hold
     * (and the booking's deadline) go back to when the hold ends without a payment
     * (`holdEndsAt(created_at)`), so another card can be tried until then; the attempt stays
     * recorded as a FAILED payment. Past that time the hold ends as if it had run out.
     *
     * A passed deadline fails the booking and releases the hold. With a charge still outstanding
     * that is `payment_timeout` (the user is told); with only declined attempts it is
     * `hold_expired`, a hold that ran out unpaid, which no one is told of and My bookings does not
     * list (`byUser`).
     *
     * Nothing happens while another payment of the booking is pending or went through.
     */
    async settleFailure(
      bookingId: string,
      paymentId: string | undefined,
      reason: string,
      now: Date,
      holdEndsAt: (heldAt: Date) => Date,
    ): Promise<FailureResult | undefined> {
      return db.transaction().execute(async (tx) => {
        const booking = await lockBooking(tx, bookingId);
        if (booking?.status !== 'PENDING') return undefined;
        if (paymentId) {
          const tracked = await tx
            .updateTable('booking_payments')
            .set({ status: 'FAILED', settled_at: now })
            .where('payment_id', '=', paymentId)
            .where('status', '=', 'PENDING')
            .returning('payment_id')
            .execute();
          // Not an attempt this booking waits for (e.g. one dropped for bad card details): no effect.
          if (tracked.length === 0) return undefined;
        }
        const open = await tx
          .selectFrom('booking_payments')
          .select(sql<number>`count(*)::int`.as('n'))
          .where('booking_id', '=', bookingId)
          .where('status', 'in', ['PENDING', 'COMPLETED'])
          .executeTakeFirst();
        const inFlight = (open?.n ?? 0) > 0;
        if (paymentId && inFlight) return undefined;
        const hold = await tx
          .selectFrom('booking_holds')
          .select(['status', 'created_at'])
          .where('id', '=', booking.hold_id)
          .forUpdate()
          .executeTakeFirst();
        const endsAt = hold ? holdEndsAt(hold.created_at) : now;
        if (paymentId && hold?.status === 'HELD' && endsAt.getTime() > now.getTime()) {
          await tx
            .updateTable('booking_holds')
            .set({ expires_at: endsAt })
            .where('id', '=', booking.hold_id)
            .execute();
          await seatsOfHold(tx, booking.hold_id)
            .set({ held_until: endsAt })
            .where('ss.status', '=', 'HELD')
            .execute();
          // The user's hold bound must outlast the hold (a raised BOOKING_HOLD_MS can move its end
          // past the bound's), or the caps would stop counting a live hold. Written after the
          // seats: claims lock seats first, then the user's row.
          await tx
            .updateTable('booking_hold_users')
            .set((eb) => ({ held_until: eb.fn<Date>('greatest', ['held_until', eb.val(endsAt)]) }))
            .where('user_id', '=', booking.user_id)
            .execute();
          const row = await tx
            .updateTable('booking_bookings')
            .set({ payment_deadline: endsAt, failure_reason: reason })
            .where('id', '=', booking.id)
            .returning(BOOKING_COLUMNS)
            .executeTakeFirstOrThrow();
          return { kind: 'declined', booking: normalise(row), holdExpiresAt: endsAt };
        }
        const ending = paymentId || !inFlight ? 'hold_expired' : reason;
        await releaseHoldSeats(tx, booking.hold_id, ending, now);
        return {
          kind: ending === 'hold_expired' ? 'lapsed' : 'failed',
          booking: await markFailed(tx, booking.id, ending, now),
        };
      });
    },

    /** Another attempt at a PENDING booking: its deadline moves to give the payment its time. */
    async renewDeadline(bookingId: string, deadline: Date): Promise<Date> {
      const row = await db
        .updateTable('booking_bookings')
        .set((eb) => ({ payment_deadline: eb.fn<Date>('greatest', ['payment_deadline', eb.val(deadline)]) }))
        .where('id', '=', bookingId)
        .where('status', '=', 'PENDING')
        .returning('payment_deadline')
        .executeTakeFirst();
      return row?.payment_deadline ?? deadline;
    },

    /** PENDING bookings whose payment deadline has passed. */
    async overdue(now: Date, limit: number): Promise<{ id: string }[]> {
      return db
        .selectFrom('booking_bookings')
        .select('id')
        .where('status', '=', 'PENDING')
        .where('payment_deadline', '<=', now)
        .orderBy('payment_deadline')
        .limit(limit)
        .execute();
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
        const row = await tx
          .updateTable('booking_bookings')
          .set({
            status: 'CANCELLED',
            cancelled_at: now,
            cancel_reason: reason,
            refund_minor: refundMinor,
            refund_status: refundMinor > 0 ? 'PENDING' : null,
          })
          .where('id', '=', bookingId)
          .returning(BOOKING_COLUMNS)
          .executeTakeFirstOrThrow();
        if (refundMinor > 0 && booking.payment_id) {
          await tx
            .updateTable('booking_payments')
            .set({ refund_status: 'PENDING', refund_minor: refundMinor, refund_reason: reason })
            .where('payment_id', '=', booking.payment_id)
            .execute();
        }
        return normalise(row);
      });
    },

    /**
     * Cancels a show: its inventory closes, holds are released, confirmed bookings are cancelled
     * with a full refund pending, pending ones fail (a payment arriving later is refunded).
     */
    async cancelShow(showId: string, reason: string, now: Date) {
      return db.transaction().execute(async (tx) => {
        const show = await tx
          .updateTable('booking_shows')
          .set({ status: 'CANCELLED', cancelled_at: now, cancel_reason: reason })
          .where('id', '=', showId)
          .where('status', '=', 'SCHEDULED')
          .returning(['id', 'movie_id', 'screen_id'])
          .executeTakeFirst();
        if (!show) return undefined;
        const venue = await tx
          .selectFrom('booking_screens as sc')
          .innerJoin('booking_theaters as t', 't.id', 'sc.theater_id')
          .select('t.city_id')
          .where('sc.id', '=', show.screen_id)
          .executeTakeFirstOrThrow();
        await recountMovieCity(tx, show.movie_id, venue.city_id);
        await tx
          .updateTable('booking_show_seats')
          .set({ status: 'CLOSED', hold_id: null, held_until: null })
          .where('show_id', '=', showId)
          .execute();
        await tx
          .updateTable('booking_holds')
          .set({ status: 'RELEASED', released_at: now, release_reason: 'show cancelled' })
          .where('show_id', '=', showId)
          .where('status', 'in', ['HELD', 'BOOKED'])
          .execute();
        const cancelled = await tx
          .updateTable('booking_bookings')
          .set((eb) => ({
            status: 'CANCELLED',
            cancelled_at: now,
            cancel_reason: reason,
            refund_minor: eb.ref('total_minor'),
            refund_status: 'PENDING',
          }))
          .where('show_id', '=', showId)
          .where('status', '=', 'CONFIRMED')
          .returning(BOOKING_COLUMNS)
          .execute();
        await tx
          .updateTable('booking_payments as p')
          .from('booking_bookings as b')
          .set((eb) => ({
            refund_status: 'PENDING',
            refund_minor: eb.ref('p.amount_minor'),
            refund_reason: reason,
          }))
          .where('b.show_id', '=', showId)
          .where('b.status', '=', 'CANCELLED')
          .whereRef('p.payment_id', '=', 'b.payment_id')
          .where('p.refund_status', 'is', null)
          .execute();
        const failed = await tx
          .updateTable('booking_bookings')
          .set({ status: 'FAILED', failed_at: now, failure_reason: 'show_cancelled' })
          .where('show_id', '=', showId)
          .where('status', '=', 'PENDING')
          .returning(BOOKING_COLUMNS)
          .execute();
        return { cancelled: cancelled.map(normalise), failed: failed.map(normalise) };
      });
    },

    /** Marks a payment's refund as pending (e.g. a duplicate payment), unless one is recorded already. */
    async requestRefund(paymentId: string, amountMinor: number, reason: string): Promise<void> {
      await db
        .updateTable('booking_payments')
        .set({ refund_status: 'PENDING', refund_minor: amountMinor, refund_reason: reason })
        .where('payment_id', '=', paymentId)
        .where('refund_status', 'is', null)
        .execute();
    },

    async refundDone(paymentId: string, status: RefundStatus): Promise<{ booking_id: string } | undefined> {
      const row = await db
        .updateTable('booking_payments')
        .set((eb) => ({
          refund_status: status,
          status: status === 'COMPLETED' ? 'REFUNDED' : eb.ref('status'),
          refund_attempts: eb('refund_attempts', '+', 1),
        }))
        .where('payment_id', '=', paymentId)
        .returning('booking_id')
        .executeTakeFirst();
      if (row) {
        await db
          .updateTable('booking_bookings')
          .set({ refund_status: status })
          .where('id', '=', row.booking_id)
          .where('payment_id', '=', paymentId)
          .execute();
      }
      return row;
    },

    async refundAttemptFailed(paymentId: string): Promise<void> {
      await db
        .updateTable('booking_payments')
        .set((eb) => ({ refund_attempts: eb('refund_attempts', '+', 1) }))
        .where('payment_id', '=', paymentId)
        .execute();
    },

    async pendingRefunds(limit: number): Promise<PaymentRow[]> {
      const rows = await db
        .selectFrom('booking_payments')
        .select(PAYMENT_COLUMNS)
        .where('refund_status', '=', 'PENDING')
        .orderBy('created_at')
        .limit(limit)
        .execute();
      return rows.map(normalisePayment);
    },

    /** Confirmed bookings whose reminder is due now (and was not sent): see README for the rule. */
    async dueReminders(kind: '24h' | '2h', now: Date, limit: number): Promise<BookingRow[]> {
      const lead = sql.raw(`interval '${kind === '24h' ? '24 hours' : '2 hours'}'`);
      const rows = await db
        .selectFrom('booking_bookings')
        .select(BOOKING_COLUMNS)
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('booking_bookings as b')
            .innerJoin('booking_shows as s', 's.id', 'b.show_id')
            .select('b.id')
            .where('b.status', '=', 'CONFIRMED')
            .where('s.status', '=', 'SCHEDULED')
            .where(sql`s.show_time - ${lead}`, '<=', now)
            .where('s.show_time', '>', now)
            .$if(kind === '24h', (qb) => qb.where(sql`s.show_time - interval '2 hours'`, '>', now))
            .where('b.confirmed_at', '<', sql<Date>`s.show_time - ${lead}`)
            .where(({ not, exists, selectFrom }) =>
              not(
                exists(
                  selectFrom('booking_reminders as r')
                    .select(sql`1`.as('one'))
                    .whereRef('r.booking_id', '=', 'b.id')
                    .where('r.kind', '=', kind),
                ),
              ),
            )
            .limit(limit),
        )
        .execute();
      return rows.map(normalise);
    },

    async reminderSent(bookingId: string, kind: string, now: Date): Promise<void> {
      await db
        .insertInto('booking_reminders')
        .values({ booking_id: bookingId, kind, sent_at: now })
        .onConflict((conflict) => conflict.doNothing())
        .execute();
    },
  };
}

function normalise<Row extends { total_minor: number | bigint; refund_minor: number | bigint | null }>(
  row: Row,
): Omit<Row, 'total_minor' | 'refund_minor'> & { total_minor: number; refund_minor: number | null } {
  return {
    ...row,
    total_minor: Number(row.total_minor),
    refund_minor: row.refund_minor === null ? null : Number(row.refund_minor),
  };
}

function normalisePayment<
  Row extends { amount_minor: number | bigint; refund_minor: number | bigint | null },
>(
  row: Row,
): Omit<Row, 'amount_minor' | 'refund_minor'> & { amount_minor: number; refund_minor: number | null } {
  return {
    ...row,
    amount_minor: Number(row.amount_minor),
    refund_minor: row.refund_minor === null ? null : Number(row.refund_minor),
  };
}

export type BookingsRepository = ReturnType<typeof createBookingsRepository>;
