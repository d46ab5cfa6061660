import { checkWebhook } from '../platform/webhook-signature.ts';
import { paymentError } from './errors.ts';
import type { WebhookEvent } from './gateway.ts';

type Headers = Record<string, string | string[] | undefined>;

/**
 * Verifies and parses one of the gateway's webhooks, signed in the Standard Webhooks layout
 * (src/platform/webhook-signature.ts); throws 401 (signature, timestamp) or 400 (payload). Inside
 * the 5-minute window the event id (deduplicated in `payment_webhook_events`) stops replays.
 */
export function verifyWebhook(secret: string, rawBody: string, headers: Headers, now: Date): WebhookEvent {
  const check = checkWebhook(secret, rawBody, headers, now);
  if (!check.ok && check.reason === 'missing') {
    throw paymentError(
      'webhook_signature_invalid',
      'webhook-id, webhook-timestamp and webhook-signature are required',
    );
  }
  if (!check.ok)
    throw paymentError(check.reason === 'stale' ? 'webhook_timestamp_stale' : 'webhook_signature_invalid');
  const id = check.id;
  let event: WebhookEvent;
  try {
    event = JSON.parse(rawBody);
  } catch {
    throw paymentError('webhook_malformed', 'The body is not JSON');
  }
  const charge = event?.data?.charge;
  if (
    event?.id !== id ||
    !['charge.succeeded', 'charge.failed'].includes(event.type) ||
    typeof charge?.paymentId !== 'string' ||
    typeof charge.idempotencyKey !== 'string' ||
    typeof charge.id !== 'string'
  ) {
    throw paymentError(
      'webhook_malformed',
      'Expected {id, type: charge.succeeded|charge.failed, data: {charge}}',
    );
  }
  return event;
}
