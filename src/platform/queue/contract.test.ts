import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTestAdapters, realServices, testConfig, uniqueName } from '../../../test/support/platform.ts';
import { systemClock } from '../clock.ts';
import { createDatabase, type Database } from '../db/index.ts';
import { migrateModule } from '../db/migrate.ts';
import { platformMigrations } from '../migrations.ts';
import { type Delivery, PermanentError, type Queue, RetryLater } from './index.ts';
import { createJetStreamQueue } from './jetstream.ts';
import { createPostgresQueue } from './postgres.ts';

/** Two handles on one queue backend, as two worker processes would have. */
type Pair = { one: Queue; two: Queue; close(): Promise<void> };

async function postgresPair(databaseUrl?: string): Promise<Pair> {
  const schema = databaseUrl ? uniqueName('q') : undefined;
  const open = async () => {
    const database = await createDatabase({ databaseUrl, dataDir: 'memory://', schema });
    await migrateModule(database, 'platform', platformMigrations);
    return database;
  };
  const first = await open();
  const second: Database = databaseUrl ? await open() : first;
  // Default lease (30 s): a starved test machine must not make a slow handler look abandoned.
  const one = createPostgresQueue(first.db, systemClock, { pollMs: 20 });
  const two = createPostgresQueue(second.db, systemClock, { pollMs: 20 });
  return {
    one,
    two,
    async close() {
      await one.close();
      await two.close();
      if (second !== first) await second.close();
      await first.close();
      if (schema) {
        const adapters = await createTestAdapters(testConfig({ REDIS_URL: '', NATS_URL: '' }), systemClock, {
          schema,
        });
        await adapters.close();
      }
    },
  };
}

async function jetstreamPair(url: string): Promise<Pair> {
  const namespace = uniqueName('q');
  const options = { namespace, leaseMs: 3000, ackWaitMs: 10_000, partitions: 8 };
  const one = await createJetStreamQueue(url, systemClock, options);
  const two = await createJetStreamQueue(url, systemClock, options);
  return {
    one,
    two,
    async close() {
      await one.close();
      await two.close();
      const adapters = await createTestAdapters(
        testConfig({ NATS_URL: url, NAMESPACE: namespace, REDIS_URL: '', DATABASE_URL: '' }),
        systemClock,
      );
      await adapters.close();
    },
  };
}

const subjects: [string, () => Promise<Pair>][] = [['postgres queue on PGlite', () => postgresPair()]];
if (realServices.databaseUrl) {
  const url = realServices.databaseUrl;
  subjects.push(['postgres queue on PostgreSQL', () => postgresPair(url)]);
}
if (realServices.natsUrl) {
  const url = realServices.natsUrl;
  subjects.push(['jetstream queue', () => jetstreamPair(url)]);
}

async function until(check: () => boolean, ms: number, what: string) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

