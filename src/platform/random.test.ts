import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createRandomPool } from './random.ts';

test('random pool: each byte handed out once, across refills, and odd sizes never overrun the block', () => {
  const take = createRandomPool(64);
  const seen = new Set<string>();
  // 200 takes of 24 bytes from a 64-byte block: a refill every 2 takes, 16 bytes left over each time.
  for (let i = 0; i < 200; i++) {
    const bytes = take(24);
    assert.equal(bytes.length, 24);
    const hex = bytes.toString('hex');
    assert.ok(!seen.has(hex), 'a run of bytes came out twice');
    seen.add(hex);
  }
  assert.throws(() => take(65), RangeError);
});
