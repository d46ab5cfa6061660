import { v7 } from 'uuid';
import { createRandomPool } from './random.ts';

const randomBytes = createRandomPool(16 * 256);
let msecs = -Infinity;
let seq = 0;

/**
 * `uuid`'s `v7()` — the time in milliseconds, then a counter seeded at random each millisecond,
 * so one process's ids only grow — with its random bytes taken from a pool (random.ts): `v7()`
 * asked `crypto.getRandomValues` for each id, which showed in the API's CPU profile.
 */
export function uuidv7(): string {
  const random = randomBytes(16);
  const now = Date.now();
  if (now > msecs) {
    seq = ((random[6] & 0x7f) << 24) | (random[7] << 16) | (random[8] << 8) | random[9];
    msecs = now;
  } else {
    seq = (seq + 1) | 0;
    if (seq === 0) msecs++;
  }
  return v7({ random, msecs, seq });
}

/**
 * The smallest UUIDv7 of the millisecond `at` (its 48-bit time, every other bit 0): `id < floor`
 * holds exactly for the ids made before `at`, so a table keyed by UUIDv7 finds its rows older
 * than a time on its primary key, without an index on a timestamp column.
 */
export function uuidv7Floor(at: Date): string {
  const hex = Math.max(0, at.getTime()).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`;
}
