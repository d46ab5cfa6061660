import { randomBytes } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import pg from 'pg';
import { type App, buildApp } from '../../src/app.ts';
import { type AdapterOptions, type Adapters, createAdapters } from '../../src/platform/adapters.ts';
import { DEV_KEYS } from '../../src/platform/auth/keys.ts';
import { createUserTokens } from '../../src/platform/auth/user-tokens.ts';
import { type Clock, createTestClock, type TestClock } from '../../src/platform/clock.ts';
import { type Config, loadConfig, type ServiceName } from '../../src/platform/config.ts';
import type { ServiceModule } from '../../src/platform/module.ts';

/**
 * Test wiring. With TEST_DATABASE_URL, REDIS_URL or NATS_URL set, tests run on those real
 * servers (and fail, never skip, when one is unreachable); without them, on the embedded
 * adapters. Each test file gets its own schema, key prefix and stream namespace.
 */
export const realServices = {
  databaseUrl: process.env.TEST_DATABASE_URL || undefined,
  redisUrl: process.env.REDIS_URL || undefined,
  natsUrl: process.env.NATS_URL || undefined,
};

export function uniqueName(prefix = 't'): string {
  return `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
}

export function testConfig(overrides: Record<string, string> = {}, services?: ServiceName[]): Config {
  const env: Record<string, string | undefined> = {
    PORT: '0',
    BASE_URL: 'http://localhost:3000',
    DATA_DIR: 'memory://',
    DATABASE_URL: realServices.databaseUrl,
    REDIS_URL: realServices.redisUrl,
    NATS_URL: realServices.natsUrl,
    NAMESPACE: uniqueName('t'),
    LOG_LEVEL: 'silent',
    SERVICES: (services ?? ['paste', 'notify', 'booking', 'parking']).join(','),
    ...overrides,
  };
  return loadConfig([], env);
}

export interface TestAdapters extends Adapters {
  close(): Promise<void>;
}

export async function createTestAdapters(
  config: Config,
  clock: Clock = createTestClock(),
  options: AdapterOptions = {},
): Promise<TestAdapters> {
  const schema = config.databaseUrl ? (options.schema ?? config.namespace) : undefined;
  const adapters = await createAdapters(config, clock, {
    ...options,
    schema,
    queue: { ackWaitMs: 3000, leaseMs: 1500, ...options.queue },
  });
  return {
    ...adapters,
    async close() {
      await adapters.close();
      await dropNamespace(config, schema);
    },
  };
}

/** Removes what a test created on the real servers: its schema, Redis keys, streams and buckets. */
export async function dropNamespace(
  config: Pick<Config, 'databaseUrl' | 'natsUrl' | 'redisUrl' | 'namespace'>,
  schema: string | undefined,
) {
  if (config.databaseUrl && schema) {
    const client = new pg.Client({ connectionString: config.databaseUrl });
    await client.connect();
    await client.query(`drop schema if exists ${schema} cascade`).finally(() => client.end());
  }
  if (config.natsUrl) {
    const nc = await connect({ servers: config.natsUrl });
    const jsm = await jetstreamManager(nc);
    const prefix = config.namespace.toUpperCase();
    for await (const stream of jsm.streams.list()) {
      const name = stream.config.name;
      if (name.startsWith(`${prefix}_`) || name === `KV_${config.namespace}_queue_leases`) {
        await jsm.streams.delete(name).catch(() => {});
      }
    }
    await nc.close();
  }
  if (config.redisUrl) {
    const { Redis } = await import('ioredis');
    const redis = new Redis(config.redisUrl, { lazyConnect: true });
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${config.namespace}:*`, 'COUNT', 1000);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
    redis.disconnect();
  }
}

export interface TestApp {
  app: App;
  adapters: TestAdapters;
  clock: TestClock;
  config: Config;
  /** Headers proving the request comes from `userId` (its signed user token). */
  asUser(userId: string): { authorization: string };
  /** Headers of the development service key (every scope), operator key (every scope) and admin key. */
  asService: { 'x-api-key': string };
  asOperator: { 'x-operator-key': string };
  asAdmin: { 'x-admin-key': string };
  close(): Promise<void>;
}

/** An app on fresh adapters with a movable clock; `close()` tears down everything it made. */
export async function createTestApp(
  options: {
    services?: ServiceName[];
    /** Internal modules to build instead of the services' ones, e.g. `['payments']`. */
    modules?: ServiceModule['name'][];
    /** Public APIs standing in for modules (see BuildOptions.stubs). */
    stubs?: Partial<Record<ServiceModule['name'], unknown>>;
    /** Module definitions standing in for the registry's (see BuildOptions.replace). */
    replace?: ServiceModule[];
    env?: Record<string, string>;
    clock?: TestClock;
    workers?: boolean;
    /** With `env: {TRACING: 'otlp'}`: where the spans go (an InMemorySpanExporter). */
    spanExporter?: AdapterOptions['spanExporter'];
  } = {},
): Promise<TestApp> {
  const clock = options.clock ?? createTestClock();
  const config = testConfig(options.env, options.services);
  const adapters = await createTestAdapters(config, clock, { spanExporter: options.spanExporter });
  // A failed build must not leave connections open (the test process would never exit).
  const app = await buildApp(config, adapters, {
    logger: false,
    modules: options.modules,
    stubs: options.stubs,
    replace: options.replace,
  }).catch(async (error) => {
    await adapters.close();
    throw error;
  });
  await app.ready();
  if (options.workers) await app.platform.startWorkers();
  return {
    app,
    adapters,
    clock,
    config,
    asUser: (userId) => ({ authorization: `Bearer ${createUserTokens(config.secret).issue(userId)}` }),
    asService: { 'x-api-key': DEV_KEYS.service },
    asOperator: { 'x-operator-key': DEV_KEYS.operator },
    asAdmin: { 'x-admin-key': config.adminApiKey },
    async close() {
      await app.close();
      await adapters.close();
    },
  };
}

/**
 * One sample of `GET /metrics`: the line `name{labels} value`, labels given as they print
 * (`table="pastes"`); NaN when the series is absent.
 */
export async function metricValue(app: App, name: string, labels = ''): Promise<number> {
  const series = labels ? `${name}{${labels}}` : name;
  const lines = (await app.inject({ method: 'GET', url: '/metrics' })).body.split('\n');
  const line = lines.find((candidate) => candidate.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : Number.NaN;
}
