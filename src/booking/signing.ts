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

/** A ticket: `TKT1.<booking id>.<signature>`; the QR code on a confirmed booking carries it. */
export function ticketToken(secret: string, bookingId: string): string {
  return `TKT1.${bookingId}.${signature(secret, 'ticket', [bookingId])}`;
}

export function ticketBookingId(secret: string, token: string): string | undefined {
  const match = /^TKT1\.([0-9a-f-]{36})\.([\w-]{43})$/.exec(token);
  if (!match) return undefined;
  return signatureMatches(secret, 'ticket', [match[1]], match[2]) ? match[1] : undefined;
}
