import type { Redis } from 'ioredis';
import { RateLimiterRedis, type RateLimiterRes } from 'rate-limiter-flexible';
import { createGroup } from '../db/group.ts';
import { createConsumeMany } from '../perf/redis-consume-many.ts';

export { createMemoryRateLimiter } from './memory.ts';

export interface RatePolicy {
  /** Unique name; it prefixes the stored counters. */
  name: string;
  points: number;
  durationSec: number;
  /**
   * For windows the caller keeps (aligned to its clock, the window named in the key): ms until
   * this key's window ends. The counter is given that expiry when it is created and the
   * decisions answer it as `resetMs`, so the limiter never reads the expiry back.
   */
  resetInMs?: number;
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
  /** `consume` decided at once, when the counters are in this process (the memory limiter). */
  consumeNow?(policy: RatePolicy, key: string, points?: number): RateDecision;
  /** What is left for `key` without spending anything. */
  peek(policy: RatePolicy, key: string): Promise<RateDecision>;
  /** Gives points back, e.g. when the work they paid for was refused further on. */
  refund(policy: RatePolicy, key: string, points?: number): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

interface Spend {
  policy: RatePolicy;
  key: string;
  points: number;
}

/**
 * Counters in Redis, so every process shares them: rate-limiter-flexible's, with its layout
 * (`<prefix>:rl:<policy>:<key>`). Peeks and refunds go through rate-limiter-flexible; consumes
 * through the grouped script in platform/perf, on the same counters.
 */
export function createRedisRateLimiter(redis: Redis, prefix: string): RateLimiter {
  const limiterFor = limiterCache(
    (policy) =>
      new RateLimiterRedis({
        ...options(policy),
        storeClient: redis,
        keyPrefix: `${prefix}:rl:${policy.name}`,
      }),
  );
  const consumeMany = createConsumeMany(redis);
  async function spendAll(spends: Spend[]): Promise<RateDecision[]> {
    const results = await consumeMany(
      spends.map(({ policy, key, points }) => ({
        key: limiterFor(policy).getKey(key),
        points,
        limit: policy.points,
        durationSec: policy.durationSec,
        windowEndsInMs: policy.resetInMs,
      })),
    );
    return spends.map(({ policy }, i) => ({
      allowed: results[i].allowed,
      limit: policy.points,
      remaining: Math.max(0, policy.points - results[i].consumed),
      resetMs: policy.resetInMs ?? Math.max(0, results[i].pttl),
    }));
  }
  // The consumes of concurrent requests share one script call (group commit, as for the
  // database): one round trip, and one read and one write in Redis, for all of them.
  const spend = createGroup<Spend, RateDecision>({
    one: async (s) => (await spendAll([s]))[0],
    many: spendAll,
  });
  return {
    kind: 'redis',
    consume(policy, key, points = 1) {
      if (!Number.isInteger(points)) return Promise.reject(new Error('points must be an integer'));
      return spend({ policy, key, points });
    },
    async peek(policy, key) {
      return flexibleDecision(policy, await limiterFor(policy).get(key));
    },
    async refund(policy, key, points = 1) {
      await limiterFor(policy).reward(key, points);
    },
    async ping() {
      await redis.ping();
    },
    close: async () => {},
  };
}

function options(policy: RatePolicy) {
  return { keyPrefix: policy.name, points: policy.points, duration: policy.durationSec };
}

/** One rate-limiter-flexible limiter per policy (name, points and duration). */
function limiterCache(
  make: (policy: RatePolicy) => RateLimiterRedis,
): (policy: RatePolicy) => RateLimiterRedis {
  const limiters = new Map<string, RateLimiterRedis>();
  return (policy) => {
    const id = `${policy.name}:${policy.points}:${policy.durationSec}`;
    let limiter = limiters.get(id);
    if (!limiter) {
      limiter = make(policy);
      limiters.set(id, limiter);
    }
    return limiter;
  };
}

/** What a peek at rate-limiter-flexible's counter (null: none yet) leaves for the caller. */
function flexibleDecision(policy: RatePolicy, res: RateLimiterRes | null): RateDecision {
  return {
    allowed: true,
    limit: policy.points,
    remaining: res ? Math.max(0, res.remainingPoints) : policy.points,
    resetMs: policy.resetInMs ?? (res ? Math.max(0, res.msBeforeNext) : policy.durationSec * 1000),
  };
}
