import { randomFillSync } from 'node:crypto';
import { v7 } from 'uuid';

const pool = new Uint8Array(16 * 256);
let used = pool.length;
let msecs = -Infinity;
let seq = 0;

/**
 * `uuid`'s `v7()` — the time in milliseconds, then a counter seeded at random each millisecond,
 * so one process's ids only grow — with its random bytes taken from a pool refilled every 256
 * ids: `v7()` asked `crypto.getRandomValues` for each id (2.8 % of the API's CPU under
 * notify-accept, with a `getpid` system call inside OpenSSL every time).
 */
export function uuidv7(): string {
  if (used === pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const random = pool.subarray(used, used + 16);
  used += 16;
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
