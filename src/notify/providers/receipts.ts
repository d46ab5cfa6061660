import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { defineErrors } from '../../platform/errors.ts';

/**
 * Delivery receipts arrive as a signed webhook in the Standard Webhooks layout, like the payment
 * gateway's (src/payments/webhook.ts; its verifier is tied to payment events, so this is the
 * generic half): `webhook-id`, `webhook-timestamp` (Unix seconds) and
 * `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.rawBody">`. The timestamp is signed
 * and must be within 5 minutes; a receipt replayed inside the window only sets delivered_at again
 * to the same value, so no event-id table is needed.
 */
export const RECEIPT_WINDOW_MS = 5 * 60_000;

export const receiptError = defineErrors({
  receipt_signature_invalid: { status: 401, title: 'The receipt signature is missing or wrong' },
  receipt_timestamp_stale: { status: 401, title: 'The receipt timestamp is outside the 5-minute window' },
  receipt_malformed: { status: 400, title: 'The receipt is not a delivery receipt' },
  unknown_provider: { status: 404, title: 'No such notification provider' },
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
  const seconds = Math.floor(at.getTime() / 1000);
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(seconds),
    'webhook-signature': `v1,${sign(secret, id, seconds, body)}`,
  };
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

function sign(secret: string, id: string, seconds: number, body: string): string {
  return createHmac('sha256', secret).update(`${id}.${seconds}.${body}`).digest('base64');
}

type Headers = Record<string, string | string[] | undefined>;
const single = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

export function verifyReceipt(secret: string, rawBody: string, headers: Headers, now: Date): Receipt {
  const id = single(headers['webhook-id']);
  const timestamp = single(headers['webhook-timestamp']);
  const signatures = single(headers['webhook-signature']);
  if (!id || !timestamp || !signatures || !/^\d{1,12}$/.test(timestamp)) {
    throw receiptError(
      'receipt_signature_invalid',
      'webhook-id, webhook-timestamp and webhook-signature are required',
    );
  }
  const expected = Buffer.from(sign(secret, id, Number(timestamp), rawBody));
  // Several signatures may be listed (space-separated) while a secret is rotated.
  const matches = signatures.split(' ').some((entry) => {
    const [version, value] = entry.split(',', 2);
    const given = Buffer.from(value ?? '');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw receiptError('receipt_signature_invalid');
  if (Math.abs(now.getTime() - Number(timestamp) * 1000) > RECEIPT_WINDOW_MS) {
    throw receiptError('receipt_timestamp_stale');
  }
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
