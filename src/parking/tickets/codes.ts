import { randomInt } from 'node:crypto';

/**
 * Short ticket codes a driver can read out and type at a panel: 7 random characters and a
 * check character, from 31 characters without 0/O, 1/I and Z (which people and fonts confuse
 * with O, I and 2). Printed as `ABCD-EFGH`; typed in any case, with or without the dash.
 *
 * The check character makes the weighted sum (weights 8…1) of the character values a multiple
 * of 31. 31 is prime and every value and weight is below it, so every single mistyped character
 * and every swap of two neighbouring characters changes the sum by a non-multiple of 31: a typo
 * is caught at the panel instead of naming another driver's ticket.
 */
export const CODE_ALPHABET = '23456789ABCDEFGHJKLMNPQRSTUVWXY';
const P = CODE_ALPHABET.length; // 31, prime
const BODY_LENGTH = 7;
export const CODE_LENGTH = BODY_LENGTH + 1;

function weightedSum(chars: string): number {
  let sum = 0;
  for (let i = 0; i < chars.length; i++) sum += (CODE_LENGTH - i) * CODE_ALPHABET.indexOf(chars[i]);
  return sum % P;
}

export function checkCharacter(body: string): string {
  // The check character has weight 1: it brings the sum to a multiple of P.
  return CODE_ALPHABET[(P - weightedSum(body)) % P];
}

/** A new code (34.7 random bits); uniqueness among the vehicles inside is the database's (a unique index). */
export function newTicketCode(): string {
  let body = '';
  for (let i = 0; i < BODY_LENGTH; i++) body += CODE_ALPHABET[randomInt(P)];
  return body + checkCharacter(body);
}

/** Upper case without spaces and dashes: `abcd efgh` → `ABCDEFGH`. */
export function normaliseCode(raw: string): string {
  return raw
    .normalize('NFKC')
    .toUpperCase()
    .replace(/[\s\-.]/g, '');
}

/** A normalised code of the right length and alphabet whose check character matches. */
export function isValidCode(code: string): boolean {
  if (code.length !== CODE_LENGTH) return false;
  for (const char of code) if (!CODE_ALPHABET.includes(char)) return false;
  return weightedSum(code) === 0;
}

/** `ABCDEFGH` → `ABCD-EFGH`, as printed on the ticket. */
export function formatCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What a panel or a driver typed: the ticket's UUID, its short code, or neither. */
export type TicketRef = { id: string } | { code: string } | { invalid: string };

export function parseTicketRef(raw: string): TicketRef {
  const trimmed = raw.trim();
  if (UUID.test(trimmed)) return { id: trimmed.toLowerCase() };
  const code = normaliseCode(trimmed);
  return isValidCode(code) ? { code } : { invalid: trimmed };
}
