import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../clock.ts';

/** A key/value cache with per-entry TTL. Values must be JSON-serialisable (Redis stores JSON). */
export interface Cache {
  readonly kind: 'memory' | 'redis';
  get<T>(key: string): Promise<T | undefined>;
  set(key: string, value: unknown, ttlMs: number): Promise<void>;
  delete(...keys: string[]): Promise<void>;
  /** Milliseconds the entry has left, or undefined when absent (for tests and diagnostics). */
  ttl(key: string): Promise<number | undefined>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export function createMemoryCache(clock: Clock, maxEntries = 50_000): Cache {
  // lru-cache reads time through `perf`, so a test clock moves TTLs too.
  const lru = new LRUCache<string, { value: unknown }>({
    max: maxEntries,
    ttlAutopurge: false,
    ttlResolution: 0,
    perf: { now: () => clock.now().getTime() },
  });
  return {
    kind: 'memory',
    get: async <T>(key: string) => lru.get(key)?.value as T | undefined,
    set: async (key, value, ttlMs) => {
      if (ttlMs > 0) lru.set(key, { value }, { ttl: Math.ceil(ttlMs) });
      else lru.delete(key);
    },
    delete: async (...keys) => {
      for (const key of keys) lru.delete(key);
    },
    ttl: async (key) => (lru.has(key) ? lru.getRemainingTTL(key) : undefined),
    ping: async () => {},
    close: async () => lru.clear(),
  };
}

export function createRedisCache(redis: Redis, prefix: string): Cache {
  const k = (key: string) => `${prefix}:cache:${key}`;
  return {
    kind: 'redis',
    async get<T>(key: string) {
      const raw = await redis.get(k(key));
      return raw === null ? undefined : (JSON.parse(raw) as T);
    },
    async set(key, value, ttlMs) {
      if (ttlMs > 0) await redis.set(k(key), JSON.stringify(value), 'PX', Math.ceil(ttlMs));
      else await redis.del(k(key));
    },
    async delete(...keys) {
      if (keys.length > 0) await redis.del(...keys.map(k));
    },
    async ttl(key) {
      const ms = await redis.pttl(k(key));
      return ms < 0 ? undefined : ms;
    },
    async ping() {
      await redis.ping();
    },
    close: async () => {},
  };
}

/**
 * Read-through helper: concurrent misses for one key share a single load (single flight),
 * so a burst of readers of a cold key costs one database query. `invalidate` marks a
 * load already under way as stale, so it never writes a value read before the invalidation.
 */
export interface ReadThrough {
  get<T>(key: string, load: () => Promise<{ value: T; ttlMs: number } | undefined>): Promise<T | undefined>;
  invalidate(...keys: string[]): Promise<void>;
}

export function createReadThrough(cache: Cache): ReadThrough {
  const inFlight = new Map<string, { promise: Promise<unknown>; stale: boolean }>();
  return {
    async get<T>(key: string, load: () => Promise<{ value: T; ttlMs: number } | undefined>) {
      // The cache is only a filter in front of the database: when it is down, read through.
      const cached = await cache.get<T>(key).catch(() => undefined);
      if (cached !== undefined) return cached;
      const pending = inFlight.get(key);
      if (pending) return pending.promise as Promise<T | undefined>;
      const entry = { promise: Promise.resolve() as Promise<unknown>, stale: false };
      entry.promise = (async () => {
        try {
          const loaded = await load();
          if (!loaded) return undefined;
          if (!entry.stale) await cache.set(key, loaded.value, loaded.ttlMs).catch(() => {});
          return loaded.value;
        } finally {
          if (inFlight.get(key) === entry) inFlight.delete(key);
        }
      })();
      inFlight.set(key, entry);
      return entry.promise as Promise<T | undefined>;
    },
    async invalidate(...keys) {
      for (const key of keys) {
        const entry = inFlight.get(key);
        if (entry) entry.stale = true;
        inFlight.delete(key);
      }
      await cache.delete(...keys);
    },
  };
}
