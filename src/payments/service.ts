import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../platform/clock.ts';
import { AppError } from '../platform/errors.ts';
import { uuidv7 } from '../platform/ids.ts';
import type { RetentionPolicy } from '../platform/jobs/retention.ts';
import type {
  CardDetails,
  CreatePaymentInput,
  Payment,
  PaymentEventHandler,
  PaymentJson,
  PaymentPurpose,
  PaymentsApi,
  PayOptions,
  RefundOptions,
} from './api.ts';
import { validateCard } from './card.ts';
import { paymentError } from './errors.ts';
import { type Charge, GatewayError, GatewayTimeout, type PaymentGateway } from './gateway.ts';
import type { PaymentsMetrics } from './metrics.ts';
import { MAX_ATTEMPTS, type PaymentRow, type PaymentsRepository, type RefundRow } from './repository.ts';
import type { SandboxGateway } from './sandbox.ts';
import { verifyWebhook } from './webhook.ts';

/**
 * An attempt the gateway has no record of is only forgotten after this long, well past any
 * caller's timeout, so a request still on its way to the gateway is never mistaken for a dead one.
 */
export const STALE_ATTEMPT_MS = 2 * 60_000;
/** Owners' handlers that failed (or never ran because the process died) are retried after this. */
export const NOTIFY_RETRY_AFTER_MS = 30_000;
const MAX_TIMEOUT_MS = 60_000;
const PURPOSES: PaymentPurpose[] = ['booking', 'parking'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface PaymentsServiceDeps {
  repository: PaymentsRepository;
  gateway: PaymentGateway;
  sandbox?: SandboxGateway;
  clock: Clock;
  log: FastifyBaseLogger;
  baseUrl: string;
  webhookSecret: string;
  defaultTimeoutMs: number;
  /** Payment outcomes (`payments_total`), counted at each transition. */
  metrics: Pick<PaymentsMetrics, 'transitioned'>;
}

export type PaymentsService = ReturnType<typeof createPaymentsService>;

export function createPaymentsService(deps: PaymentsServiceDeps) {
  const { repository: repo, gateway, clock, log } = deps;
  const handlers = new Map<PaymentPurpose, PaymentEventHandler>();

  function toPayment(row: PaymentRow): Payment {
    return {
      id: row.id,
      purpose: row.purpose,
      reference: row.reference,
      description: row.description,
      amountMinor: Number(row.amount_minor),
      currency: row.currency,
      status: row.status,
      allowRetry: row.allow_retry,
      cardLast4: row.card_last4,
      cardBrand: row.card_brand,
      failureCode: row.failure_code,
      failureMessage: row.failure_message,
      chargeOutstanding: row.attempt_id !== null,
      gatewayChargeId: row.gateway_charge_id,
      refundedMinor: Number(row.refunded_minor),
      refundReason: row.refund_reason,
      paymentUrl: `${deps.baseUrl}/pay/${row.id}`,
      returnUrl: row.return_url,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      completedAt: row.completed_at,
      failedAt: row.failed_at,
      refundedAt: row.refunded_at,
    };
  }

  async function load(id: string): Promise<PaymentRow> {
    const row = UUID.test(id) ? await repo.find(id) : undefined;
    if (!row) throw paymentError('payment_not_found', `No payment ${id}`);
    return row;
  }

  /** Runs the owner's handler for the latest transition; failures are retried by `reconcile`. */
  async function notify(row: PaymentRow): Promise<void> {
    const handler = handlers.get(row.purpose);
    if (!handler || !row.last_event || row.notified_version >= row.version) return;
    try {
      await handler({ type: row.last_event, payment: toPayment(row) });
      await repo.markNotified(row.id, row.version);
    } catch (error) {
      log.error(
        { err: error, paymentId: row.id, event: row.last_event },
        'payment event handler failed; will retry',
      );
    }
  }

  /**
   * Applies a charge outcome the gateway reported (answer, webhook or lookup). Conditional
   * updates make it idempotent: only PENDING with this very attempt changes, so a webhook and
   * the synchronous answer for the same charge complete the payment once.
   */
  async function applyCharge(executor: typeof repo.db, charge: Charge, now: Date) {
    if (!UUID.test(charge.paymentId) || !UUID.test(charge.idempotencyKey)) return { orphan: false };
    if (charge.status === 'succeeded') {
      const completed = await repo.complete(
        executor,
        charge.paymentId,
        charge.idempotencyKey,
        charge.id,
        now,
      );
      if (completed) return { transitioned: completed, orphan: false };
      const current = await repo.find(charge.paymentId, executor);
      // Money taken for a payment that is not waiting for it (a second charge): give it back.
      return { orphan: !!current && current.gateway_charge_id !== charge.id };
    }
    if (charge.status === 'failed') {
      const failure = {
        code: charge.failureCode ?? 'card_declined',
        message: charge.failureMessage ?? 'Declined',
      };
      const failed = await repo.fail(executor, charge.paymentId, charge.idempotencyKey, failure, now);
      return { transitioned: failed, orphan: false };
    }
    return { orphan: false };
  }

  async function afterApply(charge: Charge, result: { transitioned?: PaymentRow; orphan: boolean }) {
    if (result.transitioned) {
      deps.metrics.transitioned(result.transitioned);
      await notify(result.transitioned);
    }
    if (result.orphan) {
      log.warn(
        { paymentId: charge.paymentId, chargeId: charge.id },
        'refunding a charge no payment was waiting for',
      );
      await gateway
        .refund({
          chargeId: charge.id,
          amountMinor: charge.amountMinor,
          idempotencyKey: `orphan-${charge.id}`,
        })
        .catch((error) => log.error({ err: error, chargeId: charge.id }, 'orphan charge refund failed'));
    }
  }

  /** Asks the gateway what became of an outstanding attempt; true when it is no longer outstanding. */
  async function resolveAttempt(row: PaymentRow): Promise<boolean> {
    if (!row.attempt_id) return true;
    const charge = await gateway.findCharge(row.attempt_id);
    const now = clock.now();
    if (charge && charge.status !== 'pending') {
      await afterApply(charge, await applyCharge(repo.db, charge, now));
      return true;
    }
    if (
      !charge &&
      row.attempt_started_at &&
      now.getTime() - row.attempt_started_at.getTime() >= STALE_ATTEMPT_MS
    ) {
      await repo.clearAttempt(row.id, row.attempt_id, now);
      return true;
    }
    return false;
  }

  async function claim(row: PaymentRow, attemptId: string, card: { last4: string; brand: string }) {
    for (let round = 0; round < 2; round++) {
      const claimed = await repo.claimAttempt(row.id, attemptId, card, clock.now());
      if (claimed) return claimed;
      const current = await load(row.id);
      if (current.status === 'COMPLETED' || current.status === 'REFUNDED') {
        throw paymentError('payment_already_completed', {
          detail: `Payment ${row.id} is ${current.status}`,
          extras: { payment_status: current.status },
        });
      }
      if (current.status === 'FAILED' && !current.allow_retry) {
        throw paymentError('payment_not_payable', {
          detail:
            current.failure_code === 'canceled'
              ? `Payment ${row.id} was withdrawn (replaced by a new payment or given up); nothing was charged`
              : `Payment ${row.id} failed (${current.failure_code}); start a new one`,
          extras: { payment_status: current.status },
        });
      }
      if (!current.attempt_id && current.attempts >= MAX_ATTEMPTS) {
        throw paymentError('payment_attempts_exhausted', {
          detail: `${MAX_ATTEMPTS} card attempts failed; start a new payment`,
        });
      }
      if (current.attempt_id && !(await resolveAttempt(current))) {
        throw paymentError('payment_in_progress', {
          detail: 'A charge for this payment is still being processed; its outcome arrives by webhook',
          headers: { 'Retry-After': '5' },
        });
      }
    }
    throw paymentError('payment_in_progress', { headers: { 'Retry-After': '1' } });
  }

  async function pay(paymentId: string, card: CardDetails, options: PayOptions = {}): Promise<Payment> {
    const valid = validateCard(card, clock.now());
    const timeoutMs = Math.min(options.timeoutMs ?? deps.defaultTimeoutMs, MAX_TIMEOUT_MS);
    const row = await load(paymentId);
    const attemptId = uuidv7();
    await claim(row, attemptId, valid);
    let charge: Charge;
    try {
      charge = await gateway.createCharge({
        idempotencyKey: attemptId,
        paymentId,
        amountMinor: Number(row.amount_minor),
        currency: row.currency,
        card: valid,
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      if (error instanceof GatewayTimeout) {
        log.warn(
          { paymentId, attemptId, timeoutMs },
          'payment gateway timed out; the charge stays outstanding',
        );
        return toPayment(await load(paymentId));
      }
      log.error({ err: error, paymentId, attemptId }, 'payment gateway failed');
      // If the gateway never took the charge, free the slot at once so the payer can try again.
      const known = await gateway.findCharge(attemptId).catch(() => 'unknown' as const);
      if (known === undefined) await repo.clearAttempt(paymentId, attemptId, clock.now());
      throw paymentError('payment_gateway_unavailable', { headers: { 'Retry-After': '5' }, cause: error });
    }
    if (charge.status === 'pending') {
      await repo.recordPendingCharge(paymentId, attemptId, charge.id, clock.now());
    } else {
      await afterApply(charge, await applyCharge(repo.db, charge, clock.now()));
    }
    return toPayment(await load(paymentId));
  }

  async function createPayment(input: CreatePaymentInput): Promise<Payment> {
    const errors: { field: string; message: string }[] = [];
    const bad = (field: string, message: string) => errors.push({ field, message });
    if (!PURPOSES.includes(input.purpose)) bad('purpose', `must be one of ${PURPOSES.join(', ')}`);
    if (typeof input.reference !== 'string' || input.reference.length < 1 || input.reference.length > 200)
      bad('reference', 'must be 1 to 200 characters');
    if (!Number.isSafeInteger(input.amountMinor) || input.amountMinor <= 0 || input.amountMinor > 1e12)
      bad('amountMinor', 'must be a positive integer number of minor units');
    const currency = input.currency ?? 'USD';
    if (!/^[A-Z]{3}$/.test(currency)) bad('currency', 'must be an ISO 4217 code like USD');
    if (
      typeof input.description !== 'string' ||
      input.description.length < 1 ||
      input.description.length > 500
    )
      bad('description', 'must be 1 to 500 characters');
    if (input.idempotencyKey !== undefined && !/^[\x21-\x7e]{1,255}$/.test(input.idempotencyKey))
      bad('idempotencyKey', 'must be 1 to 255 visible ASCII characters');
    if (input.returnUrl !== undefined && !safeReturnUrl(input.returnUrl, deps.baseUrl))
      bad('returnUrl', 'must be a path or an http(s) URL');
    if (errors.length > 0) {
      throw paymentError('invalid_payment', {
        detail: errors.map((error) => `${error.field} ${error.message}`).join('; '),
        extras: { errors },
      });
    }
    const now = clock.now();
    const inserted = await repo.insert({
      id: uuidv7(),
      purpose: input.purpose,
      reference: input.reference,
      description: input.description,
      amount_minor: input.amountMinor,
      currency,
      status: 'PENDING',
      allow_retry: input.allowRetry ?? false,
      idempotency_key: input.idempotencyKey ?? null,
      return_url: input.returnUrl ?? null,
      created_at: now,
      updated_at: now,
    });
    if (inserted) return toPayment(inserted);
    const existing = await repo.findByIdempotencyKey(input.purpose, input.idempotencyKey ?? '');
    if (
      !existing ||
      Number(existing.amount_minor) !== input.amountMinor ||
      existing.currency !== currency ||
      existing.reference !== input.reference
    ) {
      throw paymentError('idempotency_key_reused', 'This idempotency key created a different payment');
    }
    return toPayment(existing);
  }

  async function refund(paymentId: string, options: RefundOptions): Promise<Payment> {
    const { reason, amountMinor } = options;
    if (typeof reason !== 'string' || reason.length < 1 || reason.length > 500) {
      throw paymentError('invalid_refund', 'reason must be 1 to 500 characters');
    }
    if (amountMinor !== undefined && (!Number.isSafeInteger(amountMinor) || amountMinor <= 0)) {
      throw paymentError('invalid_refund', 'amount must be a positive number of minor units');
    }
    await load(paymentId);
    const key = options.idempotencyKey ?? (amountMinor === undefined ? 'full' : uuidv7());
    const now = clock.now();
    const refundRow = await repo.db.transaction().execute(async (trx) => {
      const payment = await repo.findForUpdate(trx, paymentId);
      if (!payment) throw paymentError('payment_not_found');
      const existing = await repo.findRefund(trx, paymentId, key);
      if (existing) return existing;
      const remaining = Number(payment.amount_minor - payment.refunded_minor);
      const settled = payment.status === 'REFUNDED' || (payment.status === 'COMPLETED' && remaining === 0);
      if (settled && amountMinor === undefined) return undefined;
      if (payment.status !== 'COMPLETED' && payment.status !== 'REFUNDED') {
        throw paymentError('payment_not_refundable', {
          detail: `Payment ${paymentId} is ${payment.status}`,
          extras: { payment_status: payment.status },
        });
      }
      const amount = amountMinor ?? remaining;
      if (amount > remaining) {
        throw paymentError('refund_exceeds_remaining', {
          detail: `At most ${formatMinor(remaining)} can still be refunded`,
          extras: { refundable_amount: remaining / 100 },
        });
      }
      const refund: RefundRow = {
        id: uuidv7(),
        payment_id: paymentId,
        amount_minor: BigInt(amount),
        reason,
        idempotency_key: key,
        status: 'PENDING',
        gateway_refund_id: null,
        created_at: now,
        completed_at: null,
      };
      await repo.reserveRefund(trx, {
        id: refund.id,
        payment_id: paymentId,
        amount_minor: amount,
        reason,
        idempotency_key: key,
        created_at: now,
        completed_at: null,
      });
      return refund;
    });
    if (refundRow?.status === 'PENDING') await completeRefund(refundRow);
    return toPayment(await load(paymentId));
  }

  async function completeRefund(refund: RefundRow): Promise<void> {
    const payment = await load(refund.payment_id);
    try {
      const done = await gateway.refund({
        chargeId: payment.gateway_charge_id ?? '',
        amountMinor: Number(refund.amount_minor),
        idempotencyKey: refund.id,
      });
      const row = await repo.finishRefund(refund, done.id, clock.now());
      if (row) {
        deps.metrics.transitioned(row);
        await notify(row);
      }
    } catch (error) {
      log.error(
        { err: error, paymentId: refund.payment_id, refundId: refund.id },
        'refund failed at the gateway',
      );
      // A refusal releases the reservation; anything else may have reached the gateway, so the
      // refund stays PENDING and reconciliation retries it with the same idempotency key.
      if (error instanceof GatewayError) await repo.failRefund(refund, clock.now());
      throw paymentError('payment_gateway_unavailable', { headers: { 'Retry-After': '5' }, cause: error });
    }
  }

  async function cancel(paymentId: string, reason = 'canceled by the merchant'): Promise<Payment> {
    const row = await load(paymentId);
    const canceled = await repo.cancel(
      row.id,
      { code: 'canceled', message: reason.slice(0, 500) },
      clock.now(),
    );
    if (canceled) {
      deps.metrics.transitioned(canceled);
      await notify(canceled);
      return toPayment(canceled);
    }
    const current = await load(paymentId);
    if (current.status === 'FAILED') return toPayment(current);
    if (current.attempt_id)
      throw paymentError('payment_in_progress', 'A charge is outstanding; wait for its outcome');
    throw paymentError('payment_already_completed', {
      detail: `Payment ${paymentId} is ${current.status}`,
      extras: { payment_status: current.status },
    });
  }

  /** The webhook endpoint's work: verify, dedup by event id and apply in one transaction. */
  async function handleWebhook(rawBody: string, headers: Record<string, string | string[] | undefined>) {
    const now = clock.now();
    const event = verifyWebhook(deps.webhookSecret, rawBody, headers, now);
    const charge: Charge = {
      ...event.data.charge,
      status: event.type === 'charge.succeeded' ? 'succeeded' : 'failed',
    };
    const result = await repo.db.transaction().execute(async (trx) => {
      if (!(await repo.recordEvent(trx, event.id, event.type, now))) return undefined;
      return applyCharge(trx, charge, now);
    });
    if (!result) {
      log.info({ eventId: event.id }, 'duplicate payment webhook ignored');
      return { duplicate: true };
    }
    await afterApply(charge, result);
    return { duplicate: false };
  }

  /** The periodic safety net: outstanding charges, owners not yet told, refunds cut short. */
  async function reconcile(now: Date = clock.now()): Promise<void> {
    const staleBefore = new Date(now.getTime() - STALE_ATTEMPT_MS);
    for (const row of await repo.staleAttempts(staleBefore, 100)) {
      await resolveAttempt(row).catch((error) =>
        log.error({ err: error, paymentId: row.id }, 'reconcile failed'),
      );
    }
    const notifyBefore = new Date(now.getTime() - NOTIFY_RETRY_AFTER_MS);
    for (const row of await repo.unnotified([...handlers.keys()], notifyBefore, 100)) await notify(row);
    for (const refund of await repo.pendingRefunds(staleBefore, 100)) {
      await completeRefund(refund).catch(() => {});
    }
  }

  async function settle(paymentId: string, outcome: 'succeeded' | 'failed'): Promise<void> {
    const row = await load(paymentId);
    const charge =
      row.attempt_id && deps.sandbox ? await deps.sandbox.settle(row.attempt_id, outcome) : undefined;
    if (!charge) throw paymentError('no_outstanding_charge');
  }

  const api: PaymentsApi = {
    createPayment,
    pay,
    refund,
    cancel,
    get: async (id) => {
      const row = UUID.test(id) ? await repo.find(id) : undefined;
      return row && toPayment(row);
    },
    listByReference: async (purpose, reference) =>
      (await repo.listByReference(purpose, reference)).map(toPayment),
    onPaymentEvent(purpose, handler) {
      if (handlers.has(purpose))
        throw new Error(`a payment event handler for ${purpose} is already registered`);
      handlers.set(purpose, handler);
    },
    toJson,
    sandbox: { settle },
  };

  return { api, handleWebhook, reconcile, load: async (id: string) => toPayment(await load(id)) };
}

/**
 * The webhook event ids under the platform's retention job (`payments.retention`): kept
 * PAYMENTS_EVENT_RETENTION (settings.ts: at least the gateway's retry horizon). Payments and
 * refunds are financial records and are never removed; neither are the sandbox gateway's books
 * (README.md, "Retention").
 */
export function webhookEventRetention(repo: PaymentsRepository, keepMs: number): RetentionPolicy {
  return {
    table: 'payment_webhook_events',
    keepMs,
    removeBatch: (cutoff, limit) => repo.removeEvents(cutoff, limit),
    oldest: () => repo.oldestEvent(),
  };
}

export function toJson(payment: Payment): PaymentJson {
  const iso = (date: Date | null) => date?.toISOString() ?? null;
  return {
    payment_id: payment.id,
    purpose: payment.purpose,
    reference: payment.reference,
    description: payment.description,
    amount: payment.amountMinor / 100,
    currency: payment.currency,
    status: payment.status,
    allow_retry: payment.allowRetry,
    card: payment.cardLast4 ? { last4: payment.cardLast4, brand: payment.cardBrand ?? 'unknown' } : null,
    failure_code: payment.failureCode,
    failure_message: payment.failureMessage,
    charge_outstanding: payment.chargeOutstanding,
    refunded_amount: payment.refundedMinor / 100,
    refund_reason: payment.refundReason,
    payment_url: payment.paymentUrl,
    return_url: payment.returnUrl,
    created_at: payment.createdAt.toISOString(),
    updated_at: payment.updatedAt.toISOString(),
    completed_at: iso(payment.completedAt),
    failed_at: iso(payment.failedAt),
    refunded_at: iso(payment.refundedAt),
  };
}

export function formatMinor(minor: number, currency = ''): string {
  const sign = minor < 0 ? '-' : '';
  const abs = Math.abs(minor);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}${currency ? ` ${currency}` : ''}`;
}

function safeReturnUrl(value: string, baseUrl: string): boolean {
  try {
    const url = new URL(value, baseUrl);
    return (url.protocol === 'http:' || url.protocol === 'https:') && value.length <= 2000;
  } catch {
    return false;
  }
}

/** The in-process webhook transport of the sandbox: the same function the HTTP endpoint runs. */
export function inProcessTransport(getService: () => PaymentsService) {
  return async (rawBody: string, headers: Record<string, string>): Promise<number> => {
    try {
      await getService().handleWebhook(rawBody, headers);
      return 200;
    } catch (error) {
      if (error instanceof AppError) return error.status;
      throw error;
    }
  };
}
