import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Signed tokens (HMAC-SHA256 with the app secret). Each purpose is part of the signed text, so a
 * token made for one purpose (an admission, a ticket, a user) never passes as another.
 */
export function signature(secret: string, purpose: string, parts: string[]): string {
  return createHmac('sha256', secret)
    .update(`${purpose}|${parts.join('|')}`)
    .digest('base64url');
}

export function signatureMatches(secret: string, purpose: string, parts: string[], given: string): boolean {
  const expected = Buffer.from(signature(secret, purpose, parts));
  const actual = Buffer.from(given);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
