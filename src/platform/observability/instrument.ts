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

/** The shared cache, counting each lookup as a hit or a miss under its key's prefix (`paste:…` → `paste`). */
export function countedCache(cache: Cache, registry: Registry): Cache {
  const lookups = new Counter({
    name: 'cache_lookups_total',
    help: 'Shared cache (Redis or in-process) lookups by key prefix and outcome (hit, miss, error)',
    labelNames: ['cache', 'outcome'] as const,
    registers: [registry],
  });
  const prefix = (key: string) => {
    const end = key.indexOf(':');
    return end === -1 ? key : key.slice(0, end);
  };
  return {
    kind: cache.kind,
    get: <T>(key: string) =>
      cache.get<T>(key).then(
        (value) => {
          lookups.inc({ cache: prefix(key), outcome: value === undefined ? 'miss' : 'hit' });
          return value;
        },
        (error: unknown) => {
          lookups.inc({ cache: prefix(key), outcome: 'error' });
          throw error;
        },
      ),
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
  parts: { server: Server; sse: SseHub; version: string; role: string; services: string[] },
): void {
  // Counted on the server rather than in Fastify's hooks: a response's 'close' comes however the
  // request ends (answered, aborted, timed out), where onResponse misses the aborted ones.
  let inFlight = 0;
  const finished = () => {
    inFlight--;
  };
  parts.server.on('request', (_request, response) => {
    inFlight++;
    response.once('close', finished);
  });
  new Gauge({
    name: 'http_requests_in_flight',
    help: 'HTTP requests received and not yet answered or aborted (open SSE streams included)',
    registers: [registry],
    collect() {
      this.set(inFlight);
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
