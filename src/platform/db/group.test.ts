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

test('exclusive: a key waits while a batch holding it is written; other keys go on', async () => {
  const log: string[] = [];
  const write = async (inputs: string[]) => {
    log.push(`start ${inputs.join(',')}`);
    await sleep(20);
    log.push(`end ${inputs.join(',')}`);
    return inputs.map((input) => input.toUpperCase());
  };
  const run = (exclusive: boolean) =>
    createGroup<string, string>({
      one: async (input) => (await write([input]))[0],
      many: write,
      key: (input) => input[0],
      exclusive,
      maxInFlight: 2,
    });
  const exclusiveRun = run(true);
  // a1 and b1 share the first batch; a2 (a's key again) must wait for it, c1 need not.
  const first = Promise.all([exclusiveRun('a1'), exclusiveRun('b1')]);
  await sleep(1);
  const [a2, c1] = [exclusiveRun('a2'), exclusiveRun('c1')];
  assert.deepEqual([await first, await a2, await c1], [['A1', 'B1'], 'A2', 'C1']);
  assert.deepEqual(log.slice(0, 3), ['start a1,b1', 'start c1', 'end a1,b1']);
  assert.equal(log[3], 'start a2');

  // Without `exclusive`, a2 runs beside the first batch.
  log.length = 0;
  const shared = run(false);
  const pair = Promise.all([shared('a1'), shared('b1')]);
  await sleep(1);
  await Promise.all([shared('a2'), pair]);
  assert.deepEqual(log.slice(0, 2), ['start a1,b1', 'start a2']);
});
