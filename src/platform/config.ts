import { createHmac } from 'node:crypto';
import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import {
  DEV_KEYS,
  DEV_OPERATOR_KEYS,
  DEV_SERVICE_KEYS,
  type KeyGrant,
  OPERATOR_SCOPES,
  parseKeyGrants,
  SERVICE_SCOPES,
} from './auth/keys.ts';
import { refuseUnsafeProduction } from './auth/production.ts';
import { ConfigError } from './config-error.ts';
import { bool, int, list, minLength, oneOf, optionalUrl, origins, pattern, url } from './env.ts';
import { readTracingSettings, type TracingSettings } from './observability/tracing.ts';

export const SERVICE_NAMES = ['paste', 'notify', 'booking', 'parking'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];
export const ROLES = ['api', 'worker', 'scheduler', 'all'] as const;
export type Role = (typeof ROLES)[number];

export interface Config {
  port: number;
  host: string;
  /**
   * Where links point when no request is at hand (e-mail, workers): `BASE_URL`, or
   * `http://localhost:<port>` when it is not set.
   */
  baseUrl: string;
  /**
   * `BASE_URL` when it is set. Absolute links in API answers use it; without it they use the
   * address of the request (http/links.ts).
   */
  publicBaseUrl?: string;
  services: ServiceName[];
  role: Role;
  instances: number;
  logLevel: string;
  /** PostgreSQL URL; absent means embedded PGlite. */
  databaseUrl?: string;
  /** PostgreSQL schema to use instead of `public` (created if missing). */
  databaseSchema?: string;
  /** PGlite data directory; "memory://" keeps everything in memory (tests). */
  dataDir: string;
  /** PostgreSQL connections per process. */
  databasePoolSize: number;
  /** How long a request waits for a free connection before it is answered 503 (load shedding). */
  databasePoolWaitMs: number;
  redisUrl?: string;
  natsUrl?: string;
  /** Prefix for queue streams, cache keys and channels, so tests and tenants never collide. */
  namespace: string;
  /** Secret for signatures and keyed bijections; the embedded default is fine for a laptop, not for production. */
  secret: string;
  adminApiKey: string;
  /** Service API keys (`SERVICE_KEYS`) with their scopes: other services and back offices. */
  serviceKeys: KeyGrant[];
  /** Operator keys (`OPERATOR_KEYS`): door staff, parking panels and attendants. */
  operatorKeys: KeyGrant[];
  /** Not production: the documented development keys work and pages sign in by themselves. */
  development: boolean;
  /** `NODE_ENV=development` (`npm run dev`): page templates are read again on every render. */
  reloadTemplates: boolean;
  /** `LOG_REQUESTS=true`: an access log line per request. */
  logRequests: boolean;
  bodyLimitBytes: number;
  /** Live SSE streams one client address may hold per process. */
  sseMaxPerAddress: number;
  /** Fastify's `trustProxy`: false, the proxies' addresses/CIDRs, or a hop count (as a function). */
  trustProxy: boolean | string[] | ((address: string, hop: number) => boolean);
  shutdownTimeoutMs: number;
  /** How long a card payment waits for the gateway before answering PENDING (payments). */
  paymentTimeoutMs: number;
  /** Key of the payment gateway's webhook signatures; derived from `secret` when unset. */
  paymentWebhookSecret: string;
  /**
   * Test only: the server's clock can be moved forward with `POST /test/clock {advance_ms}`, so a
   * browser test can watch things expire. Never set it on a real deployment; production refuses it.
   */
  testClock: boolean;
  // HTTP hardening: the server's limits and who may read /metrics.
  /** Longest time to receive a whole request, headers and body (`REQUEST_TIMEOUT_MS`; 0: no limit). */
  requestTimeoutMs: number;
  /** Longest time to receive a request's headers (`HEADERS_TIMEOUT_MS`): a slow-loris client is cut off. */
  headersTimeoutMs: number;
  /** A connection with a request in progress and no traffic either way for this long is closed (`CONNECTION_TIMEOUT_MS`). */
  connectionTimeoutMs: number;
  /** How long an idle keep-alive connection is kept (`KEEP_ALIVE_TIMEOUT_MS`). */
  keepAliveTimeoutMs: number;
  /** Largest request line plus headers, in bytes (`MAX_HEADER_BYTES`); past it, 431. */
  maxHeaderBytes: number;
  /** Most headers a request may have (`MAX_HEADERS_COUNT`); past it, 431. */
  maxHeadersCount: number;
  /**
   * Web origins whose pages may call the credentialed operations from a browser (`CORS_ORIGINS`);
   * public operations answer every origin (http/cors.ts).
   */
  corsOrigins: string[];
  /** Responses of at least this many bytes are compressed (`COMPRESSION_MIN_BYTES`); undefined: `off`. */
  compressionMinBytes?: number;
  /** When set, `/metrics` needs `Authorization: Bearer <token>` (`METRICS_TOKEN`). */
  metricsToken?: string;
  /** When set, `/metrics` is served on this port only, not on the API's (`METRICS_PORT`). */
  metricsPort?: number;
  /** Listen address of the metrics port (`METRICS_HOST`, default `HOST`). */
  metricsHost: string;
  /** OpenTelemetry tracing (`TRACING=otlp` and the OTLP endpoint variables); off by default. */
  tracing: TracingSettings;
  /**
   * The environment the config was read from. A module reads its own settings here (and validates
   * them itself, throwing ConfigError), so tests pass them like any other override.
   */
  env: Readonly<Record<string, string | undefined>>;
}

