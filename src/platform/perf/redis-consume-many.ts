import type { Redis } from 'ioredis';

/**
 * PERF HACK, kept because an A/B run showed it is worth it on notify-accept (the figure is in
 * bench/README.md). rate-limiter-flexible's public `consume` is one Redis script call per key and
 * request, and a refusal needs a second (`reward`); this script spends for many keys (the consumes
 * of concurrent requests, grouped by the caller) in one call.
 *
 * It ASSUMES rate-limiter-flexible's Redis layout, because peeks and refunds still go through
 * rate-limiter-flexible on the same counters: a counter is the key `<keyPrefix>:<key>` holding the
 * points consumed as a plain integer, and its window is the key's TTL. redis-consume-many.test.ts
 * fails when an upgrade changes that.
 *
 * Per key it does what `consume` followed by `reward` on a refusal did, in order: a refusal is
 * taken back at once, so it spends nothing. ARGV holds points, limit and expiry per key: the
 * duration in seconds (0: none), or minus the ms left of a caller's window. The answer is flat,
 * {allowed, consumed, pttl} per key (0 for a caller's window). A new counter gets its TTL from the
 * `pttl` = -1 branch (`incrby` creates it without one), so a key that exists costs no extra call.
 * A caller's window needs no `pttl` at all: its counter is new exactly when `incrby` answers the
 * points it added (or was refunded to 0 in the same window, and gets the same window end again).
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

export interface CounterSpend {
  /** The counter's Redis key, as rate-limiter-flexible names it (`getKey`). */
  key: string;
  points: number;
  limit: number;
  /** Whole seconds from the counter's first spend; or `windowEndsInMs` for a caller's window. */
  durationSec: number;
  windowEndsInMs?: number;
}

export interface CounterResult {
  allowed: boolean;
  /** Points consumed in the window after this spend (or its refusal). */
  consumed: number;
  /** Ms until the counter expires; 0 for a caller's window (the caller knows its end). */
  pttl: number;
}

type ConsumeManyCommand = (keyCount: number, ...args: (string | number)[]) => Promise<number[]>;

/** Spends on many rate-limiter-flexible counters in one script call, in order. */
export function createConsumeMany(redis: Redis): (spends: CounterSpend[]) => Promise<CounterResult[]> {
  redis.defineCommand('platformConsumeMany', { lua: CONSUME_MANY });
  // ioredis adds a method per defined command; its type cannot know about it.
  const command = (redis as unknown as { platformConsumeMany: ConsumeManyCommand }).platformConsumeMany.bind(
    redis,
  );
  return async (spends) => {
    const args = spends.flatMap((s) => [
      s.points,
      s.limit,
      s.windowEndsInMs === undefined ? s.durationSec : -Math.max(1, Math.ceil(s.windowEndsInMs)),
    ]);
    const results = await command(spends.length, ...spends.map((s) => s.key), ...args);
    return spends.map((_, i) => ({
      allowed: results[i * 3] === 1,
      consumed: results[i * 3 + 1],
      pttl: results[i * 3 + 2],
    }));
  };
}
