import { LRUCache } from 'lru-cache';
import { signature, signatureMatches } from '../platform/signing.ts';

/** Admission to a hot show's seat map: `<expires_ms>.<signature over show, user, expiry>`. */
export function admissionToken(secret: string, showId: string, userId: string, expiresAt: Date): string {
  const expires = String(expiresAt.getTime());
  return `${expires}.${signature(secret, 'admission', [showId, userId.toLowerCase(), expires])}`;
}

export function admissionValid(
  secret: string,
  token: string,
  showId: string,
  userId: string,
  now: Date,
): boolean {
  const match = /^(\d{1,15})\.([\w-]{43})$/.exec(token);
  if (!match) return false;
  if (Number(match[1]) <= now.getTime()) return false;
  return signatureMatches(secret, 'admission', [showId, userId.toLowerCase(), match[1]], match[2]);
}

/**
 * `admissionValid` with the tokens it has verified remembered: every hold of a hot show carries
 * its admission token, which stays the same for its 10 minutes, and an HMAC costs far more than
 * a map lookup on that hot path. A token is checked once per
 * (show, user, token); afterwards only its expiry is. Only tokens that passed the HMAC are kept —
 * a forged one is checked (and refused) every time — and at most `max` of them, least recently
 * used going first.
 */
export function createAdmissionCheck(secret: string, options: { max?: number } = {}) {
  const verified = new LRUCache<string, number>({ max: options.max ?? 10_000 });
  return (token: string, showId: string, userId: string, now: Date): boolean => {
    const key = `${showId}|${userId.toLowerCase()}|${token}`;
    const expires = verified.get(key);
    if (expires !== undefined) {
      if (expires > now.getTime()) return true;
      verified.delete(key);
      return false;
    }
    if (!admissionValid(secret, token, showId, userId, now)) return false;
    verified.set(key, Number(token.slice(0, token.indexOf('.'))));
    return true;
  };
}

export type AdmissionCheck = ReturnType<typeof createAdmissionCheck>;

/** A ticket: `TKT1.<booking id>.<signature>`; the QR code on a confirmed booking carries it. */
export function ticketToken(secret: string, bookingId: string): string {
  return `TKT1.${bookingId}.${signature(secret, 'ticket', [bookingId])}`;
}

export function ticketBookingId(secret: string, token: string): string | undefined {
  const match = /^TKT1\.([0-9a-f-]{36})\.([\w-]{43})$/.exec(token);
  if (!match) return undefined;
  return signatureMatches(secret, 'ticket', [match[1]], match[2]) ? match[1] : undefined;
}
