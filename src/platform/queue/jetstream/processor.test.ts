import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import { systemClock } from '../../clock.ts';
import { type Delivery, PermanentError, RetryLater } from '../index.ts';
import {
  createMessageProcessor,
  type DeadLetterRecord,
  type InFlightMessage,
  type ProcessorOptions,
  semaphore,
} from './processor.ts';

/** A message that records what was done to it. */
function fakeMessage(deliveryCount = 1) {
  const done: string[] = [];
  const msg: InFlightMessage = {
    info: { deliveryCount },
    headers: { get: (name) => (name === 'Nats-Msg-Id' ? 'm-1' : '') },
    seq: 7,
    ack: () => done.push('ack'),
    nak: () => done.push('nak'),
    term: (reason) => done.push(`term ${reason}`),
    working: () => done.push('working'),
    ackAck: async () => {
      done.push('ackAck');
      return true;
    },
  };
  return { msg, done };
}

function setup(
  handler: (d: Delivery<string>) => Promise<void>,
  options: Partial<ProcessorOptions<string>> = {},
) {
  const events = new EventEmitter();
  const outcomes: string[] = [];
  const dead: DeadLetterRecord<string>[] = [];
  events.on('outcome', (topic, outcome) => outcomes.push(`${topic} ${outcome}`));
  const process = createMessageProcessor<string>({
    topic: 't',
    handler,
    concurrency: 2,
    retryDelaysMs: [5, 5],
    ackWaitMs: 30_000,
    clock: systemClock,
    events,
    publishDeadLetter: async (record) => dead.push(record),
    ...options,
  });
  return { process, outcomes, dead };
}

const envelope = { key: 'k', payload: 'p' };

test('a handled message is acked and counted', async () => {
  const seen: Delivery<string>[] = [];
  const { process, outcomes } = setup(async (d) => {
    seen.push(d);
  });
  const { msg, done } = fakeMessage(3);
  await process(msg, envelope, new AbortController().signal);
  assert.deepEqual(done, ['ack']);
  assert.deepEqual(outcomes, ['t acked']);
  assert.deepEqual(
    {
      id: seen[0].id,
      key: seen[0].key,
      payload: seen[0].payload,
      attempt: seen[0].attempt,
      topic: seen[0].topic,
    },
    { id: 'm-1', key: 'k', payload: 'p', attempt: 3, topic: 't' },
  );
});

test('a failure is retried after its delay with the next attempt number', async () => {
  const attempts: number[] = [];
  const { process, outcomes } = setup(async (d) => {
    attempts.push(d.attempt);
    if (d.attempt < 2) throw new Error('flaky');
  });
  const { msg, done } = fakeMessage();
  await process(msg, envelope, new AbortController().signal);
  assert.deepEqual(attempts, [1, 2]);
  assert.deepEqual(outcomes, ['t retried', 't acked']);
  assert.deepEqual(done, ['ack']);
});

test('RetryLater defers without spending an attempt', async () => {
  const attempts: number[] = [];
  const { process, outcomes } = setup(async (d) => {
    attempts.push(d.attempt);
    if (attempts.length === 1) throw new RetryLater(5);
  });
  await process(fakeMessage().msg, envelope, new AbortController().signal);
  assert.deepEqual(attempts, [1, 1]);
  assert.deepEqual(outcomes, ['t deferred', 't acked']);
});

test('the last failed attempt, or a PermanentError, goes to the dead letters', async () => {
  const { process, outcomes, dead } = setup(async () => {
    throw new Error('down');
  });
  const { msg, done } = fakeMessage();
  await process(msg, envelope, new AbortController().signal);
  assert.deepEqual(outcomes, ['t retried', 't retried', 't dead_lettered']);
  assert.deepEqual(done, ['ackAck']);
  assert.equal(dead.length, 1);
  assert.deepEqual(
    { ...dead[0], deadAt: typeof dead[0].deadAt },
    { messageId: 'm-1', key: 'k', payload: 'p', attempts: 3, error: 'Error: down', deadAt: 'string' },
  );

  const permanent = setup(async () => {
    throw new PermanentError('bad address');
  });
  await permanent.process(fakeMessage().msg, envelope, new AbortController().signal);
  assert.deepEqual(permanent.outcomes, ['t dead_lettered']);
  assert.equal(permanent.dead[0].attempts, 1);
});

test('a release during the retry wait hands the message back (nak)', async () => {
  const abort = new AbortController();
  const { process, outcomes } = setup(
    async () => {
      setTimeout(() => abort.abort(new Error('released')), 5);
      throw new Error('flaky');
    },
    { retryDelaysMs: [60_000] },
  );
  const { msg, done } = fakeMessage();
  await process(msg, envelope, abort.signal);
  assert.deepEqual(outcomes, ['t retried']);
  assert.deepEqual(done, ['nak']);
});

test('a message that is not JSON is terminated, the handler never sees it', async () => {
  let called = false;
  const { process } = setup(async () => {
    called = true;
  });
  const { msg, done } = fakeMessage();
  await process(msg, undefined, new AbortController().signal);
  assert.deepEqual(done, ['term not JSON']);
  assert.equal(called, false);
});

test('a long handler keeps its message alive with working()', async () => {
  const { process } = setup(() => new Promise((resolve) => setTimeout(resolve, 500)), { ackWaitMs: 600 });
  const { msg, done } = fakeMessage();
  await process(msg, envelope, new AbortController().signal);
  assert.ok(done.filter((d) => d === 'working').length >= 1, done.join());
  assert.equal(done.at(-1), 'ack');
});

test('at most `concurrency` handlers run at once', async () => {
  let running = 0;
  let most = 0;
  const { process } = setup(async () => {
    running++;
    most = Math.max(most, running);
    await new Promise((resolve) => setTimeout(resolve, 10));
    running--;
  });
  await Promise.all(
    Array.from({ length: 6 }, () => process(fakeMessage().msg, envelope, new AbortController().signal)),
  );
  assert.equal(most, 2);
});

test('semaphore: waiters get their turn in arrival order', async () => {
  const permits = semaphore(1);
  const order: number[] = [];
  await permits.acquire();
  const waiting = [1, 2].map((n) => permits.acquire().then(() => order.push(n)));
  permits.release();
  await waiting[0];
  permits.release();
  await waiting[1];
  assert.deepEqual(order, [1, 2]);
});
