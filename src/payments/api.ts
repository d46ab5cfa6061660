/**
 * The payments module's public interface: what booking and parking call in-process
 * (`deps.modules.get('payments') as PaymentsApi`). Other modules import types from this file only.
 * The contract (statuses, transitions, events, crash safety) is described in README.md.
 */

/** Who a payment is for; owners register a handler per purpose with `onPaymentEvent`. */
export type PaymentPurpose = 'booking' | 'parking';

/**
 * PENDING → COMPLETED | FAILED; COMPLETED → REFUNDED (when refunds reach the amount);
 * FAILED → PENDING only for payments created with `allowRetry` and not withdrawn (`cancel`): a new
 * card attempt.
 */
export type PaymentStatus = 'PENDING' | 'COMPLETED' | 'FAILED' | 'REFUNDED';

/** `payment_details` of the HTTP APIs. The number may contain spaces or dashes. */
export interface CardDetails {
  card_number: string;
  exp_month: number;
  /** Four digits (2031) or two (31). */
  exp_year: number;
  cvc: string;
}

export interface Payment {
  id: string;
  purpose: PaymentPurpose;
  /** The owner's id for what is paid (a booking id, a ticket id). */
  reference: string;
  description: string;
  /** Integer minor units (cents). */
  amountMinor: number;
  /** ISO 4217, upper case; every supported currency has two decimals. */
  currency: string;
  status: PaymentStatus;
  /**
   * Whether a FAILED payment may be paid again with another card (booking and parking: yes, both
   * create their payments with it). False once the payment was withdrawn with `cancel`.
   */
  allowRetry: boolean;
  /** Last four digits and brand of the card of the latest attempt; the full number is never kept. */
  cardLast4: string | null;
  cardBrand: string | null;
  /** Why the latest attempt failed: `card_declined`, `insufficient_funds`, `canceled`, ... */
  failureCode: string | null;
  failureMessage: string | null;
  /** True while a charge is outstanding at the gateway (e.g. after a timeout). */
  chargeOutstanding: boolean;
  gatewayChargeId: string | null;
  refundedMinor: number;
  refundReason: string | null;
  /** The hosted payment page: `${baseUrl}/pay/${id}`. */
  paymentUrl: string;
  /** Where the hosted page sends the payer afterwards (optional). */
  returnUrl: string | null;
  createdAt: Date;
  updatedAt: Date;
  completedAt: Date | null;
  failedAt: Date | null;
  refundedAt: Date | null;
}

export interface CreatePaymentInput {
  purpose: PaymentPurpose;
  reference: string;
  /** Positive integer minor units. */
  amountMinor: number;
  /** Defaults to USD. */
  currency?: string;
  description: string;
  /**
   * Makes creation idempotent per purpose: the same key returns the same payment (forever, not
   * 24 h); the same key with another amount, currency or reference → 422 `idempotency_key_reused`.
   */
  idempotencyKey?: string;
  /**
   * Default false: a declined payment is final. True: the payer may try another card on the same
   * payment (booking and parking), until the owner withdraws it with `cancel`.
   */
  allowRetry?: boolean;
  returnUrl?: string;
}

export interface PayOptions {
  /** How long to wait for the gateway before answering PENDING; default `config.paymentTimeoutMs`. */
  timeoutMs?: number;
}

export interface RefundOptions {
  reason: string;
  /** Omitted: refund whatever is not refunded yet (a full refund). */
  amountMinor?: number;
  /**
   * Makes a partial refund idempotent (same key → no second refund). A full refund is always
   * idempotent: refunding a REFUNDED payment in full returns it unchanged.
   */
  idempotencyKey?: string;
}

export type PaymentEventType = 'payment.completed' | 'payment.failed' | 'payment.refunded';

export interface PaymentEvent {
  type: PaymentEventType;
  /** The payment as it is now (a handler may see a later state than the event's transition). */
  payment: Payment;
}

export type PaymentEventHandler = (event: PaymentEvent) => Promise<void>;

export interface PaymentsApi {
  /** 422 `invalid_payment` for a bad amount, currency or reference. */
  createPayment(input: CreatePaymentInput): Promise<Payment>;

  /**
   * Charges the card and returns the payment: COMPLETED, FAILED (declined; `failureCode` says
   * why) or PENDING with `chargeOutstanding` (the gateway did not answer in time; the outcome
   * arrives later by webhook or reconciliation and is announced through `onPaymentEvent`).
   * Throws 422 `invalid_payment_details` (nothing changes), 404 `payment_not_found`,
   * 409 `payment_already_completed` | `payment_in_progress` | `payment_not_payable` |
   * `payment_attempts_exhausted` (10 attempts per payment),
   * 503 `payment_gateway_unavailable`. Never call it inside a database transaction.
   */
  pay(paymentId: string, card: CardDetails, options?: PayOptions): Promise<Payment>;

  /**
   * Refunds a COMPLETED payment (in full, or `amountMinor` of it). Throws 404, 409
   * `payment_not_refundable` (PENDING/FAILED), 409 `refund_exceeds_remaining`, 503.
   */
  refund(paymentId: string, options: RefundOptions): Promise<Payment>;

  /**
   * Withdraws a payment nobody is paying: PENDING, or FAILED and open to another card (→ FAILED,
   * code `canceled`, `allowRetry` false: final, its page says it was replaced). Returns a payment
   * already final as it is; 409 while a charge is outstanding or once paid.
   */
  cancel(paymentId: string, reason?: string): Promise<Payment>;

  /** Undefined when unknown. */
  get(paymentId: string): Promise<Payment | undefined>;

  /** Payments of one owner record, newest first. */
  listByReference(purpose: PaymentPurpose, reference: string): Promise<Payment[]>;

  /**
   * Registers the owner's handler for COMPLETED / FAILED / REFUNDED outcomes of its payments,
   * however they happen (pay(), hosted page, webhook, reconciliation). At least once: it runs
   * right after the transition commits, and again from the reconciliation job until it returns
   * without throwing, so it must be idempotent. One handler per purpose.
   */
  onPaymentEvent(purpose: PaymentPurpose, handler: PaymentEventHandler): void;

  /** JSON for HTTP answers: snake_case, money as two-decimal numbers, ISO timestamps. */
  toJson(payment: Payment): PaymentJson;

  /** Controls of the built-in sandbox gateway (tests and demos). */
  sandbox: SandboxControls;
}

export interface SandboxControls {
  /**
   * Settles the outstanding charge of a payment (the 4000 0000 0000 0119 "never answers" card)
   * the way the gateway would later: it sends the signed `charge.succeeded` / `charge.failed`
   * webhook and resolves once it has been delivered and handled.
   */
  settle(paymentId: string, outcome: 'succeeded' | 'failed'): Promise<void>;
}

export interface PaymentJson {
  payment_id: string;
  purpose: PaymentPurpose;
  reference: string;
  description: string;
  amount: number;
  currency: string;
  status: PaymentStatus;
  allow_retry: boolean;
  card: { last4: string; brand: string } | null;
  failure_code: string | null;
  failure_message: string | null;
  charge_outstanding: boolean;
  refunded_amount: number;
  refund_reason: string | null;
  payment_url: string;
  return_url: string | null;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
  failed_at: string | null;
  refunded_at: string | null;
}

/** Test cards of the sandbox gateway (any future expiry, any cvc of the right length). */
export const TEST_CARDS = {
  success: '4242424242424242',
  declined: '4000000000000002',
  insufficientFunds: '4000000000009995',
  /** Never answers: the caller's timeout runs; settle it later with `sandbox.settle`. */
  noAnswer: '4000000000000119',
} as const;
