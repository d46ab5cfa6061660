import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { createGroup } from '../db/group.ts';

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
 * expiry per key: the duration in seconds (0: none), or minus the ms left of a caller's window
 * (`resetInMs`). The answer is flat, {allowed, consumed, pttl} per key (0 for a caller's window).
 * A new counter gets its TTL from the `pttl` = -1 branch (`incrby` creates it without one) rather
 * than from a `set … EX … NX` before every `incrby`: each `redis.call` costs ~2 µs of Lua
 * overhead in Redis, and the `set` was run for every key, new or not (16-key calls: 137-178 ->
 * 102-124 µs of Redis time each). A caller's window needs no `pttl` at all: its counter is new
 * exactly when `incrby` answers the points it added (or was refunded to 0 in the same window,
 * and gets the same window end again).
 */
const CONSUME_MANY = `local result = {}
for i = 1, #KEYS do
  local key = KEYS[i]
  local points = tonumber(ARGV[i * 3 - 2])
  local limit = tonumber(ARGV[i * 3 - 1])
  local expiry = tonumber(ARGV[i * 3])
  local consumed = redis.call('incrby', key, points)
  local created = consumed == points
  local allowed = 1
  if consumed > limit then
    consumed = redis.call('decrby', key, points)
    allowed = 0
  end
  local ttl = 0
  if expiry < 0 then
    if created then redis.call('pexpire', key, -expiry) end
  else
    ttl = redis.call('pttl', key)
    if ttl == -1 and expiry > 0 then
      redis.call('expire', key, expiry)
      ttl = 1000 * expiry
    end
  end
  result[i * 3 - 2] = allowed
  result[i * 3 - 1] = consumed
  result[i * 3] = ttl
end
return result`;

interface Spend {
  policy: RatePolicy;
  key: string;
  points: number;
}

type ConsumeMany = (keyCount: number, ...args: (string | number)[]) => Promise<number[]>;

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
    const args = spends.flatMap(({ points, policy }) => [
      points,
      policy.points,
      policy.resetInMs === undefined ? policy.durationSec : -windowExpiryMs(policy.resetInMs),
    ]);
    const results = await consumeMany(keys.length, ...keys, ...args);
    return spends.map(({ policy }, i) => ({
      allowed: results[i * 3] === 1,
      limit: policy.points,
      remaining: Math.max(0, policy.points - results[i * 3 + 1]),
      resetMs: policy.resetInMs ?? Math.max(0, results[i * 3 + 2]),
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

/** A caller's window as its counter's expiry: whole ms, at least 1 (an expiry of 0 would keep it forever). */
function windowExpiryMs(resetInMs: number): number {
  return Math.max(1, Math.ceil(resetInMs));
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
    resetMs: policy.resetInMs ?? (res ? Math.max(0, res.msBeforeNext) : policy.durationSec * 1000),
  });
  return {
    kind,
    async consume(policy, key, points = 1) {
      const limiter = limiterFor(policy);
      // A new counter of a caller's window lasts until that window ends (seconds, fractions too).
      const expiry =
        policy.resetInMs === undefined
          ? undefined
          : { customDuration: windowExpiryMs(policy.resetInMs) / 1000 };
      try {
        return decision(policy, await limiter.consume(key, points, expiry), true);
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
