import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { dropNamespace, realServices, uniqueName } from '../../../../test/support/platform.ts';
import { systemClock } from '../../clock.ts';
import { createJetStreamQueue } from '../jetstream.ts';
import { keyedChains } from './partition-runner.ts';

// The runner's consumer side (take-over, pull, stop) needs NATS: contract.test.ts and
// crash.test.ts cover most of it, the test below what they cannot time. Then the per-key
// ordering it relies on.

test('a message waiting behind its key longer than the ack wait is delivered once', {
  skip: !realServices.natsUrl && 'needs NATS_URL',
  timeout: 60_000,
}, async () => {
  const url = realServices.natsUrl!;
  const namespace = uniqueName('r');
  const queue = await createJetStreamQueue(url, systemClock, { namespace, ackWaitMs: 1000, partitions: 1 });
  try {
    const handled: string[] = [];
    const consumer = queue.consume<{ n: number }>('slow', { group: 'g', retryDelaysMs: [100] }, async (d) => {
      handled.push(`${d.id}#${d.attempt}`);
      // The first takes three ack waits; the second waits that long behind it, pulled already.
      if (d.id === 'm1') await sleep(3000);
    });
    await queue.publish('slow', { id: 'm1', key: 'k', payload: { n: 1 } });
    await queue.publish('slow', { id: 'm2', key: 'k', payload: { n: 2 } });
    const deadline = Date.now() + 20_000;
    while (!handled.includes('m2#1') && Date.now() < deadline) await sleep(50);
    // A redelivered copy would come one ack wait after it (and with attempt 2).
    await sleep(1500);
    await consumer.stop();
    assert.deepEqual(handled, ['m1#1', 'm2#1']);
  } finally {
    await queue.close();
    await dropNamespace({ natsUrl: url, namespace, databaseUrl: undefined, redisUrl: undefined }, undefined);
  }
});

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
