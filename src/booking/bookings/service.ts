import { createHash } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../platform/clock.ts';
import { AppError } from '../../platform/errors.ts';
import { uuidv7 } from '../../platform/ids.ts';
import type { CatalogueService } from '../catalogue/service.ts';
import { type ShowInfo, toShow } from '../catalogue/shapes.ts';
import { err } from '../errors.ts';
import type { BookingMetrics } from '../metrics.ts';
import { fromMinor } from '../money.ts';
import type { SeatsService } from '../seats/service.ts';
import type { BookingSettings } from '../settings.ts';
import { ticketBookingId } from '../signing.ts';
import type { BookingNotifier } from './notifications.ts';
import type { BookingPayments, PaymentView } from './payments.ts';
import type { BookingRow, BookingsRepository } from './repository.ts';
import type { Booking, BookingCreate } from './schemas.ts';
import type { Settlement } from './settlement.ts';
import type { Tickets } from './tickets.ts';

/** Booking held seats against a payment; reading, cancelling, and the admin's show cancellation. */
export function createBookingsService(deps: {
  repo: BookingsRepository;
  seats: SeatsService;
  catalogue: CatalogueService;
  payments: () => BookingPayments | undefined;
  settlement: Settlement;
  notifier: BookingNotifier;
  tickets: Tickets;
  clock: Clock;
  settings: BookingSettings;
  secret: string;
  log: FastifyBaseLogger;
  /** Bookings by how they ended (`booking_bookings_total`). */
  metrics: Pick<BookingMetrics, 'booking'>;
}) {
  const { repo, seats, catalogue, settlement, notifier, tickets, clock, settings } = deps;

  function payments(): BookingPayments {
    const found = deps.payments();
    if (!found) throw err('payments_unavailable', { headers: { 'Retry-After': '30' } });
    return found;
  }

  /**
   * The booking as the API shows it. The ticket (token and QR code) only to its user (`ticket`):
   * whoever holds it gets in, so staff reading a booking do not see it.
   */
  async function toJson(
    booking: BookingRow,
    options: { ticket: boolean; show?: ShowInfo; payment?: PaymentView },
  ): Promise<Booking> {
    const { show, payment } = options;
    const info = show ?? (await catalogue.showInfo(booking.show_id));
    const summary = toShow(info);
    const paid = booking.status === 'CONFIRMED' || booking.status === 'CANCELLED';
    const valid = booking.status === 'CONFIRMED' && options.ticket;
    return {
      booking_id: booking.id,
      status: booking.status,
      hold_id: booking.hold_id,
      user_id: booking.user_id,
      seats: booking.seats,
      show: {
        show_id: summary.show_id,
        movie_id: summary.movie_id,
        movie_title: summary.movie_title,
        theater_name: summary.theater_name,
        city: summary.city,
        screen_number: summary.screen_number,
        screen_type: summary.screen_type,
        show_time: summary.show_time,
        end_time: summary.end_time,
        local_time: summary.local_time,
        timezone: summary.timezone,
      },
      total_amount: fromMinor(booking.total_minor),
      total_paid: paid ? fromMinor(booking.total_minor) : 0,
      currency: booking.currency,
      payment_id: booking.payment_id ?? payment?.id ?? null,
      payment_url: booking.status === 'PENDING' ? (payment?.paymentUrl ?? null) : null,
      booking_time: booking.booking_time.toISOString(),
      confirmed_at: booking.confirmed_at?.toISOString() ?? null,
      cancelled_at: booking.cancelled_at?.toISOString() ?? null,
      failure_reason: booking.failure_reason,
      refund:
        booking.refund_status && booking.refund_minor !== null
          ? { amount: fromMinor(booking.refund_minor), status: booking.refund_status }
          : null,
      cancellation:
        booking.status === 'CONFIRMED' ? cancellationTerms(booking, new Date(info.show_time)) : null,
      qr_code: valid ? await tickets.qrCode(booking.id) : null,
      ticket_token: valid ? tickets.token(booking.id) : null,
    };
  }

  /**
   * What cancelling now would give back, so a page can say it before asking: the whole amount until
   * the cutoff, nothing after it (with `accept_no_refund`), no cancelling once the show started.
   */
  function cancellationTerms(booking: BookingRow, showTime: Date) {
    const now = clock.now().getTime();
    const cutoff = showTime.getTime() - settings.refundCutoffMs;
    return {
      allowed: now < showTime.getTime(),
      refund_amount: now <= cutoff ? fromMinor(booking.total_minor) : 0,
      refund_until: new Date(cutoff).toISOString(),
    };
  }

  return {
    toJson,

    /**
     * `userId` pays for a hold of theirs (another user's is 404). 201 CONFIRMED; 202 PENDING while
     * the gateway has not answered (the outcome arrives by webhook; after `paymentTimeoutMs` the
     * booking fails and the seats go back on sale); 402 declined (the hold is kept until it ends: another card may be tried; the booking stays
     * PENDING without a payment in flight and is not listed);
     * 410 hold expired.
     */
    async book(
      input: BookingCreate,
      idempotencyKey: string,
      userId: string,
    ): Promise<{ status: 201 | 202; booking: Booking }> {
      const gateway = payments();
      const now = clock.now();
      const hold = await seats.findHold(input.hold_id, userId);
      if (hold.status === 'BOOKED') throw err('hold_already_booked', { extras: { hold_id: hold.id } });
      if (hold.status !== 'HELD' || hold.expires_at.getTime() <= now.getTime()) {
        throw err('hold_expired', {
          detail: `The hold ended at ${hold.expires_at.toISOString()}; hold the seats again`,
          extras: { hold_id: hold.id, expired_at: hold.expires_at.toISOString() },
        });
      }
      const show = await catalogue.showInfo(hold.show_id);
      const { booking, created } = await repo.findOrCreate({
        id: uuidv7(),
        hold_id: hold.id,
        user_id: hold.user_id,
        show_id: hold.show_id,
        seats: hold.seats,
        total_minor: hold.total_minor,
        currency: settings.currency,
        booking_time: now,
        payment_deadline: new Date(now.getTime() + settings.paymentTimeoutMs),
        email: input.contact?.email ?? null,
        phone: input.contact?.phone ?? null,
      });
      if (booking.status === 'CONFIRMED')
        throw err('hold_already_booked', { extras: { booking_id: booking.id } });
      if (booking.status !== 'PENDING') throw err('hold_expired', { extras: { booking_id: booking.id } });
      // The seats stay this hold's for as long as its payment may take (a card tried after a
      // declined one gets that time again; a decline puts the hold's own end back).
      const deadline = created
        ? booking.payment_deadline
        : await repo.renewDeadline(booking.id, new Date(now.getTime() + settings.paymentTimeoutMs));
      await seats.extendHold(hold.id, deadline);
      if (input.contact) await notifier.setContact(hold.user_id, input.contact);

      // One payment per (booking, Idempotency-Key): a retried request pays the same payment, a new
      // request is a new attempt, and a second success is refunded (settlement).
      const payment = await gateway.createPayment({
        purpose: 'booking',
        reference: booking.id,
        amountMinor: booking.total_minor,
        currency: booking.currency,
        description: `${show.movie_title}, ${show.theater_name}: ${booking.seats.join(' ')}`.slice(0, 500),
        idempotencyKey: `booking:${booking.id}:${createHash('sha256').update(idempotencyKey).digest('base64url')}`,
        returnUrl: `/bookings/${booking.id}`,
        // The hosted page may try another card after a decline; a success after the hold ended is refunded.
        allowRetry: true,
      });
      await repo.addPayment({
        payment_id: payment.id,
        booking_id: booking.id,
        amount_minor: payment.amountMinor,
        created_at: now,
      });
      let outcome: PaymentView;
      try {
        outcome = await gateway.pay(payment.id, input.payment_details, { timeoutMs: settings.paymentWaitMs });
      } catch (error) {
        const code = error instanceof AppError ? error.code : '';
        if (code === 'payment_already_completed' || code === 'payment_not_payable') {
          outcome = (await gateway.get(payment.id)) ?? payment;
        } else {
          if (error instanceof AppError && error.status === 422) {
            // Refused card details: nothing was charged, so nothing of this attempt remains.
            await repo.forgetAttempt(booking.id, payment.id, created);
            await gateway.cancel(payment.id, 'invalid card details').catch(() => {});
          }
          throw error;
        }
      }
      await settlement.settle(outcome);
      const current = (await repo.find(booking.id))!;
      if (current.status === 'CONFIRMED' || current.status === 'CANCELLED') {
        return { status: 201, booking: await toJson(current, { ticket: true, show }) };
      }
      if (current.status === 'PENDING' && outcome.status !== 'FAILED') {
        return { status: 202, booking: await toJson(current, { ticket: true, show, payment: outcome }) };
      }
      if (outcome.status === 'FAILED') {
        const held = await seats.findHold(hold.id, userId);
        const kept = held.status === 'HELD' && held.expires_at.getTime() > clock.now().getTime();
        throw err('payment_declined', {
          detail: `${outcome.failureMessage ?? 'The card was declined'}. ${
            kept
              ? `Your seats stay held until ${held.expires_at.toISOString()}: try another card.`
              : 'The hold has ended.'
          }`,
          extras: {
            booking_id: current.id,
            booking_status: current.status,
            hold_id: hold.id,
            hold_status: kept ? 'HELD' : held.status === 'HELD' ? 'EXPIRED' : held.status,
            hold_expires_at: held.expires_at.toISOString(),
            failure_code: outcome.failureCode,
            payment_id: outcome.id,
            // Named apart from the problem's numeric `status` (the payments module's 402 says the same).
            payment_status: outcome.status,
          },
        });
      }
      throw err('hold_expired', {
        detail: 'The seats were released before the payment completed; the payment is refunded',
        extras: { booking_id: current.id, booking_status: current.status },
      });
    },

    /** A booking; `owner`: only if it is this user's, with its ticket (staff: any, without). */
    async get(id: string, owner?: string): Promise<Booking> {
      const booking = await repo.find(id);
      if (!booking || (owner !== undefined && booking.user_id !== owner)) throw err('booking_not_found');
      let payment: PaymentView | undefined;
      if (booking.status === 'PENDING') {
        const attempts = await repo.payments(id);
        const latest = attempts.at(-1);
        if (latest) payment = await deps.payments()?.get(latest.payment_id);
      }
      return toJson(booking, { ticket: owner !== undefined, payment });
    },

    /** A user's bookings, newest first; with their tickets when the user asks (`ticket`). */
    async forUser(userId: string, options: { ticket: boolean }): Promise<Booking[]> {
      const rows = await repo.byUser(userId.toLowerCase(), 100);
      return Promise.all(rows.map((booking) => toJson(booking, options)));
    },

    /**
     * Before the cutoff: full refund. After it (until the show starts): only with accept_no_refund.
     * `owner`: only this user's booking (another's is 404); the admin may cancel any (`byAdmin`).
     */
    async cancel(
      id: string,
      request: { owner?: string; byAdmin: boolean; accept_no_refund?: boolean },
    ): Promise<Booking> {
      const booking = await repo.find(id);
      if (!booking || (request.owner !== undefined && booking.user_id !== request.owner)) {
        throw err('booking_not_found');
      }
      if (booking.status !== 'CONFIRMED') {
        throw err(
          'booking_not_cancellable',
          `The booking is ${booking.status}; only CONFIRMED bookings can be cancelled`,
        );
      }
      const show = await catalogue.showInfoFresh(booking.show_id);
      const now = clock.now();
      const showTime = new Date(show.show_time).getTime();
      if (showTime <= now.getTime()) throw err('booking_not_cancellable', 'The show has started');
      const cutoff = new Date(showTime - settings.refundCutoffMs);
      const refundable = now.getTime() <= cutoff.getTime();
      if (!refundable && !request.accept_no_refund) {
        throw err('refund_cutoff_passed', {
          detail: `Refunds end ${settings.refundCutoffMs / 3_600_000} h before the show (${cutoff.toISOString()}); send accept_no_refund: true to cancel anyway`,
          extras: { refund_cutoff: cutoff.toISOString() },
        });
      }
      const refundMinor = refundable ? booking.total_minor : 0;
      const reason = request.byAdmin ? 'cancelled by an admin' : 'cancelled by the customer';
      const cancelled = await repo.cancel(id, refundMinor, reason, now);
      if (!cancelled) throw err('booking_not_cancellable', 'The booking changed meanwhile; reload it');
      deps.metrics.booking('cancelled');
      await seats.seatsChanged(booking.show_id);
      await notifier.cancelReminders(cancelled);
      await notifier.cancelled(
        cancelled,
        show,
        refundMinor,
        request.byAdmin ? 'cancelled by the venue' : 'cancelled by you',
      );
      if (refundMinor > 0 && booking.payment_id) {
        await settlement.refund(cancelled, booking.payment_id, refundMinor, 'booking cancelled');
      }
      return toJson((await repo.find(id))!, { ticket: !request.byAdmin, show });
    },

    /** Admin: cancels a show, refunds every confirmed booking in full and tells every booker. */
    async cancelShow(showId: string, reason: string) {
      const before = await catalogue.showInfoFresh(showId);
      if (before.status === 'CANCELLED') throw err('show_cancelled', 'The show is already cancelled');
      const now = clock.now();
      const result = await repo.cancelShow(showId, reason, now);
      if (!result) throw err('show_cancelled', 'The show is already cancelled');
      deps.metrics.booking('cancelled', result.cancelled.length + result.failed.length);
      const show = { ...before, status: 'CANCELLED' as const };
      await catalogue.invalidateListings(show);
      await seats.seatsChanged(showId);
      let refundTotal = 0;
      for (const booking of result.cancelled) {
        refundTotal += booking.total_minor;
        await notifier.cancelReminders(booking);
        await notifier.cancelled(booking, show, booking.total_minor, `the show was cancelled: ${reason}`);
        if (booking.payment_id)
          await settlement.refund(booking, booking.payment_id, booking.total_minor, 'show cancelled');
      }
      for (const booking of result.failed) {
        await notifier.cancelled(booking, show, 0, `the show was cancelled: ${reason}`);
      }
      return {
        show_id: showId,
        status: 'CANCELLED' as const,
        bookings_cancelled: result.cancelled.length,
        pending_bookings_failed: result.failed.length,
        refund_total: fromMinor(refundTotal),
      };
    },

    /** Door check of a ticket's QR code. */
    async checkTicket(token: string) {
      const bookingId = ticketBookingId(deps.secret, token);
      const booking = bookingId ? await repo.find(bookingId) : undefined;
      if (!booking) throw err('booking_not_found', 'This is not a ticket of ours');
      const show = await catalogue.showInfo(booking.show_id);
      return {
        valid: booking.status === 'CONFIRMED',
        booking_id: booking.id,
        status: booking.status,
        seats: booking.seats,
        show_id: booking.show_id,
        show_time: show.show_time,
      };
    },
  };
}

export type BookingsService = ReturnType<typeof createBookingsService>;
