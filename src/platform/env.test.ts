import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError } from './config-error.ts';
import { envReader } from './env.ts';

test('a module reads its settings with defaults; a bad value names its variable', () => {
  const read = envReader({ A: '7', B: 'yes', C: ' blue ', D: '', L: 'x, y' });
  assert.equal(read.int('A', 1, 0, 10), 7);
  assert.equal(read.int('MISSING', 3, 0, 10), 3);
  assert.equal(read.int('D', 4, 0, 10), 4, 'empty is unset');
  assert.equal(read.bool('B', false), true);
  assert.equal(read.oneOf('C', 'red', ['red', 'blue']), 'blue');
  assert.deepEqual(read.list('L', ['x'], ['x', 'y', 'z']), ['x', 'y']);
  assert.equal(read.optional('D'), undefined);
  assert.throws(
    () => read.int('A', 1, 0, 5),
    (e: Error) => e instanceof ConfigError && /^A must be an integer from 0 to 5/.test(e.message),
  );
  assert.throws(() => read.oneOf('C', 'red', ['red']), /^ConfigError: C must be one of red/);
});

test('durations: a number and a unit, within bounds', () => {
  const read = envReader({ KEEP: '30d', SHORT: '1.5m', BARE: '30', LONG: '400d' });
  const year = 366 * 86_400_000;
  assert.equal(read.duration('KEEP', '7d', 60_000, year), 30 * 86_400_000);
  assert.equal(read.duration('SHORT', '7d', 60_000, year), 90_000);
  assert.equal(read.duration('MISSING', '12h', 60_000, year), 12 * 3_600_000);
  assert.throws(
    () => read.duration('BARE', '7d', 60_000, year),
    /^ConfigError: BARE must be a duration like 30d/,
  );
  assert.throws(() => read.duration('LONG', '7d', 60_000, year), /from 60 s to 366 days, got "400d"/);
});
