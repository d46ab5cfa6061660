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
