/**
 * What parking needs from the shared payments module, in parking's words. payments-adapter.ts
 * maps it onto `src/payments/api.ts`; the checkout knows nothing else about payments.
 */
export type PaymentStatus = 'PENDING' | 'COMPLETED' | 'FAILED' | 'REFUNDED';

/** Card details as DESIGN.md fixes them (`payment_details`); never stored or logged here. */
export interface CardDetails {
  card_number: string;
  exp_month: number;
  exp_year: number;
  cvc: string;
}

export interface GatewayPayment {
  id: string;
  status: PaymentStatus;
  amountMinor: number;
  currency: string;
  /** The hosted payment page. */
  paymentUrl: string;
  failureReason: string | null;
  /** A charge is still on its way (the gateway did not answer in time). */
  chargeOutstanding: boolean;
}

export interface PaymentOutcome {
  paymentId: string;
  status: PaymentStatus;
  failureReason?: string | null;
}

export interface ParkingPayments {
  /** A PENDING payment; the same idempotency key returns the same payment. A declined payment is final. */
  create(request: {
    amountMinor: number;
    currency: string;
    reference: string;
    description: string;
    idempotencyKey: string;
  }): Promise<GatewayPayment>;
  /** Charges a card; one charge at a time per payment (a second one is a 409 from payments). */
  pay(paymentId: string, card: CardDetails): Promise<GatewayPayment>;
  /** Gives up on a PENDING payment nobody is paying (→ FAILED); 409 once a charge is on its way. */
  cancel(paymentId: string, reason: string): Promise<GatewayPayment>;
  /** A full refund; refunding a refunded payment again changes nothing. */
  refund(paymentId: string, reason: string): Promise<GatewayPayment>;
  /** Outcomes however they happen (card at the panel, hosted page, webhook, reconciliation). */
  onOutcome(handler: (outcome: PaymentOutcome) => Promise<void>): void;
}