export { ConfigError } from './config-error.ts';

type Env = Record<string, string | undefined>;

/** Reads the configuration once: command-line flags win over env, env wins over `.env`. */
export function loadConfig(argv: string[] = process.argv.slice(2), env: Env = process.env): Config {
  if (env === process.env && existsSync('.env')) process.loadEnvFile('.env');
  const flags = parseFlags(argv);
  const get = (flag: string, name: string): string | undefined => flags[flag] ?? env[name];
  const port = int('PORT', get('port', 'PORT') ?? '3000', 0, 65535);
  const host = get('host', 'HOST') ?? '0.0.0.0';
  const secret = minLength('APP_SECRET', env.APP_SECRET || 'dev-secret-change-me-in-production', 16);
  const role = oneOf('ROLE', get('role', 'ROLE') ?? 'all', ROLES);
  const givenBaseUrl = get('base-url', 'BASE_URL') || undefined;
  const publicBaseUrl = givenBaseUrl && url('BASE_URL', givenBaseUrl).replace(/\/$/, '');
  const config: Config = {
    port,
    host,
    baseUrl: publicBaseUrl ?? `http://localhost:${port}`,
    publicBaseUrl,
    services: list('SERVICES', get('services', 'SERVICES') ?? SERVICE_NAMES.join(','), SERVICE_NAMES),
    role,
    instances: int('INSTANCES', get('instances', 'INSTANCES') ?? '1', 1, 256),
    logLevel: oneOf('LOG_LEVEL', env.LOG_LEVEL ?? 'info', [
      'fatal',
      'error',
      'warn',
      'info',
      'debug',
      'trace',
      'silent',
    ]),
    databaseUrl: optionalUrl('DATABASE_URL', env.DATABASE_URL, ['postgres:', 'postgresql:']),
    databaseSchema: env.DATABASE_SCHEMA
      ? pattern('DATABASE_SCHEMA', env.DATABASE_SCHEMA, /^[a-z_][a-z0-9_]{0,62}$/)
      : undefined,
    dataDir: env.DATA_DIR ?? './data',
    databasePoolSize: int('DATABASE_POOL_SIZE', env.DATABASE_POOL_SIZE ?? '20', 1, 1000),
    databasePoolWaitMs: int('DATABASE_POOL_WAIT_MS', env.DATABASE_POOL_WAIT_MS ?? '5000', 10, 600_000),
    redisUrl: optionalUrl('REDIS_URL', env.REDIS_URL, ['redis:', 'rediss:']),
    natsUrl: optionalUrl('NATS_URL', env.NATS_URL, ['nats:', 'tls:']),
    namespace: pattern('NAMESPACE', env.NAMESPACE ?? 'app', /^[a-z][a-z0-9_]{0,30}$/),
    secret,
    adminApiKey: minLength('ADMIN_API_KEY', env.ADMIN_API_KEY || DEV_KEYS.admin, 8),
    serviceKeys: parseKeyGrants('SERVICE_KEYS', env.SERVICE_KEYS || DEV_SERVICE_KEYS, SERVICE_SCOPES),
    operatorKeys: parseKeyGrants('OPERATOR_KEYS', env.OPERATOR_KEYS || DEV_OPERATOR_KEYS, OPERATOR_SCOPES),
    development: env.NODE_ENV !== 'production',
    reloadTemplates: env.NODE_ENV === 'development',
    logRequests: bool('LOG_REQUESTS', env.LOG_REQUESTS ?? 'false'),
    bodyLimitBytes: int('BODY_LIMIT_BYTES', env.BODY_LIMIT_BYTES ?? String(11 * 1024 * 1024), 1024, 2 ** 30),
    trustProxy: trustProxy(env.TRUST_PROXY ?? 'false'),
    sseMaxPerAddress: int('SSE_MAX_PER_ADDRESS', env.SSE_MAX_PER_ADDRESS ?? '32', 1, 1_000_000),
    shutdownTimeoutMs: int('SHUTDOWN_TIMEOUT_MS', env.SHUTDOWN_TIMEOUT_MS ?? '10000', 100, 600_000),
    testClock: testClock(env),
    paymentTimeoutMs: int('PAYMENT_TIMEOUT_MS', env.PAYMENT_TIMEOUT_MS ?? '10000', 10, 120_000),
    paymentWebhookSecret: env.PAYMENT_WEBHOOK_SECRET
      ? minLength('PAYMENT_WEBHOOK_SECRET', env.PAYMENT_WEBHOOK_SECRET, 16)
      : createHmac('sha256', secret).update('payments.webhook').digest('base64url'),
    ...httpLimits(env, host),
    tracing: readTracingSettings(env, role),
    env,
  };
  refuseUnsafeProduction(config);
  return config;
}

