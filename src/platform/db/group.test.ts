import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createGroup, rolledBack } from './group.ts';

/** A group whose shared statement fails once with `error`; `one` always succeeds. */
function failingOnce(error: Error) {
  const calls: string[][] = [];
  let failed = false;
  const run = createGroup<string, string>({
    one: async (input) => {
      calls.push([input]);
      return `${input}!`;
    },
    many: async (inputs) => {
      calls.push(inputs);
      await sleep(5);
      if (!failed) {
        failed = true;
        throw error;
      }
      return inputs.map((input) => `${input}!`);
    },
    maxInFlight: 1,
  });
  return { run, calls };
}

/** As pg and PGlite report a server's error: a SQLSTATE and a severity. */
const pgError = (code: string, message: string) =>
  Object.assign(new Error(message), { code, severity: 'ERROR' });

test('a statement PostgreSQL refused is tried again for each member alone', async () => {
  const { run, calls } = failingOnce(pgError('23505', 'duplicate key'));
  await run('lead'); // takes the free slot alone; the next three share a statement
  const answers = await Promise.all(['a', 'b', 'c'].map(run));
  assert.deepEqual(answers, ['a!', 'b!', 'c!']);
  assert.deepEqual(calls.slice(1), [['a', 'b', 'c'], ['a'], ['b'], ['c']]);
});

test('a statement that may have committed (connection lost) is not tried again: every member gets the error', async () => {
  const { run, calls } = failingOnce(pgError('57P01', 'terminating connection due to administrator command'));
  await run('lead');
  const results = await Promise.allSettled(['a', 'b', 'c'].map(run));
  assert.deepEqual(
    results.map((result) => result.status),
    ['rejected', 'rejected', 'rejected'],
  );
  assert.deepEqual(calls.slice(1), [['a', 'b', 'c']]);
});

test('rolledBack: only PostgreSQL refusals outside the connection classes', () => {
  assert.equal(rolledBack(pgError('23505', 'duplicate key')), true);
  assert.equal(rolledBack(pgError('22P05', 'unsupported Unicode escape')), true);
  assert.equal(rolledBack(pgError('08006', 'connection failure')), false);
  assert.equal(rolledBack(pgError('57P01', 'admin shutdown')), false);
  assert.equal(rolledBack(new Error('Connection terminated unexpectedly')), false);
  assert.equal(rolledBack(Object.assign(new Error('socket'), { code: 'ECONNRESET' })), false);
  assert.equal(rolledBack(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' })), false);
});
