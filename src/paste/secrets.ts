import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { createRandomPool } from '../platform/random.ts';

// Cast: promisify picks scrypt's overload without options; this is the one with them.
const scryptAsync = promisify(scrypt) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>;

/**
 * scrypt with OWASP's minimum: N=2^17 would be stronger, but each check would then take 128 MB
 * and long enough that password guesses become a cheap way to exhaust the server.
 */
const N = 2 ** 15;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;
const MAXMEM = 64 * 1024 * 1024;

/** `scrypt$N$r$p$salt$hash` (base64url), so parameters can be raised later without breaking old hashes. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scryptAsync(password.normalize('NFC'), salt, KEY_LENGTH, {
    N,
    r: R,
    p: P,
    maxmem: MAXMEM,
  });
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scryptAsync(
    password.normalize('NFC'),
    Buffer.from(salt, 'base64url'),
    expected.length,
    {
      N: Number(n),
      r: Number(r),
      p: Number(p),
      maxmem: MAXMEM,
    },
  );
  return timingSafeEqual(actual, expected);
}

const TOKEN_BYTES = 32;
/** Every create makes a delete token: their bytes come from a pool (platform/random.ts). */
const tokenBytes = createRandomPool(128 * TOKEN_BYTES);

/** A random token and the SHA-256 we store instead of it (API keys, delete tokens). */
export function newToken(prefix: string): { token: string; hash: string } {
  const token = `${prefix}${tokenBytes(TOKEN_BYTES).toString('base64url')}`;
  return { token, hash: sha256(token) };
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Compares a presented token with a stored hash in constant time. */
export function tokenMatches(token: string, storedHash: string): boolean {
  const actual = Buffer.from(sha256(token), 'hex');
  const expected = Buffer.from(storedHash, 'hex');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
