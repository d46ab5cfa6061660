import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { keyedChains } from './partition-runner.ts';

// The runner's consumer side (take-over, pull, stop) needs NATS: contract.test.ts and
// crash.test.ts cover it. Here the per-key ordering it relies on.

test('tasks of one key run one after another in order; other keys run meanwhile', async () => {
  const chains = keyedChains(() => {});
  const log: string[] = [];
  const task = (name: string, ms: number) => async () => {
    log.push(`start ${name}`);
    await sleep(ms);
    log.push(`end ${name}`);
  };
  chains.run('a', task('a1', 30));
  chains.run('a', task('a2', 1));
  chains.run('b', task('b1', 1));
  await chains.settled();
  assert.deepEqual(log, ['start a1', 'start b1', 'end b1', 'end a1', 'start a2', 'end a2']);
});

test('a failing task is reported and its key goes on', async () => {
  const errors: unknown[] = [];
  const chains = keyedChains((error) => errors.push(error));
  const ran: string[] = [];
  chains.run('a', async () => {
    throw new Error('boom');
  });
  chains.run('a', async () => {
    ran.push('second');
  });
  await chains.settled();
  assert.deepEqual(ran, ['second']);
  assert.equal((errors[0] as Error).message, 'boom');
});

test('settled waits for tasks queued behind running ones', async () => {
  const chains = keyedChains(() => {});
  let finished = 0;
  for (let i = 0; i < 3; i++)
    chains.run('k', async () => {
      await sleep(5);
      finished++;
    });
  await chains.settled();
  assert.equal(finished, 3);
});