for (const [name, make] of subjects) {
  // The whole suite, not one test: on a loaded shared machine opening a pair (a fresh PGlite, or
  // streams on NATS) takes seconds, eight times over; each wait inside a test keeps its own deadline.
  describe(`queue contract: ${name}`, { timeout: 300_000 }, () => {
    let pair: Pair;
    const opened: Pair[] = [];
    const open = async () => {
      const made = await make();
      let closed: Promise<void> | undefined;
      pair = { ...made, close: () => (closed ??= made.close()) };
      opened.push(pair);
      return pair;
    };
    // Every pair, also those of a test that failed half-way, so no consumer outlives the file.
    after(() => Promise.all(opened.map((p) => p.close())));

    test('at-least-once: a failed attempt is delivered again, then acknowledged', async () => {
      const { one } = await open();
      const seen: number[] = [];
      const consumer = one.consume<{ n: number }>(
        'alo',
        { group: 'g', retryDelaysMs: [50, 50] },
        async (d) => {
          seen.push(d.attempt);
          if (d.attempt === 1) throw new Error('provider timeout');
        },
      );
      await one.publish('alo', { id: 'm1', key: 'u1', payload: { n: 1 } });
      await until(() => seen.length === 2, 20_000, 'the retry');
      await sleep(200);
      assert.deepEqual(seen, [1, 2]);
      assert.equal(await one.depth('alo'), 0);
      await consumer.stop();
      await pair.close();
    });

    test('a trace context given at publish comes back on the delivery, confirmed or not; none when not given', async () => {
      const { one } = await open();
      const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
      const seen = new Map<string, Record<string, string> | undefined>();
      const consumer = one.consume('traced', { group: 'g', retryDelaysMs: [] }, async (d) => {
        seen.set(d.id, d.traceContext);
      });
      await one.publish('traced', { id: 't-1', key: 'k', payload: {}, traceContext: { traceparent } });
      await one.publishUnconfirmed('traced', {
        id: 't-2',
        key: 'k',
        payload: {},
        traceContext: { traceparent, tracestate: 'vendor=1' },
      });
      await one.publish('traced', { id: 't-3', key: 'k', payload: {} });
      await until(() => seen.size === 3, 20_000, 'the messages');
      assert.deepEqual(Object.fromEntries(seen), {
        't-1': { traceparent },
        't-2': { traceparent, tracestate: 'vendor=1' },
        't-3': undefined,
      });
      await consumer.stop();
      await pair.close();
    });

    test('a duplicate id inside the window is dropped at publish', async () => {
      const { one, two } = await open();
      const first = await one.publish('dedup', { id: 'same', key: 'u1', payload: { v: 1 } });
      const again = await two.publish('dedup', { id: 'same', key: 'u1', payload: { v: 2 } });
      assert.equal(first.duplicate, false);
      assert.equal(again.duplicate, true);
      const payloads: unknown[] = [];
      const consumer = one.consume('dedup', { group: 'g', retryDelaysMs: [] }, async (d) => {
        payloads.push(d.payload);
      });
      await until(() => payloads.length === 1, 20_000, 'the message');
      await sleep(300);
      assert.deepEqual(payloads, [{ v: 1 }]);
      await consumer.stop();
      await pair.close();
    });

    test('publishUnconfirmed: delivered in order with confirmed publishes, deduplicated by id alike', async () => {
      const { one, two } = await open();
      await one.publishUnconfirmed('unconfirmed', { id: 'u-1', key: 'k', payload: { n: 1 } });
      await one.publish('unconfirmed', { id: 'u-2', key: 'k', payload: { n: 2 } });
      await two.publishUnconfirmed('unconfirmed', { id: 'u-1', key: 'k', payload: { n: 99 } });
      await one.publishUnconfirmed('unconfirmed', { id: 'u-3', key: 'k', payload: { n: 3 } });
      const seen: number[] = [];
      const consumer = one.consume<{ n: number }>(
        'unconfirmed',
        { group: 'g', retryDelaysMs: [] },
        async (d) => {
          seen.push(d.payload.n);
        },
      );
      await until(() => seen.length >= 3, 20_000, 'the messages');
      await sleep(300);
      assert.deepEqual(seen, [1, 2, 3]);
      await consumer.stop();
      await pair.close();
    });

    test('per-key order with two competing consumers, and both share the work', async () => {
      const { one, two } = await open();
      const keys = Array.from({ length: 40 }, (_, i) => `user-${i}`);
      const log: { key: string; seq: number; who: string; start: number; end: number }[] = [];
      const handler = (who: string) => async (d: Delivery<{ seq: number }>) => {
        const start = performance.now();
        await sleep(Math.random() * 8);
        log.push({ key: d.key, seq: d.payload.seq, who, start, end: performance.now() });
      };
      const options = { group: 'workers', retryDelaysMs: [], concurrency: 8 };
      const a = one.consume('order', options, handler('one'));
      const b = two.consume('order', options, handler('two'));
      await sleep(3500); // let group membership settle (the JetStream adapter rebalances partitions)
      const total = 400;
      for (let i = 0; i < total; i++) {
        const key = keys[i % keys.length];
        await (i % 2 ? one : two).publish('order', { id: `o-${i}`, key, payload: { seq: i } });
      }
      await until(() => log.length >= total, 60_000, 'all messages');
      await sleep(200);
      assert.equal(log.length, total, 'each message handled exactly once');
      for (const key of keys) {
        const mine = log.filter((entry) => entry.key === key).sort((x, y) => x.start - y.start);
        const seqs = mine.map((entry) => entry.seq);
        assert.deepEqual(
          seqs,
          [...seqs].sort((x, y) => x - y),
          `order of ${key}`,
        );
        for (let i = 1; i < mine.length; i++) {
          assert.ok(
            mine[i].start >= mine[i - 1].end,
            `${key}: message ${mine[i].seq} started before ${mine[i - 1].seq} ended`,
          );
        }
      }
      const byOne = log.filter((entry) => entry.who === 'one').length;
      assert.ok(byOne > 0 && byOne < total, `both consumers worked (one handled ${byOne} of ${total})`);
      await Promise.all([a.stop(), b.stop()]);
      await pair.close();
    });

    test('retries follow the schedule, then the message is dead-lettered and can be redriven', async () => {
      const { one } = await open();
      const attempts: { attempt: number; at: number }[] = [];
      let healthy = false;
      const consumer = one.consume<{ n: number }>(
        'retry',
        { group: 'g', retryDelaysMs: [200, 600] },
        async (d) => {
          attempts.push({ attempt: d.attempt, at: performance.now() });
          if (!healthy) throw new Error(`attempt ${d.attempt} failed`);
        },
      );
      await one.publish('retry', { id: 'r1', key: 'u1', payload: { n: 7 } });
      await until(() => attempts.length === 3, 20_000, 'three attempts');
      let letters = await one.deadLetters<{ n: number }>('retry');
      for (let i = 0; i < 100 && letters.length === 0; i++) {
        await sleep(50);
        letters = await one.deadLetters<{ n: number }>('retry');
      }
      assert.deepEqual(
        attempts.map((a) => a.attempt),
        [1, 2, 3],
      );
      const gap1 = attempts[1].at - attempts[0].at;
      const gap2 = attempts[2].at - attempts[1].at;
      assert.ok(gap1 >= 180 && gap1 < 2000, `first delay ${gap1} ms`);
      assert.ok(gap2 >= 580 && gap2 < 3000, `second delay ${gap2} ms`);
      assert.equal(letters.length, 1);
      assert.equal(letters[0].messageId, 'r1');
      assert.equal(letters[0].key, 'u1');
      assert.deepEqual(letters[0].payload, { n: 7 });
      assert.equal(letters[0].attempts, 3);
      assert.match(letters[0].error, /attempt 3 failed/);

      healthy = true;
      assert.equal(await one.redrive('retry', letters[0].deadLetterId), true);
      await until(() => attempts.length === 4, 20_000, 'the redriven message');
      assert.equal(attempts[3].attempt, 1, 'a redriven message starts a fresh set of attempts');
      await sleep(200);
      assert.equal((await one.deadLetters('retry')).length, 0);
      assert.equal(
        await one.redrive('retry', letters[0].deadLetterId),
        false,
        'a dead letter is redriven once',
      );
      await consumer.stop();
      await pair.close();
    });

    test('a permanent error dead-letters at once; RetryLater spends no attempt', async () => {
      const { one } = await open();
      const seen: string[] = [];
      const consumer = one.consume<{ kind: string }>(
        'perm',
        { group: 'g', retryDelaysMs: [50, 50] },
        async (d) => {
          seen.push(`${d.payload.kind}:${d.attempt}`);
          if (d.payload.kind === 'bad') throw new PermanentError('invalid address');
          if (d.payload.kind === 'later' && seen.filter((s) => s.startsWith('later')).length < 3) {
            throw new RetryLater(50, 'circuit open');
          }
        },
      );
      await one.publish('perm', { id: 'p1', key: 'a', payload: { kind: 'bad' } });
      await one.publish('perm', { id: 'p2', key: 'b', payload: { kind: 'later' } });
      await until(() => seen.length === 4, 20_000, 'four deliveries');
      await sleep(300);
      assert.deepEqual(
        seen.filter((s) => s.startsWith('bad')),
        ['bad:1'],
      );
      assert.deepEqual(
        seen.filter((s) => s.startsWith('later')),
        ['later:1', 'later:1', 'later:1'],
      );
      const letters = await one.deadLetters('perm');
      assert.equal(letters.length, 1);
      assert.equal(letters[0].attempts, 1);
      await consumer.stop();
      await pair.close();
    });

    test('a key waiting for its retry holds back only itself', async () => {
      const { one } = await open();
      const done: string[] = [];
      const consumer = one.consume<{ label: string }>(
        'hol',
        { group: 'g', retryDelaysMs: [1500] },
        async (d) => {
          if (d.payload.label === 'a1' && d.attempt === 1) throw new Error('transient');
          done.push(d.payload.label);
        },
      );
      await one.publish('hol', { id: 'a1', key: 'A', payload: { label: 'a1' } });
      await one.publish('hol', { id: 'a2', key: 'A', payload: { label: 'a2' } });
      for (let i = 0; i < 5; i++)
        await one.publish('hol', { id: `b${i}`, key: `B${i}`, payload: { label: `b${i}` } });
      await until(() => done.length === 5, 5_000, 'other keys while A waits');
      assert.ok(!done.includes('a1') && !done.includes('a2'), `A waited: ${done.join(',')}`);
      await until(() => done.length === 7, 20_000, 'A after its retry');
      assert.deepEqual(done.slice(5), ['a1', 'a2']);
      await consumer.stop();
      await pair.close();
    });

    test('stop() lets the message in progress finish and acknowledges it', async () => {
      const { one } = await open();
      const events: string[] = [];
      const consumer = one.consume('drain', { group: 'g', retryDelaysMs: [50] }, async (d) => {
        events.push(`start ${d.id}`);
        await sleep(400);
        events.push(`end ${d.id}`);
      });
      await one.publish('drain', { id: 'slow-job', key: 'k', payload: {} });
      await until(() => events.length === 1, 20_000, 'the job to start');
      await consumer.stop();
      assert.deepEqual(events, ['start slow-job', 'end slow-job']);
      const again: string[] = [];
      const next = one.consume('drain', { group: 'g', retryDelaysMs: [50] }, async (d) => {
        again.push(d.id);
      });
      await sleep(1500);
      assert.deepEqual(again, [], 'a finished job is not delivered again');
      assert.equal(await one.depth('drain'), 0);
      await next.stop();
      await pair.close();
    });
  });
}
