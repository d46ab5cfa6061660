import type { ValidCard } from './card.ts';

/**
 * The port to a card payment gateway (Stripe, Adyen, the built-in sandbox). Charges carry our
 * idempotency key, so a retried or recovered request never charges twice, and can be looked up
 * by it after a crash or a timeout.
 */
export type ChargeStatus = 'pending' | 'succeeded' | 'failed';

export interface Charge {
  id: string;
  /** Our key for the attempt (payments.attempt_id). */
  idempotencyKey: string;
  paymentId: string;
  status: ChargeStatus;
  amountMinor: number;
  currency: string;
  last4: string;
  brand: string;
  failureCode: string | null;
  failureMessage: string | null;
}

export interface ChargeRequest {
  idempotencyKey: string;
  paymentId: string;
  amountMinor: number;
  currency: string;
  card: ValidCard;
  /** Aborted when the caller stops waiting; the charge may still complete at the gateway. */
  signal: AbortSignal;
}

export interface RefundRequest {
  chargeId: string;
  amountMinor: number;
  idempotencyKey: string;
}

export interface GatewayRefund {
  id: string;
  chargeId: string;
  amountMinor: number;
}

export interface PaymentGateway {
  readonly name: string;
  /** Resolves with the charge (any status); rejects with GatewayTimeout on abort, GatewayError when down. */
  createCharge(request: ChargeRequest): Promise<Charge>;
  /** The charge made with our idempotency key, or undefined if the gateway never saw it. */
  findCharge(idempotencyKey: string): Promise<Charge | undefined>;
  /** Idempotent per key. Rejects with GatewayError. */
  refund(request: RefundRequest): Promise<GatewayRefund>;
}

export class GatewayTimeout extends Error {
  override name = 'GatewayTimeout';
}

export class GatewayError extends Error {
  override name = 'GatewayError';
}

/** The body of a gateway webhook (`charge.succeeded`, `charge.failed`). */
export interface WebhookEvent {
  id: string;
  type: 'charge.succeeded' | 'charge.failed';
  created: string;
  data: { charge: Charge };
}
