import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

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
 * Counters in Redis through rate-limiter-flexible (`<prefix>:rl:<policy>:<key>`), so every
 * process shares them.
 */
export function createRedisRateLimiter(redis: Redis, prefix: string): RateLimiter {
  return wrap(
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
}

/**
 * A caller's window as its counter's lifetime, in whole seconds rounded up: rate-limiter-flexible
 * keeps whole seconds in Redis (and no expiry at all below one). The window is named in the key,
 * so a counter that outlives its window by less than a second is never read again.
 */
function windowExpirySec(resetInMs: number): number {
  return Math.max(1, Math.ceil(resetInMs / 1000));
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
      // A new counter of a caller's window lasts until that window ends.
      const expiry =
        policy.resetInMs === undefined ? undefined : { customDuration: windowExpirySec(policy.resetInMs) };
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
