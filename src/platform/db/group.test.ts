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
  // Each batch is written until the test lets it end, so nothing here depends on timing.
  const log: string[] = [];
  const gates = new Map<string, () => void>();
  const write = async (inputs: string[]) => {
    const name = inputs.join(',');
    log.push(`start ${name}`);
    await new Promise<void>((resolve) => gates.set(name, resolve));
    log.push(`end ${name}`);
    return inputs.map((input) => input.toUpperCase());
  };
  const until = async (entry: string) => {
    for (let i = 0; i < 2000 && !log.includes(entry); i++) await sleep(1);
    assert.ok(log.includes(entry), `${entry} (log: ${log.join('; ')})`);
  };
  const end = (name: string) => gates.get(name)?.();
  const group = (exclusive: boolean) =>
    createGroup<string, string>({
      one: async (input) => (await write([input]))[0],
      many: write,
      key: (input) => input[0],
      exclusive,
      maxInFlight: 2,
    });

  const run = group(true);
  const first = Promise.all([run('a1'), run('b1')]);
  await until('start a1,b1');
  const [a2, c1] = [run('a2'), run('c1')];
  await until('start c1'); // another key goes beside the first batch
  await sleep(20);
  assert.ok(!log.includes('start a2'), 'a2 waits while the batch holding a1 is written');
  end('a1,b1');
  await until('start a2');
  end('c1');
  end('a2');
  assert.deepEqual([await first, await a2, await c1], [['A1', 'B1'], 'A2', 'C1']);

  // Without `exclusive`, a2 is written beside the batch holding a1.
  log.length = 0;
  gates.clear();
  const shared = group(false);
  const pair = Promise.all([shared('a1'), shared('b1')]);
  await until('start a1,b1');
  const alone = shared('a2');
  await until('start a2');
  end('a1,b1');
  end('a2');
  await Promise.all([pair, alone]);
});

test('lingerMs: under load a batch waits for the calls of the next moments; after a quiet spell a call goes at once', async () => {
  const batches: string[][] = [];
  const run = createGroup<string, string>({
    one: async (input) => {
      batches.push([input]);
      return input;
    },
    many: async (inputs) => {
      batches.push(inputs);
      return inputs;
    },
    maxInFlight: 1,
    lingerMs: 300,
  });
  // Quiet: no batch in the last 10 × 300 ms, so the first call does not wait 300 ms.
  // Written in the next turn of the event loop (before a callback queued after it), not 300 ms on.
  const first = run('first');
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(batches, [['first']], 'a call after a quiet spell waits for nobody');
  await first;
  // Load: batches follow each other, so this one waits and takes the calls made meanwhile (in
  // later turns of the event loop), which without the linger would each go in a batch of their own.
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
  const early = run('a');
  await nextTurn();
  const later = [run('b'), nextTurn().then(() => run('c'))];
  assert.deepEqual(await Promise.all([early, ...later]), ['a', 'b', 'c']);
  assert.deepEqual(batches, [['first'], ['a', 'b', 'c']]);
});
