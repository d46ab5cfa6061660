import { createHmac, timingSafeEqual } from 'node:crypto';
import { paymentError } from './errors.ts';
import type { WebhookEvent } from './gateway.ts';

/**
 * Webhook signatures in the Standard Webhooks layout (standardwebhooks.com), as Svix and
 * others send them: headers `webhook-id`, `webhook-timestamp` (Unix seconds) and
 * `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.rawBody">` (several signatures
 * may be listed, space-separated, during a secret rotation). The timestamp is signed, so a
 * captured request cannot be replayed after the 5-minute window; inside it the event id
 * (deduplicated in `payment_webhook_events`) stops replays.
 */
export const REPLAY_WINDOW_MS = 5 * 60_000;

export function signWebhook(
  secret: string,
  id: string,
  timestamp: Date,
  rawBody: string,
): Record<string, string> {
  const seconds = Math.floor(timestamp.getTime() / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(seconds),
    'webhook-signature': `v1,${signature(secret, id, seconds, rawBody)}`,
  };
}

function signature(secret: string, id: string, seconds: number, rawBody: string): string {
  return createHmac('sha256', secret).update(`${id}.${seconds}.${rawBody}`).digest('base64');
}

type Headers = Record<string, string | string[] | undefined>;

/** Verifies and parses a webhook; throws 401 (signature, timestamp) or 400 (payload). */
export function verifyWebhook(secret: string, rawBody: string, headers: Headers, now: Date): WebhookEvent {
  const id = single(headers['webhook-id']);
  const timestamp = single(headers['webhook-timestamp']);
  const signatures = single(headers['webhook-signature']);
  if (!id || !timestamp || !signatures || !/^\d{1,12}$/.test(timestamp)) {
    throw paymentError(
      'webhook_signature_invalid',
      'webhook-id, webhook-timestamp and webhook-signature are required',
    );
  }
  const expected = Buffer.from(signature(secret, id, Number(timestamp), rawBody));
  const matches = signatures.split(' ').some((entry) => {
    const [version, value] = entry.split(',', 2);
    const given = Buffer.from(value ?? '');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw paymentError('webhook_signature_invalid');
  // Checked after the signature, so an attacker learns nothing about the window from the answer.
  if (Math.abs(now.getTime() - Number(timestamp) * 1000) > REPLAY_WINDOW_MS) {
    throw paymentError('webhook_timestamp_stale');
  }
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

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
