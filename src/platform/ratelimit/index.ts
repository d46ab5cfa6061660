import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { createGroup } from '../db/group.ts';

export interface RatePolicy {
  /** Unique name; it prefixes the stored counters. */
  name: string;
  points: number;
  durationSec: number;
}

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until the window resets. */
  resetMs: number;
}

export interface RateLimiter {
  readonly kind: 'memory' | 'redis';
  /** Spends `points` for `key`; refused when the window has fewer left (nothing is spent then). */
  consume(policy: RatePolicy, key: string, points?: number): Promise<RateDecision>;
  /** What is left for `key` without spending anything. */
  peek(policy: RatePolicy, key: string): Promise<RateDecision>;
  /** Gives points back, e.g. when the work they paid for was refused further on. */
  refund(policy: RatePolicy, key: string, points?: number): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

type Flexible = RateLimiterMemory | RateLimiterRedis;

export function createMemoryRateLimiter(): RateLimiter {
  return wrap(
    'memory',
    (policy) => new RateLimiterMemory(options(policy)),
    async () => {},
  );
}

/**
 * Spends for each key what rate-limiter-flexible's consume followed by its reward on a refusal
 * did, on the same counters (an integer with the window's TTL), in one script for many keys, in
 * order: a refusal is taken back at once, so it spends nothing. ARGV holds points, limit and
 * duration (seconds, 0: no expiry) per key; each key answers {allowed, consumed, pttl}.
 * A new counter gets its TTL from the `pttl` = -1 branch (`incrby` creates it without one) rather
 * than from a `set … EX … NX` before every `incrby`: each `redis.call` costs ~2 µs of Lua
 * overhead in Redis, and the `set` was run for every key, new or not (16-key calls: 137-178 ->
 * 102-124 µs of Redis time each).
 */
const CONSUME_MANY = `local result = {}
for i = 1, #KEYS do
  local key = KEYS[i]
  local points = tonumber(ARGV[i * 3 - 2])
  local limit = tonumber(ARGV[i * 3 - 1])
  local duration = tonumber(ARGV[i * 3])
  local consumed = redis.call('incrby', key, points)
  local allowed = 1
  if consumed > limit then
    consumed = redis.call('decrby', key, points)
    allowed = 0
  end
  local ttl = redis.call('pttl', key)
  if ttl == -1 and duration > 0 then
    redis.call('expire', key, duration)
    ttl = 1000 * duration
  end
  result[i] = {allowed, consumed, ttl}
end
return result`;

interface Spend {
  policy: RatePolicy;
  key: string;
  points: number;
}

type ConsumeMany = (keyCount: number, ...args: (string | number)[]) => Promise<[number, number, number][]>;

export function createRedisRateLimiter(redis: Redis, prefix: string): RateLimiter {
  const counter = (policy: RatePolicy, key: string) => `${prefix}:rl:${policy.name}:${key}`;
  const limiter = wrap(
    'redis',
    (policy) =>
      new RateLimiterRedis({
        ...options(policy),
        storeClient: redis,
        keyPrefix: `${prefix}:rl:${policy.name}`,
      }),
    async () => {
      await redis.ping();
    },
  );
  redis.defineCommand('platformConsumeMany', { lua: CONSUME_MANY });
  const consumeMany = (redis as unknown as { platformConsumeMany: ConsumeMany }).platformConsumeMany.bind(
    redis,
  );
  async function spendAll(spends: Spend[]): Promise<RateDecision[]> {
    const keys = spends.map((s) => counter(s.policy, s.key));
    const args = spends.flatMap((s) => [s.points, s.policy.points, s.policy.durationSec]);
    const results = await consumeMany(keys.length, ...keys, ...args);
    return results.map(([allowed, consumed, ttl], i) => ({
      allowed: allowed === 1,
      limit: spends[i].policy.points,
      remaining: Math.max(0, spends[i].policy.points - consumed),
      resetMs: Math.max(0, ttl),
    }));
  }
  // The consumes of concurrent requests share one script call (group commit, as for the
  // database): one round trip, and one read and one write in Redis, for all of them.
  const spend = createGroup<Spend, RateDecision>({
    one: async (s) => (await spendAll([s]))[0],
    many: spendAll,
  });
  return {
    ...limiter,
    consume(policy, key, points = 1) {
      if (!Number.isInteger(points)) return Promise.reject(new Error('points must be an integer'));
      return spend({ policy, key, points });
    },
  };
}

function options(policy: RatePolicy) {
  return { keyPrefix: policy.name, points: policy.points, duration: policy.durationSec };
}

function wrap(
  kind: 'memory' | 'redis',
  make: (policy: RatePolicy) => Flexible,
  ping: () => Promise<void>,
): RateLimiter {
  const limiters = new Map<string, Flexible>();
  const limiterFor = (policy: RatePolicy) => {
    const id = `${policy.name}:${policy.points}:${policy.durationSec}`;
    let limiter = limiters.get(id);
    if (!limiter) {
      limiter = make(policy);
      limiters.set(id, limiter);
    }
    return limiter;
  };
  const decision = (policy: RatePolicy, res: RateLimiterRes | null, allowed: boolean): RateDecision => ({
    allowed,
    limit: policy.points,
    remaining: res ? Math.max(0, res.remainingPoints) : policy.points,
    resetMs: res ? Math.max(0, res.msBeforeNext) : policy.durationSec * 1000,
  });
  return {
    kind,
    async consume(policy, key, points = 1) {
      const limiter = limiterFor(policy);
      try {
        return decision(policy, await limiter.consume(key, points), true);
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        // rate-limiter-flexible counts refused points too; give them back so a refusal spends nothing.
        const restored = await limiter.reward(key, points);
        return decision(policy, restored, false);
      }
    },
    async peek(policy, key) {
      return decision(policy, await limiterFor(policy).get(key), true);
    },
    async refund(policy, key, points = 1) {
      await limiterFor(policy).reward(key, points);
    },
    ping,
    close: async () => {},
  };
}
