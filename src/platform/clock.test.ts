import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createOffsetClock, createTestClock } from './clock.ts';

test('an offset clock follows its base and only moves forward', () => {
  const base = createTestClock('2026-01-05T12:00:00Z');
  const clock = createOffsetClock(base);
  assert.equal(clock.now().toISOString(), '2026-01-05T12:00:00.000Z');
  clock.advance(90_000);
  assert.equal(clock.now().toISOString(), '2026-01-05T12:01:30.000Z');
  base.advance(1000);
  assert.equal(clock.now().toISOString(), '2026-01-05T12:01:31.000Z');
  assert.throws(() => clock.advance(-1), RangeError);
});
