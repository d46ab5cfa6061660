import type { SpanExporter } from '@opentelemetry/sdk-trace';
import { Redis } from 'ioredis';
import { type Cache, createMemoryCache, createRedisCache } from './cache/index.ts';
import { type Clock, systemClock } from './clock.ts';
import type { Config } from './config.ts';
import { createDatabase, type Database } from './db/index.ts';
import { startTracing, type Tracing } from './observability/tracing.ts';
import { createMemoryPubSub, createRedisPubSub, type PubSub } from './pubsub/index.ts';
import type { Queue } from './queue/index.ts';
import { createJetStreamQueue } from './queue/jetstream.ts';
import { createPostgresQueue } from './queue/postgres.ts';
import { createMemoryRateLimiter, createRedisRateLimiter, type RateLimiter } from './ratelimit/index.ts';
import { APP_VERSION } from './version.ts';

export interface Adapters {
  clock: Clock;
  database: Database;
  cache: Cache;
  limiter: RateLimiter;
  pubsub: PubSub;
  queue: Queue;
  /** Present when tracing is on (`TRACING=otlp`): buildApp adds its HTTP spans and log fields. */
  tracing?: Tracing;
}

export interface AdapterOptions {
  /** PostgreSQL schema (tests use one per file). */
  schema?: string;
  queue?: { ackWaitMs?: number; leaseMs?: number; partitions?: number };
  /** Where spans go instead of the OTLP exporter, when tracing is on (tests: an in-memory exporter). */
  spanExporter?: SpanExporter;
}

/**
 * The one place where configuration picks adapters: a URL present means the real server,
 * absent means the embedded default. A configured server that cannot be reached fails
 * start-up, rather than silently falling back.
 */
export async function createAdapters(
  config: Config,
  clock: Clock = systemClock,
  options: AdapterOptions = {},
): Promise<Adapters & { close(): Promise<void> }> {
  const closers: (() => Promise<unknown>)[] = [];
  // First, so the database gets its statement log; last to close, so it exports the closing spans.
  // Off (the default), nothing of OpenTelemetry is even loaded (observability/tracing.ts).
  const tracing = await startTracing(config.tracing, {
    exporter: options.spanExporter,
    version: APP_VERSION,
    role: config.role,
  });
  try {
    const database = await createDatabase({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      schema: options.schema ?? config.databaseSchema,
      poolSize: config.databasePoolSize,
      poolWaitMs: config.databasePoolWaitMs,
      log: tracing?.queryLog,
    });
    closers.push(() => database.close());

    let cache: Cache;
    let limiter: RateLimiter;
    let pubsub: PubSub;
    if (config.redisUrl) {
      const redis = await connectRedis(config.redisUrl, 'main');
      const subscriber = await connectRedis(config.redisUrl, 'subscriber');
      closers.push(async () => {
        redis.disconnect();
        subscriber.disconnect();
      });
      cache = createRedisCache(redis, config.namespace);
      limiter = createRedisRateLimiter(redis, config.namespace);
      pubsub = createRedisPubSub(redis, subscriber, config.namespace);
    } else {
      cache = createMemoryCache(clock);
      limiter = createMemoryRateLimiter();
      pubsub = createMemoryPubSub();
    }

    const plainQueue = config.natsUrl
      ? await createJetStreamQueue(config.natsUrl, clock, { namespace: config.namespace, ...options.queue })
      : createPostgresQueue(database.db, clock, { pubsub });
    closers.unshift(() => plainQueue.close());
    const queue = tracing ? tracing.queue(plainQueue) : plainQueue;

    return {
      clock,
      database,
      cache,
      limiter,
      pubsub,
      queue,
      tracing,
      async close() {
        for (const close of closers) await close().catch(() => {});
        await tracing?.shutdown();
      },
    };
  } catch (error) {
    for (const close of closers) await close().catch(() => {});
    await tracing?.shutdown();
    throw error;
  }
}

async function connectRedis(url: string, role: string): Promise<Redis> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectionName: role,
    // Fail a command fast while Redis is away (the request becomes a 503), reconnect forever.
    maxRetriesPerRequest: 1,
    connectTimeout: 3000,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  });
  redis.on('error', () => {});
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    throw new Error(`cannot reach Redis at ${url}: ${(error as Error).message}`, { cause: error });
  }
  return redis;
}