/**
 * `TRUST_PROXY`: how far to believe `X-Forwarded-For`. A hop count (1: the edge proxy in front)
 * or the proxies' addresses; `true` believes every hop, so any client could pick its own
 * address (and rate-limit key); production refuses it.
 */
function trustProxy(raw: string): Config['trustProxy'] {
  const value = raw.trim();
  if (['false', 'no', ''].includes(value)) return false;
  if (value === 'true' || value === 'yes') return true;
  if (/^\d+$/.test(value)) {
    const hops = int('TRUST_PROXY', value, 0, 16);
    // The client is the address `hops` proxies back from this server (what a hop count means in proxy-addr).
    return (_address, hop) => hop < hops;
  }
  const proxies = value.split(',').map((item) => item.trim());
  for (const proxy of proxies) {
    const [address, bits, extra] = proxy.split('/');
    const family = isIP(address);
    const maxBits = family === 6 ? 128 : 32;
    if (
      !family ||
      extra !== undefined ||
      (bits !== undefined && !(/^\d+$/.test(bits) && Number(bits) <= maxBits))
    ) {
      throw new ConfigError(
        `TRUST_PROXY must be false, a hop count, or proxy addresses/CIDRs separated by commas, got "${raw}"`,
      );
    }
  }
  return proxies;
}

/**
 * The HTTP server's limits, which web origins may call it (CORS), what it compresses, and the
 * metrics endpoint's access. The headers timeout cannot exceed the request timeout (Node refuses
 * it). Keep the connection timeout above the SSE heartbeat (15 s): the heartbeat is the only
 * traffic on a quiet live stream's socket.
 */
function httpLimits(env: Env, host: string) {
  const requestTimeoutMs = int('REQUEST_TIMEOUT_MS', env.REQUEST_TIMEOUT_MS ?? '60000', 0, 3_600_000);
  const headersTimeoutMs = int('HEADERS_TIMEOUT_MS', env.HEADERS_TIMEOUT_MS ?? '10000', 100, 600_000);
  if (requestTimeoutMs > 0 && headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(
      `HEADERS_TIMEOUT_MS (${headersTimeoutMs}) must not exceed REQUEST_TIMEOUT_MS (${requestTimeoutMs})`,
    );
  }
  return {
    requestTimeoutMs,
    headersTimeoutMs,
    connectionTimeoutMs: int('CONNECTION_TIMEOUT_MS', env.CONNECTION_TIMEOUT_MS ?? '60000', 1000, 3_600_000),
    keepAliveTimeoutMs: int('KEEP_ALIVE_TIMEOUT_MS', env.KEEP_ALIVE_TIMEOUT_MS ?? '72000', 1000, 600_000),
    maxHeaderBytes: int('MAX_HEADER_BYTES', env.MAX_HEADER_BYTES ?? '16384', 1024, 1_048_576),
    maxHeadersCount: int('MAX_HEADERS_COUNT', env.MAX_HEADERS_COUNT ?? '100', 10, 2000),
    corsOrigins: origins('CORS_ORIGINS', env.CORS_ORIGINS ?? ''),
    compressionMinBytes:
      env.COMPRESSION_MIN_BYTES?.trim() === 'off'
        ? undefined
        : int('COMPRESSION_MIN_BYTES', env.COMPRESSION_MIN_BYTES || '1024', 0, 2 ** 30),
    metricsToken: env.METRICS_TOKEN ? minLength('METRICS_TOKEN', env.METRICS_TOKEN, 16) : undefined,
    metricsPort: env.METRICS_PORT ? int('METRICS_PORT', env.METRICS_PORT, 0, 65535) : undefined,
    metricsHost: env.METRICS_HOST || host,
  };
}

function testClock(env: Env): boolean {
  const enabled = bool('TEST_CLOCK', env.TEST_CLOCK ?? 'false');
  if (enabled && env.NODE_ENV === 'production') {
    throw new ConfigError(
      'TEST_CLOCK lets anyone move the server clock; it is refused when NODE_ENV=production',
    );
  }
  return enabled;
}

function parseFlags(argv: string[]): Record<string, string> {
  const flags: Record<string, string> = {};
  for (const arg of argv) {
    const match = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!match) throw new ConfigError(`unknown argument "${arg}" (expected --name=value)`);
    flags[match[1]] = match[2] ?? 'true';
  }
  return flags;
}
