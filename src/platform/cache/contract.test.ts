import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { realServices, uniqueName } from '../../../test/support/platform.ts';
import { createTestClock } from '../clock.ts';
import { type Cache, createMemoryCache, createReadThrough, createRedisCache } from './index.ts';

interface Subject {
  cache: Cache;
  /** Lets `ms` pass for the adapter: a moved clock for memory, real time for Redis. */
  elapse(ms: number): Promise<void>;
}

const subjects: [string, () => Promise<Subject>][] = [
  [
    'memory',
    async () => {
      const clock = createTestClock();
      return { cache: createMemoryCache(clock), elapse: async (ms) => clock.advance(ms) };
    },
  ],
];
if (realServices.redisUrl) {
  const redis = new Redis(realServices.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  after(() => redis.disconnect());
  subjects.push([
    'redis',
    async () => {
      if (redis.status === 'wait') await redis.connect();
      return { cache: createRedisCache(redis, uniqueName()), elapse: (ms) => sleep(ms) };
    },
  ]);
}

for (const [name, make] of subjects) {
  describe(`cache contract: ${name}`, () => {
    test('stores JSON values and reads them back', async () => {
      const { cache } = await make();
      await cache.set('a', { n: 1, s: 'x', list: [1, 2] }, 10_000);
      assert.deepEqual(await cache.get('a'), { n: 1, s: 'x', list: [1, 2] });
      assert.equal(await cache.get('missing'), undefined);
    });

    test('entries expire after their TTL and report what is left', async () => {
      const { cache, elapse } = await make();
      await cache.set('short', 'v', 300);
      await cache.set('long', 'v', 60_000);
      const left = await cache.ttl('short');
      assert.ok(left !== undefined && left > 0 && left <= 300, `ttl ${left}`);
      await elapse(450);
      assert.equal(await cache.get('short'), undefined);
      assert.equal(await cache.ttl('short'), undefined);
      assert.equal(await cache.get('long'), 'v');
    });

    test('delete removes several keys; a TTL of 0 deletes', async () => {
      const { cache } = await make();
      await cache.set('x', 1, 10_000);
      await cache.set('y', 2, 10_000);
      await cache.set('z', 3, 10_000);
      await cache.delete('x', 'y');
      assert.equal(await cache.get('x'), undefined);
      assert.equal(await cache.get('y'), undefined);
      await cache.set('z', 4, 0);
      assert.equal(await cache.get('z'), undefined);
    });

    test('read-through loads once for 50 concurrent misses', async () => {
      const { cache } = await make();
      const readThrough = createReadThrough(cache);
      let loads = 0;
      const load = async () => {
        loads++;
        await sleep(30);
        return { value: { body: 'hello' }, ttlMs: 10_000 };
      };
      const values = await Promise.all(Array.from({ length: 50 }, () => readThrough.get('hot', load)));
      assert.equal(loads, 1);
      assert.ok(values.every((value) => value?.body === 'hello'));
      await readThrough.get('hot', load);
      assert.equal(loads, 1, 'served from the cache afterwards');
    });

    test('read-through still answers from the loader when the cache is down', async () => {
      const { cache } = await make();
      const broken: Cache = {
        ...cache,
        get: async () => {
          throw new Error('cache down');
        },
        set: async () => {
          throw new Error('cache down');
        },
      };
      const readThrough = createReadThrough(broken);
      assert.equal(await readThrough.get('k', async () => ({ value: 'from db', ttlMs: 1000 })), 'from db');
    });

    test('an invalidation during a load keeps the stale value out of the cache', async () => {
      const { cache } = await make();
      const readThrough = createReadThrough(cache);
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let loading!: () => void;
      // The invalidation must come while the load runs: a fixed sleep raced Redis's first GET.
      const started = new Promise<void>((resolve) => {
        loading = resolve;
      });
      const pending = readThrough.get('k', async () => {
        loading();
        await gate;
        return { value: 'old', ttlMs: 10_000 };
      });
      await started;
      await readThrough.invalidate('k');
      release();
      assert.equal(await pending, 'old');
      assert.equal(await cache.get('k'), undefined);
    });
  });
}
