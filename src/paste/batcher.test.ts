import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createBatcher } from './batcher.ts';

test('a lone item is written at once; items arriving while writes run leave together', async () => {
  const writes: number[][] = [];
  const batcher = createBatcher<number>(
    async (items) => {
      writes.push(items);
      await sleep(20);
    },
    { maxBatch: 10, maxInFlight: 2 },
  );
  await batcher.add(0);
  assert.deepEqual(writes, [[0]]);
  await Promise.all(Array.from({ length: 25 }, (_, i) => batcher.add(i + 1)));
  // The first ones take the free in-flight slots alone; the rest queue and leave in batches of at most 10.
  const sizes = writes.slice(1).map((batch) => batch.length);
  assert.ok(
    sizes.every((size) => size <= 10),
    `batch sizes ${sizes}`,
  );
  assert.ok(sizes.length <= 5, `25 items took ${sizes.length} writes: ${sizes}`);
  assert.deepEqual(
    writes.flat().sort((a, b) => a - b),
    Array.from({ length: 26 }, (_, i) => i),
  );
});

test('a failing batch is retried item by item, so only the bad item fails', async () => {
  const written: string[] = [];
  const batcher = createBatcher<string>(
    async (items) => {
      await sleep(5);
      if (items.includes('bad'))
        throw Object.assign(new Error('constraint violated'), { code: '23505', severity: 'ERROR' });
      written.push(...items);
    },
    { maxBatch: 10, maxInFlight: 1 },
  );
  const results = await Promise.allSettled(['a', 'b', 'bad', 'c', 'd'].map((item) => batcher.add(item)));
  assert.deepEqual(
    results.map((result) => result.status),
    ['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
  );
  assert.deepEqual(written.sort(), ['a', 'b', 'c', 'd']);
});

test('a batch that may have committed (the connection died) is not retried: each item gets the error', async () => {
  const writes: string[][] = [];
  let fail = true;
  const batcher = createBatcher<string>(
    async (items) => {
      writes.push(items);
      await sleep(5);
      if (fail && items.length > 1) {
        fail = false;
        // What pg reports when the backend is terminated: the commit may or may not have landed.
        throw Object.assign(new Error('terminating connection due to administrator command'), {
          code: '57P01',
        });
      }
    },
    { maxBatch: 10, maxInFlight: 1 },
  );
  await batcher.add('first');
  const results = await Promise.allSettled(['a', 'b', 'c'].map((item) => batcher.add(item)));
  assert.deepEqual(
    results.map((result) => result.status),
    ['rejected', 'rejected', 'rejected'],
  );
  assert.deepEqual(writes, [['first'], ['a', 'b', 'c']], 'no item written again on its own');
});
