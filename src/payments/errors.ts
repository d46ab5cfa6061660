import { defineErrors } from '../platform/errors.ts';

/** The payments module's error catalogue (problem+json `code` → status). */
export const paymentError = defineErrors({
  payment_not_found: { status: 404, title: 'No such payment' },
  invalid_payment_details: { status: 422, title: 'The card details are not valid' },
  invalid_payment: { status: 422, title: 'The payment cannot be created' },
  invalid_refund: { status: 422, title: 'The refund is not valid' },
  payment_declined: { status: 402, title: 'The card was declined' },
  payment_already_completed: { status: 409, title: 'The payment has already been completed' },
  payment_in_progress: { status: 409, title: 'A charge for this payment is still being processed' },
  payment_not_payable: { status: 409, title: 'The payment can no longer be paid' },
  payment_attempts_exhausted: { status: 409, title: 'Too many card attempts for this payment' },
  payment_not_refundable: { status: 409, title: 'Only a completed payment can be refunded' },
  refund_exceeds_remaining: { status: 409, title: 'The refund is larger than what is left to refund' },
  no_outstanding_charge: { status: 409, title: 'The payment has no outstanding charge to settle' },
  idempotency_key_reused: { status: 422, title: 'Idempotency key reused with a different payment' },
  payment_gateway_unavailable: {
    status: 503,
    title: 'The payment gateway is unavailable, try again shortly',
  },
  webhook_signature_invalid: { status: 401, title: 'The webhook signature is missing or invalid' },
  webhook_timestamp_stale: { status: 401, title: 'The webhook timestamp is outside the 5-minute window' },
  webhook_malformed: { status: 400, title: 'The webhook payload is malformed' },
});
