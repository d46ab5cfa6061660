import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../platform/clock.ts';
import type { CatalogueService } from '../catalogue/service.ts';
import type { BookingMetrics } from '../metrics.ts';
import type { SeatsService } from '../seats/service.ts';
import type { WaitingRoomService } from '../waiting-room/service.ts';
import type { BookingNotifier } from './notifications.ts';
import type { BookingPayments, PaymentView } from './payments.ts';
import type { BookingRow, BookingsRepository } from './repository.ts';
import type { Tickets } from './tickets.ts';

/**
 * What happens when a payment's outcome is known, however it becomes known (the answer to
 * `pay`, the signed webhook, the payments module's reconciliation): confirm, fail, or refund.
 * Every step is idempotent, because outcomes arrive at least once and sometimes twice.
 */
export function createSettlement(deps: {
  repo: BookingsRepository;
  seats: SeatsService;
  catalogue: CatalogueService;
  waitingRoom: WaitingRoomService;
  payments: () => BookingPayments | undefined;
  notifier: BookingNotifier;
  tickets: Tickets;
  clock: Clock;
  log: FastifyBaseLogger;
  /** Bookings by how they ended (`booking_bookings_total`). */
  metrics: Pick<BookingMetrics, 'booking'>;
  /** How long a hold lasts unpaid (BOOKING_HOLD_MINUTES): a declined card leaves it that long. */
  holdMs: number;
}) {
  const { repo, seats, catalogue, waitingRoom, notifier, tickets, clock, log, metrics } = deps;
  const holdEndsAt = (heldAt: Date) => new Date(heldAt.getTime() + deps.holdMs);

  /**
   * Asks the payments module for a full refund (idempotent there: refunding a refunded payment
   * changes nothing); a failure leaves it PENDING for the sweeper to retry.
   */
  async function refund(booking: BookingRow, paymentId: string, amountMinor: number, reason: string) {
    await repo.requestRefund(paymentId, amountMinor, reason);
    const payments = deps.payments();
    if (!payments) return;
    try {
      const payment = await payments.refund(paymentId, { reason });
      if (payment.status === 'REFUNDED') {
        await refundCompleted(booking, paymentId, amountMinor);
      }
    } catch (error) {
      log.warn({ err: error, paymentId, bookingId: booking.id }, 'refund failed; the sweeper retries it');
      await repo.refundAttemptFailed(paymentId);
    }
  }

  async function refundCompleted(booking: BookingRow, paymentId: string, amountMinor: number) {
    await repo.refundDone(paymentId, 'COMPLETED');
    await notifier.refundUpdate(booking, paymentId, amountMinor, 'COMPLETED');
  }

  async function confirmed(booking: BookingRow) {
    const show = await catalogue.showInfo(booking.show_id);
    await seats.seatsChanged(booking.show_id);
    if (show.is_hot) await waitingRoom.finished(booking.show_id, booking.user_id);
    await notifier.confirmed(booking, show, tickets.token(booking.id));
  }

  async function failed(booking: BookingRow, reason: string) {
    await seats.seatsChanged(booking.show_id);
    await notifier.cancelled(booking, await catalogue.showInfo(booking.show_id), 0, reason);
  }

  async function settle(payment: PaymentView): Promise<void> {
    const bookingId = payment.reference;
    const now = clock.now();
    if (payment.status === 'COMPLETED') {
      const result = await repo.settleSuccess(bookingId, payment.id, now);
      if (!result) return log.warn({ paymentId: payment.id, bookingId }, 'payment for an unknown booking');
      if (result.kind === 'confirmed') {
        metrics.booking('confirmed');
        return confirmed(result.booking);
      }
      if (result.kind === 'refund') {
        if (result.released) {
          metrics.booking('seats_released');
          await seats.seatsChanged(result.booking.show_id);
        }
        log.info({ paymentId: payment.id, bookingId, reason: result.reason }, 'refunding a payment');
        await refund(result.booking, payment.id, payment.amountMinor, result.reason);
      }
      return;
    }
    if (payment.status === 'FAILED') {
      const result = await repo.settleFailure(
        bookingId,
        payment.id,
        payment.failureCode ?? 'payment_failed',
        now,
        holdEndsAt,
      );
      // A decline is the user's to retry while the hold lasts: nothing ended, no one is told.
      if (result?.kind === 'declined') metrics.booking('payment_declined');
      else if (result) {
        metrics.booking('expired');
        await seats.seatsChanged(result.booking.show_id);
      }
      return;
    }
    if (payment.status === 'REFUNDED') {
      const booking = await repo.find(bookingId);
      if (booking) await refundCompleted(booking, payment.id, payment.refundedMinor);
    }
  }

  return {
    settle,
    refund,

    /** Sweeper: fails bookings whose payment never answered in time (their seats go back on sale). */
    async failOverduePayments(now: Date = clock.now()): Promise<number> {
      let count = 0;
      for (const { id } of await repo.overdue(now, 500)) {
        const result = await repo.settleFailure(id, undefined, 'payment_timeout', now, holdEndsAt);
        if (!result) continue;
        count++;
        metrics.booking('expired');
        const { booking } = result;
        // A hold that ran out after declined cards only: the user saw each decline, nothing to say.
        if (result.kind === 'lapsed') {
          await seats.seatsChanged(booking.show_id);
          continue;
        }
        await failed(booking, 'the payment did not complete in time');
        // A charge still outstanding cannot be cancelled; if it succeeds later it is refunded.
        const payments = deps.payments();
        for (const payment of await repo.payments(id)) {
          if (payment.status === 'PENDING')
            await payments?.cancel(payment.payment_id, 'payment timeout').catch(() => {});
        }
      }
      return count;
    },

    /** Sweeper: retries refunds the payments module could not do at the time. */
    async retryRefunds(): Promise<number> {
      let count = 0;
      for (const payment of await repo.pendingRefunds(100)) {
        const booking = await repo.find(payment.booking_id);
        if (!booking) continue;
        await refund(
          booking,
          payment.payment_id,
          payment.refund_minor ?? payment.amount_minor,
          payment.refund_reason ?? 'refund',
        );
        count++;
      }
      return count;
    },
  };
}

export type Settlement = ReturnType<typeof createSettlement>;
