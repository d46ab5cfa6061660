import type { ColumnType, Generated, Selectable } from 'kysely';
import type { PaymentEventType, PaymentPurpose, PaymentStatus } from './api.ts';
import type { ChargeStatus } from './gateway.ts';

/** Kysely types of the payments tables (created in migrations/index.ts). */
export type PaymentsTables = {
  payments: PaymentsTable;
  payment_refunds: RefundsTable;
  payment_webhook_events: WebhookEventsTable;
  payments_sandbox_charges: SandboxChargesTable;
  payments_sandbox_refunds: SandboxRefundsTable;
};

/** int8 money: read as BigInt (platform setting), written from a number. */
type Money = ColumnType<bigint, number, number>;

export interface PaymentsTable {
  id: string;
  purpose: PaymentPurpose;
  reference: string;
  description: string;
  amount_minor: Money;
  currency: string;
  status: PaymentStatus;
  allow_retry: boolean;
  idempotency_key: string | null;
  return_url: string | null;
  /** The one outstanding charge attempt (our idempotency key at the gateway). */
  attempt_id: string | null;
  attempt_started_at: Date | null;
  attempts: Generated<number>;
  gateway_charge_id: string | null;
  card_last4: string | null;
  card_brand: string | null;
  failure_code: string | null;
  failure_message: string | null;
  refunded_minor: ColumnType<bigint, number | undefined, number>;
  refund_reason: string | null;
  /** The outbox: a transition bumps `version`; the owner has seen it once `notified_version` equals it. */
  version: Generated<number>;
  notified_version: Generated<number>;
  /** The event of the latest transition, for the owner's handler. */
  last_event: PaymentEventType | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
  failed_at: Date | null;
  refunded_at: Date | null;
}

export type RefundStatus = 'PENDING' | 'SUCCEEDED' | 'FAILED';

export interface RefundsTable {
  id: string;
  payment_id: string;
  amount_minor: Money;
  reason: string;
  idempotency_key: string;
  status: RefundStatus;
  gateway_refund_id: string | null;
  created_at: Date;
  completed_at: Date | null;
}

export interface WebhookEventsTable {
  event_id: string;
  type: string;
  received_at: Date;
}

/** The sandbox gateway's own books: in a real deployment these live at the gateway. */
export interface SandboxChargesTable {
  id: string;
  idempotency_key: string;
  payment_id: string;
  status: ChargeStatus;
  amount_minor: Money;
  currency: string;
  last4: string;
  brand: string;
  failure_code: string | null;
  failure_message: string | null;
  refunded_minor: Money;
  created_at: Date;
  updated_at: Date;
}

export interface SandboxRefundsTable {
  id: string;
  idempotency_key: string;
  charge_id: string;
  amount_minor: Money;
  created_at: Date;
}

export type PaymentRow = Selectable<PaymentsTable>;
export type RefundRow = Selectable<RefundsTable>;
export type ChargeRow = Selectable<SandboxChargesTable>;
