import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import type { CardDetails, Payment, PaymentsApi } from '../../payments/api.ts';
import type { Clock } from '../../platform/clock.ts';
import { isUniqueViolation } from '../../platform/db/errors.ts';
import { AppError } from '../../platform/errors.ts';
import type { ParkingEvents } from '../boards/events.ts';
import { panelOrThrow, plateOrThrow } from '../checks.ts';
import { err } from '../errors.ts';
import type { LotConfig } from '../lot/config.ts';
import type { ExitOutcome } from '../metrics.ts';
import { billedStay, elapsedMs, feeFor } from '../pricing/pricing.ts';
import { receiptView } from '../receipts/receipt.ts';
import type { PaymentRow, TicketRow } from '../tables.ts';
import { parseTicketRef } from '../tickets/codes.ts';
import { exitView, ticketView } from '../views.ts';
import type { ExitRepository, ExitState } from './repository.ts';

export interface ExitRequest {
  ticketId: string;
  /** Pay at once; without it the payment stays PENDING for the hosted page. */
  card?: CardDetails;
  panelId?: string;
}

/**
 * Exit and payment. A ticket has at most one live payment (PENDING, COMPLETED, or FAILED and open
 * to another card; a unique index), so a second exit returns the first one's payment and a ticket
 * is never charged twice. A COMPLETED outcome, however it arrives (card at the panel, hosted page,
 * webhook), marks the ticket PAID and frees its spot in one transaction, then refreshes the boards
 * and opens the gate. A declined card leaves the ticket ACTIVE and the same payment payable: the
 * next card at the panel or on its page pays it, until the grace period withdraws it.
 */
