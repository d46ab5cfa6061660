import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Webhook signatures in the Standard Webhooks layout (standardwebhooks.com), as Svix and others
 * send them: headers `webhook-id`, `webhook-timestamp` (Unix seconds) and
 * `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.rawBody">`; several signatures may
 * be listed, space-separated, while a secret is rotated. The timestamp is signed, so a captured
 * request cannot be replayed after the window. Used by the payment gateway's webhook and the
 * notification providers' delivery receipts; each maps the outcome to its own error codes.
 */
export const WEBHOOK_WINDOW_MS = 5 * 60_000;

export function signWebhook(secret: string, id: string, at: Date, rawBody: string): Record<string, string> {
  const seconds = Math.floor(at.getTime() / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(seconds),
    'webhook-signature': `v1,${signature(secret, id, seconds, rawBody)}`,
  };
}

type Headers = Record<string, string | string[] | undefined>;

export type WebhookCheck =
  | { ok: true; id: string }
  | { ok: false; reason: 'missing' | 'signature' | 'stale' };

/** Checks a webhook's signature, then its timestamp (so a forger learns nothing about the window). */
export function checkWebhook(secret: string, rawBody: string, headers: Headers, now: Date): WebhookCheck {
  const id = single(headers['webhook-id']);
  const timestamp = single(headers['webhook-timestamp']);
  const signatures = single(headers['webhook-signature']);
  if (!id || !timestamp || !signatures || !/^\d{1,12}$/.test(timestamp))
    return { ok: false, reason: 'missing' };
  const expected = Buffer.from(signature(secret, id, Number(timestamp), rawBody));
  const matches = signatures.split(' ').some((entry) => {
    const [version, value] = entry.split(',', 2);
    const given = Buffer.from(value ?? '');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) return { ok: false, reason: 'signature' };
  if (Math.abs(now.getTime() - Number(timestamp) * 1000) > WEBHOOK_WINDOW_MS)
    return { ok: false, reason: 'stale' };
  return { ok: true, id };
}

function signature(secret: string, id: string, seconds: number, rawBody: string): string {
  return createHmac('sha256', secret).update(`${id}.${seconds}.${rawBody}`).digest('base64');
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
