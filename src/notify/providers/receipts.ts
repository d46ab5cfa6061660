import { randomUUID } from 'node:crypto';
import { defineErrors } from '../../platform/errors.ts';
import { checkWebhook, signWebhook } from '../../platform/webhook-signature.ts';

/**
 * Delivery receipts arrive as a signed webhook in the Standard Webhooks layout, like the payment
 * gateway's (src/platform/webhook-signature.ts). A receipt replayed inside the 5-minute window
 * only sets delivered_at again to the same value, so no event-id table is needed.
 */

export const receiptError = defineErrors({
  receipt_signature_invalid: { status: 401, title: 'The receipt signature is missing or wrong' },
  receipt_timestamp_stale: { status: 401, title: 'The receipt timestamp is outside the 5-minute window' },
  receipt_malformed: { status: 400, title: 'The receipt is not a delivery receipt' },
  unknown_provider: { status: 404, title: 'No such notification provider' },
  receipt_message_unknown: {
    status: 404,
    title: 'No message with this provider message id has been recorded (yet); send the receipt again later',
  },
});

/** `{id, type: 'message.delivered', data: {provider_message_id, delivered_at}}` */
export interface Receipt {
  id: string;
  type: 'message.delivered' | 'message.failed';
  data: { provider_message_id: string; delivered_at?: string };
}

export function signReceipt(
  secret: string,
  body: string,
  at: Date,
  id = randomUUID(),
): Record<string, string> {
  return { 'content-type': 'application/json', ...signWebhook(secret, id, at, body) };
}

/** A ready-to-send signed receipt (the dev inbox and the fake providers in tests use it). */
export function receiptRequest(
  secret: string,
  providerMessageId: string,
  deliveredAt: Date,
  now = deliveredAt,
) {
  const id = randomUUID();
  const body = JSON.stringify({
    id,
    type: 'message.delivered',
    data: { provider_message_id: providerMessageId, delivered_at: deliveredAt.toISOString() },
  } satisfies Receipt);
  return { body, headers: signReceipt(secret, body, now, id) };
}

type Headers = Record<string, string | string[] | undefined>;

export function verifyReceipt(secret: string, rawBody: string, headers: Headers, now: Date): Receipt {
  const check = checkWebhook(secret, rawBody, headers, now);
  if (!check.ok && check.reason === 'missing') {
    throw receiptError(
      'receipt_signature_invalid',
      'webhook-id, webhook-timestamp and webhook-signature are required',
    );
  }
  if (!check.ok)
    throw receiptError(check.reason === 'stale' ? 'receipt_timestamp_stale' : 'receipt_signature_invalid');
  let receipt: Receipt;
  try {
    receipt = JSON.parse(rawBody);
  } catch {
    throw receiptError('receipt_malformed', 'The body is not JSON');
  }
  const deliveredAt = receipt?.data?.delivered_at;
  if (
    !['message.delivered', 'message.failed'].includes(receipt?.type) ||
    typeof receipt.data.provider_message_id !== 'string' ||
    (deliveredAt !== undefined && Number.isNaN(Date.parse(deliveredAt)))
  ) {
    throw receiptError(
      'receipt_malformed',
      'Expected {id, type: message.delivered, data: {provider_message_id, delivered_at?}}',
    );
  }
  return receipt;
}