export function createCheckout(deps: {
  repository: ExitRepository;
  lot: LotConfig;
  payments: PaymentsApi;
  events: ParkingEvents;
  clock: Clock;
  log: FastifyBaseLogger;
  /** Exits by outcome (`parking_exits_total`). */
  metrics?: { exit(outcome: ExitOutcome): void };
}) {
  const { repository, lot, payments, clock, events, log } = deps;

  /**
   * A ticket with all its payments, from the live tables or, once it was paid long enough ago, the
   * archive (README, "Retention"): a ticket id answers the same before and after it moved.
   */
  async function ticketWithPayments(ref: string) {
    const ticketId = await resolve(ref);
    const live = await repository.ticket(ticketId);
    const found = live
      ? { ticket: live, payments: await repository.payments(ticketId) }
      : await repository.archived(ticketId);
    if (!found) throw notFound(ref);
    const current = found.payments.find((payment) => payment.id === found.ticket.currentPaymentId);
    return { ...found, current };
  }

  /**
   * The ticket id behind what was typed or scanned: the id itself, or the short code printed on
   * the ticket (the vehicle inside with that code, else its newest paid ticket). A code with a
   * typo fails its check character and is answered in words, without a database read.
   */
  async function resolve(ref: string): Promise<string> {
    const parsed = parseTicketRef(ref);
    if ('id' in parsed) return parsed.id;
    if ('code' in parsed) {
      const id = await repository.ticketIdByCode(parsed.code);
      if (id) return id;
    }
    throw notFound(ref);
  }

  /** A ticket with its current payment and the ids of all its payments (the ticket id is the capability). */
  async function ticket(ticketId: string) {
    const found = await ticketWithPayments(ticketId);
    return {
      ...ticketView(found.ticket, found.current),
      payments: found.payments.map((payment) => payment.id),
    };
  }

  async function exit(input: ExitRequest) {
    const request = { ...input, ticketId: await resolve(input.ticketId) };
    const state = await repository.exitState(request.ticketId);
    if (!state) return archivedExit(request);
    const panelId = panelOrThrow(request.panelId, lot.exitPanels, 'exit');
    return settle(state, request.card, panelId);
  }

  /** An archived ticket was paid: its exit answers with that payment, as it did before the move. */
  async function archivedExit(request: ExitRequest) {
    const closed = await repository.archived(request.ticketId);
    const current = closed?.payments.find((payment) => payment.id === closed.ticket.currentPaymentId);
    if (!closed || !current) throw notFound(request.ticketId);
    panelOrThrow(request.panelId, lot.exitPanels, 'exit');
    return answer(closed.ticket, current);
  }

  /**
   * Lost ticket: the vehicle is found by its plate, the ticket becomes LOST and the lost-ticket
   * fee is due, or the fee the stay has reached when that is more.
   */
  async function reportLost(request: { licensePlate: string; card?: CardDetails; panelId?: string }) {
    const plate = plateOrThrow(request.licensePlate);
    const panelId = panelOrThrow(request.panelId, lot.exitPanels, 'exit');
    const inside = await repository.ticketInside(plate);
    const state = inside && (await repository.exitState(inside.id));
    if (!state) {
      throw err('vehicle_not_found', `No vehicle with the plate ${plate} is parked here; check the plate`);
    }
    if (state.ticket.status === 'ACTIVE') {
      const pending = state.current && payable(state.current) ? state.current : undefined;
      // An exit payment still payable (waiting, or declined and open to another card) must be
      // withdrawn first, or both could be paid.
      if (pending && !(await withdraw(pending))) {
        throw err('payment_pending', {
          detail: 'An exit payment for this vehicle is being paid right now; wait for its outcome',
          extras: { paymentId: pending.id, paymentUrl: pending.paymentUrl },
        });
      }
      await repository.markLost(state.ticket.id, clock.now());
    }
    return settle((await repository.exitState(state.ticket.id)) ?? state, request.card, panelId);
  }

  async function settle(state: ExitState, card: CardDetails | undefined, panelId: string | null) {
    let payment = await currentPayment(state, panelId);
    let ticket = state.ticket;
    if (card && payable(payment)) {
      payment = await charge(payment, card);
      ticket = (await repository.ticket(ticket.id)) ?? ticket;
    }
    // Without a card, a declined payment is answered as it is (200, FAILED): still payable.
    if (card && payment.status === 'FAILED') {
      deps.metrics?.exit('declined');
      // The exit answer rides along (for the panel), its `status` renamed: a problem's status is the HTTP one.
      const { status, ...view } = exitView(ticket, payment);
      throw err('payment_declined', {
        detail: `${declineText(payment.failureReason)} Nothing was charged and the gate stays closed: try another card, or pay on your phone.`,
        extras: { ...view, paymentStatus: status },
      });
    }
    if (payable(payment)) deps.metrics?.exit('pending');
    return answer(ticket, payment);
  }

  /** The exit answer, with the receipt once the payment completed (README, "Receipts"). */
  function answer(ticket: TicketRow, payment: PaymentRow) {
    const paid = payment.status === 'COMPLETED' || payment.status === 'REFUNDED';
    return { ...exitView(ticket, payment), receipt: paid ? receiptView(lot, ticket, payment) : null };
  }

  /** The receipt of a paid ticket, by id or code (whoever holds the ticket, as for its status). */
  async function receipt(ref: string) {
    const { ticket, current } = await ticketWithPayments(ref);
    if (!current || (current.status !== 'COMPLETED' && current.status !== 'REFUNDED')) {
      throw err(
        'receipt_not_ready',
        'This ticket is not paid yet: the receipt comes with the payment at the exit',
      );
    }
    return receiptView(lot, ticket, current);
  }

  /** The payment a ticket's holder can pay now (waiting, or declined and open to another card), if any. */
  async function dueNow(ref: string): Promise<PaymentRow | undefined> {
    const { current } = await ticketWithPayments(ref);
    return current && payable(current) ? current : undefined;
  }

  /** The ticket's live payment, or a new one for the fee due now. */
  async function currentPayment(state: ExitState, panelId: string | null, tries = 3): Promise<PaymentRow> {
    const { ticket, current } = state;
    // A withdrawn payment (or one that failed before retries existed) is final: a new one is made.
    if (current && (current.status !== 'FAILED' || current.retryable)) {
      // Within the grace period the amount shown holds, declined or not; after it, an unpaid exit
      // amount is recomputed (a driver who went back to the car pays for the time since) and the
      // old payment withdrawn first, so its page can no longer be paid.
      if (!payable(current) || !isStale(current)) return current;
      if (!(await withdraw(current))) return (await repository.payment(current.id)) ?? current;
    }
    if (ticket.status === 'PAID') throw err('ticket_already_paid');

    const now = clock.now();
    const kind = ticket.status === 'LOST' ? 'LOST' : 'EXIT';
    // A reserved stay pays its reserved window at least (README, "Reservations").
    const stay = feeFor(lot.pricing, billedStay(ticket, now), lot.timeZone);
    // A lost ticket never costs less than keeping it would have: a flat fee below the hourly one
    // after a long stay would make "losing" the ticket the cheaper way out.
    const amountMinor = kind === 'LOST' ? Math.max(lot.lostTicketFeeMinor, stay) : stay;
    // Concurrent exits of one ticket ask with the same key (its n-th payment) and share one payment.
    let created: Payment;
    try {
      created = await payments.createPayment({
        purpose: 'parking',
        amountMinor,
        currency: lot.currency,
        reference: ticket.id,
        description: `${lot.name}: ${kind === 'LOST' ? 'lost ticket' : 'parking'} ${ticket.licensePlate}, spot ${ticket.spotId}`,
        idempotencyKey: `parking:${ticket.id}:${state.attempts}`,
        // A declined card leaves this payment payable (panel and page alike); it is withdrawn
        // (payments `cancel`, final) before a newer one is made, so two are never payable at once.
        allowRetry: true,
        // The ticket's page: its receipt once paid, else a link to the payment due now (where an
        // old page of a withdrawn payment sends the driver).
        returnUrl: `/parking/receipts/${ticket.id}`,
      });
    } catch (error) {
      // Another exit of this ticket created the n-th payment first with another amount (an hour
      // boundary passed in between): take that one once it is recorded.
      if (!(error instanceof AppError && error.code === 'idempotency_key_reused')) throw error;
      return retry(ticket.id, panelId, tries);
    }
    const row: PaymentRow = {
      id: created.id,
      ticketId: ticket.id,
      kind,
      amountMinor: created.amountMinor,
      currency: created.currency,
      status: 'PENDING',
      paymentUrl: created.paymentUrl,
      failureReason: null,
      durationMs: elapsedMs({ entryTime: ticket.entryTime, exitTime: now }),
      createdAt: now,
      updatedAt: now,
      retryable: false,
    };
    if (await repository.addPayment({ payment: row, ticket: { exitTime: now, exitPanelId: panelId } }))
      return row;
    return retry(ticket.id, panelId, tries);
  }

  /** Another exit of the same ticket got its payment recorded first: answer with that one. */
  async function retry(ticketId: string, panelId: string | null, tries: number): Promise<PaymentRow> {
    if (tries <= 1) throw err('payment_pending', 'Another exit of this ticket is in progress; try again');
    await sleep(20 * (4 - tries)); // network-scale backoff, not business time: not the injected clock
    const state = await repository.exitState(ticketId);
    if (!state) throw notFound(ticketId);
    return currentPayment(state, panelId, tries - 1);
  }

  function isStale(payment: PaymentRow): boolean {
    const age = clock.now().getTime() - payment.createdAt.getTime();
    return payment.kind === 'EXIT' && age > lot.exitGraceMinutes * 60_000;
  }

  /**
   * Withdraws an unpaid payment (PENDING, or declined and open to another card) for good; false
   * when a charge is already on its way or it was paid. Payments first: once it says final, no
   * page or panel can pay it, and only then does the live index let a new payment in.
   */
  async function withdraw(payment: PaymentRow): Promise<boolean> {
    if (!payable(payment)) return false;
    try {
      const canceled = await payments.cancel(payment.id, 'superseded by a new amount');
      await handleOutcome(canceled);
      return canceled.status === 'FAILED';
    } catch (error) {
      if (error instanceof AppError && error.status === 409) return false;
      throw error;
    }
  }

  async function charge(payment: PaymentRow, card: CardDetails): Promise<PaymentRow> {
    try {
      const result = await payments.pay(payment.id, card);
      // payments has already run our outcome handler; applying it again is harmless and makes
      // this request's answer independent of that.
      await handleOutcome(result);
    } catch (error) {
      // Paid or being paid by another request (the hosted page, a second tab): take that state
      // from payments, whose outcome may not have reached this ticket yet.
      const busy = ['payment_already_completed', 'payment_in_progress', 'payment_not_payable'];
      if (!(error instanceof AppError && busy.includes(error.code))) throw error;
      const latest = await payments.get(payment.id);
      if (latest) await handleOutcome(latest);
    }
    return (await repository.payment(payment.id)) ?? payment;
  }

  /**
   * Applies a payment's outcome (registered with payments' `onPaymentEvent('parking', …)`, and
   * called with the answers of pay, cancel and refund); safe to repeat, from any process.
   */
  async function handleOutcome(
    outcome: Pick<Payment, 'id' | 'status' | 'failureCode' | 'allowRetry'>,
  ): Promise<void> {
    const now = clock.now();
    if (outcome.status === 'PENDING') {
      // A declined payment taken again by another card (a charge the gateway has not answered yet).
      await repository.reopenPayment(outcome.id, now);
    } else if (outcome.status === 'COMPLETED') {
      let done: Awaited<ReturnType<typeof repository.completePayment>>;
      try {
        done = await repository.completePayment(outcome.id, now);
      } catch (error) {
        if (!isUniqueViolation(error, 'parking_payments_live')) throw error;
        return refundDuplicate(outcome.id);
      }
      if (!done) return;
      deps.metrics?.exit('paid');
      void events.spotsChanged(now);
      void events.ticket({
        type: 'gate_open',
        ticketId: done.ticket.id,
        panelId: done.ticket.exitPanelId,
        paymentId: done.payment.id,
        at: now.toISOString(),
      });
    } else if (outcome.status === 'FAILED') {
      const reason = outcome.failureCode ?? 'declined';
      // Declined: still payable with another card. Withdrawn (`canceled`): final, and out of the
      // live index, so the ticket may get a new payment.
      const retryable = outcome.allowRetry && reason !== 'canceled';
      const failed = await repository.failPayment(outcome.id, reason, retryable, now);
      if (failed) {
        void events.ticket({
          type: 'payment_failed',
          ticketId: failed.ticketId,
          paymentId: failed.id,
          reason,
          at: now.toISOString(),
        });
      }
    } else if (outcome.status === 'REFUNDED') {
      const refunded = await repository.setPaymentStatus(outcome.id, 'REFUNDED', ['COMPLETED'], now);
      if (refunded) {
        void events.ticket({
          type: 'payment_refunded',
          ticketId: refunded.ticketId,
          paymentId: refunded.id,
          at: now.toISOString(),
        });
      }
    }
  }

  /** A second payment succeeded for a ticket already paid (e.g. a late answer for a withdrawn one): give it back. */
  async function refundDuplicate(paymentId: string): Promise<void> {
    log.warn({ paymentId }, 'a second payment completed for a paid parking ticket; refunding it');
    await payments.refund(paymentId, { reason: 'duplicate payment for a ticket already paid' });
    await repository.setPaymentStatus(
      paymentId,
      'REFUNDED',
      ['PENDING', 'FAILED'],
      clock.now(),
      'duplicate payment',
    );
  }

  /** Refund of a paid ticket (an admin's decision: the route declares admin access). */
  async function refund(ticketId: string, reason: string) {
    const { current: payment } = await ticketWithPayments(ticketId);
    if (!payment || (payment.status !== 'COMPLETED' && payment.status !== 'REFUNDED')) {
      throw err('payment_not_refundable', 'Only a ticket with a completed payment can be refunded');
    }
    if (payment.status === 'COMPLETED') {
      await handleOutcome(await payments.refund(payment.id, { reason }));
    }
    const after = await ticketWithPayments(ticketId);
    return answer(after.ticket, after.current ?? payment);
  }

  return { ticket, exit, reportLost, refund, handleOutcome, resolve, ticketWithPayments, receipt, dueNow };
}

/** A ticket nobody has, in the words a driver at a panel can act on. */
function notFound(ref: string) {
  const parsed = parseTicketRef(ref);
  const shown = ref.trim().slice(0, 64);
  return err(
    'ticket_not_found',
    'id' in parsed
      ? `No ticket with the number ${shown}; check the number on the ticket`
      : `No ticket with code ${shown}, check the code on the ticket`,
  );
}

/** The gateway's failure codes, in words (the code itself stays in `failureReason`). */
const DECLINES: Record<string, string> = {
  card_declined: 'The card was declined.',
  charge_expired: 'The bank did not confirm the payment in time.',
  canceled: 'The payment was withdrawn.',
};

function declineText(reason: string | null): string {
  return (reason && DECLINES[reason]) ?? 'The card was declined.';
}

/** Still to be paid: waiting, or declined and open to another card (not withdrawn). */
function payable(payment: PaymentRow): boolean {
  return payment.status === 'PENDING' || (payment.status === 'FAILED' && payment.retryable);
}

export type Checkout = ReturnType<typeof createCheckout>;
