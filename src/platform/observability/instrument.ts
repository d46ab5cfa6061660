import type { Server } from 'node:http';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Cache } from '../cache/index.ts';
import type { SseHub } from '../http/sse.ts';
import type { RateLimiter } from '../ratelimit/index.ts';

/**
 * Metrics of the shared adapters, counted where every module's use passes: the shared cache's
 * hits and misses and the rate limits' refusals (the modules' own code stays as it is), and what
 * the process holds open (HTTP connections, SSE streams), read at scrape time.
 */

const OUTCOMES = ['hit', 'miss', 'error'] as const;

/**
 * The shared cache, counting each lookup as a hit or a miss under its key's prefix (`paste:…` →
 * `paste`). Counted in plain numbers and handed to the counter when it is scraped: every lookup of
 * every module passes here (a seat hold reads its show), and prom-client's inc() checks and
 * hashes its labels on every call.
 */
export function countedCache(cache: Cache, registry: Registry): Cache {
  const tallies = new Map<string, [hit: number, miss: number, error: number]>();
  new Counter({
    name: 'cache_lookups_total',
    help: 'Shared cache (Redis or in-process) lookups by key prefix and outcome (hit, miss, error)',
    labelNames: ['cache', 'outcome'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [prefix, tally] of tallies) {
        OUTCOMES.forEach((outcome, index) => {
          if (tally[index] > 0) this.inc({ cache: prefix, outcome }, tally[index]);
        });
      }
    },
  });
  const tallyOf = (key: string) => {
    const end = key.indexOf(':');
    const prefix = end === -1 ? key : key.slice(0, end);
    let tally = tallies.get(prefix);
    if (tally === undefined) {
      tally = [0, 0, 0];
      tallies.set(prefix, tally);
    }
    return tally;
  };
  return {
    kind: cache.kind,
    get: <T>(key: string) => {
      const tally = tallyOf(key);
      return cache.get<T>(key).then(
        (value) => {
          tally[value === undefined ? 1 : 0]++;
          return value;
        },
        (error: unknown) => {
          tally[2]++;
          throw error;
        },
      );
    },
    set: (key, value, ttlMs) => cache.set(key, value, ttlMs),
    delete: (...keys) => cache.delete(...keys),
    ttl: (key) => cache.ttl(key),
    ping: () => cache.ping(),
    close: () => cache.close(),
  };
}

/** The rate limiter, counting refusals by policy (allowed decisions cost a comparison). */
export function countedLimiter(limiter: RateLimiter, registry: Registry): RateLimiter {
  const refusals = new Counter({
    name: 'rate_limit_refusals_total',
    help: 'Requests refused by a rate limit, by policy',
    labelNames: ['policy'] as const,
    registers: [registry],
  });
  const { consumeNow } = limiter;
  return {
    kind: limiter.kind,
    async consume(policy, key, points) {
      const decision = await limiter.consume(policy, key, points);
      if (!decision.allowed) refusals.inc({ policy: policy.name });
      return decision;
    },
    // Only where the limiter has it: its absence tells callers to take the promise path.
    ...(consumeNow && {
      consumeNow(policy, key, points) {
        const decision = consumeNow.call(limiter, policy, key, points);
        if (!decision.allowed) refusals.inc({ policy: policy.name });
        return decision;
      },
    }),
    peek: (policy, key) => limiter.peek(policy, key),
    refund: (policy, key, points) => limiter.refund(policy, key, points),
    ping: () => limiter.ping(),
    close: () => limiter.close(),
  };
}

/**
 * Open HTTP connections, requests in flight and SSE streams, and which build this is, read at
 * scrape time.
 */
export function registerProcessGauges(
  registry: Registry,
  parts: {
    server: Server;
    inFlight: () => number;
    sse: SseHub;
    version: string;
    role: string;
    services: string[];
  },
): void {
  new Gauge({
    name: 'http_requests_in_flight',
    help: 'HTTP requests received and not yet answered or aborted (open SSE streams included)',
    registers: [registry],
    collect() {
      this.set(parts.inFlight());
    },
  });
  new Gauge({
    name: 'http_open_connections',
    help: 'HTTP connections open to this process (keep-alive ones included)',
    registers: [registry],
    async collect() {
      const count = await new Promise<number>((resolve) =>
        parts.server.getConnections((error, n) => resolve(error ? 0 : n)),
      );
      this.set(count);
    },
  });
  new Gauge({
    name: 'sse_open_streams',
    help: 'Server-Sent Events streams open (boards, waiting rooms, notification inboxes)',
    registers: [registry],
    collect() {
      this.set(parts.sse.count());
    },
  });
  new Gauge({
    name: 'app_info',
    help: 'This build and process: version, Node version, role and services (always 1)',
    labelNames: ['version', 'node', 'role', 'services'] as const,
    registers: [registry],
  }).set(
    {
      version: parts.version,
      node: process.versions.node,
      role: parts.role,
      services: [...parts.services].sort().join(','),
    },
    1,
  );
}
