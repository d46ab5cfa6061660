import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { realServices, uniqueName } from '../../../test/support/platform.ts';
import { createMemoryRateLimiter, createRedisRateLimiter, type RateLimiter } from './index.ts';

const subjects: [string, () => Promise<RateLimiter>][] = [['memory', async () => createMemoryRateLimiter()]];
if (realServices.redisUrl) {
  const redis = new Redis(realServices.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  after(() => redis.disconnect());
  subjects.push([
    'redis',
    async () => {
      if (redis.status === 'wait') await redis.connect();
      return createRedisRateLimiter(redis, uniqueName());
    },
  ]);
}

for (const [name, make] of subjects) {
  describe(`rate limiter contract: ${name}`, () => {
    test('counts down to the limit, then refuses without spending', async () => {
      const limiter = await make();
      const policy = { name: uniqueName('p'), points: 3, durationSec: 60 };
      const remaining: number[] = [];
      for (let i = 0; i < 3; i++) {
        const decision = await limiter.consume(policy, 'user-1');
        assert.equal(decision.allowed, true);
        assert.equal(decision.limit, 3);
        remaining.push(decision.remaining);
      }
      assert.deepEqual(remaining, [2, 1, 0]);
      const refused = await limiter.consume(policy, 'user-1');
      assert.equal(refused.allowed, false);
      assert.equal(refused.remaining, 0);
      assert.ok(refused.resetMs > 0 && refused.resetMs <= 60_000, `resetMs ${refused.resetMs}`);
      const peeked = await limiter.peek(policy, 'user-1');
      assert.equal(peeked.remaining, 0);
      await limiter.refund(policy, 'user-1');
      assert.equal(
        (await limiter.peek(policy, 'user-1')).remaining,
        1,
        'the refusal spent nothing, the refund gave one back',
      );
    });

    test("a caller's window: decisions answer its reset, and the counter ends with it", async () => {
      const limiter = await make();
      // A 1 s window, so a slow machine between the first two calls cannot end it early.
      const policy = { name: uniqueName('p'), points: 1, durationSec: 60, resetInMs: 1000 };
      const first = await limiter.consume(policy, 'k');
      assert.deepEqual(first, { allowed: true, limit: 1, remaining: 0, resetMs: 1000 });
      const refused = await limiter.consume({ ...policy, resetInMs: 950 }, 'k');
      assert.deepEqual(refused, { allowed: false, limit: 1, remaining: 0, resetMs: 950 });
      assert.equal((await limiter.peek({ ...policy, resetInMs: 900 }, 'k')).resetMs, 900);
      await sleep(1200);
      // Ended with its window, not `durationSec` after it began.
      assert.equal((await limiter.consume(policy, 'k')).allowed, true);
    });

    test('keys are independent and peek spends nothing', async () => {
      const limiter = await make();
      const policy = { name: uniqueName('p'), points: 2, durationSec: 60 };
      await limiter.consume(policy, 'a');
      await limiter.consume(policy, 'a');
      assert.equal((await limiter.consume(policy, 'a')).allowed, false);
      assert.equal((await limiter.peek(policy, 'b')).remaining, 2);
      assert.equal((await limiter.peek(policy, 'b')).remaining, 2);
      assert.equal((await limiter.consume(policy, 'b')).remaining, 1);
    });

    test('a new window starts after the duration', async () => {
      const limiter = await make();
      const policy = { name: uniqueName('p'), points: 1, durationSec: 1 };
      assert.equal((await limiter.consume(policy, 'k')).allowed, true);
      assert.equal((await limiter.consume(policy, 'k')).allowed, false);
      await sleep(1100);
      const fresh = await limiter.consume(policy, 'k');
      assert.equal(fresh.allowed, true);
      assert.equal(fresh.remaining, 0);
    });

    test('concurrent consumes are each decided as if alone, in order', async () => {
      const limiter = await make();
      const policy = { name: uniqueName('p'), points: 5, durationSec: 60 };
      const other = { name: uniqueName('p'), points: 1, durationSec: 60 };
      const decisions = await Promise.all([
        ...Array.from({ length: 8 }, () => limiter.consume(policy, 'k')),
        limiter.consume(other, 'k'),
        limiter.consume(policy, 'j', 6),
      ]);
      assert.deepEqual(
        decisions.map((d) => [d.allowed, d.remaining]),
        [
          [true, 4],
          [true, 3],
          [true, 2],
          [true, 1],
          [true, 0],
          [false, 0],
          [false, 0],
          [false, 0],
          [true, 0],
          [false, 5],
        ],
      );
      assert.equal((await limiter.peek(policy, 'k')).remaining, 0, 'the refusals spent nothing');
      assert.equal((await limiter.peek(policy, 'j')).remaining, 5);
    });

    test('spends several points at once', async () => {
      const limiter = await make();
      const policy = { name: uniqueName('p'), points: 10, durationSec: 60 };
      assert.equal((await limiter.consume(policy, 'k', 7)).remaining, 3);
      assert.equal((await limiter.consume(policy, 'k', 4)).allowed, false);
      assert.equal((await limiter.consume(policy, 'k', 3)).remaining, 0);
    });
  });
}
