import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { Adapters } from './adapters.ts';
import type { Auth } from './auth/index.ts';
import type { Config, ServiceName } from './config.ts';
import type { Migrations } from './db/migrate.ts';
import type { SseHub } from './http/sse.ts';
import type { JobDefinition } from './jobs/index.ts';
import type { Metrics } from './observability/metrics.ts';
import type { Consumer } from './queue/index.ts';

/**
 * The app as routes see it: each route's request types come from its TypeBox schemas. A routes
 * file is a typed plugin (`FastifyPluginAsyncTypebox<Options>`) that a module registers on it.
 */
export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

export interface HealthCheck {
  status: 'ok' | 'degraded' | 'down';
  [detail: string]: unknown;
}

/** Everything a module may use: adapters chosen from config, plus the platform's shared parts. */
export interface PlatformDeps extends Adapters {
  config: Config;
  log: FastifyBaseLogger;
  metrics: Metrics;
  sse: SseHub;
  /** Credentials: user tokens, staff sessions, a module's own account scheme (routes declare `config.access`). */
  auth: Auth;
  /** Public APIs of modules created earlier in this process (e.g. booking uses notify's). */
  modules: ReadonlyMap<string, unknown>;
}

export interface ModuleInstance {
  /** Functions other modules may call in-process (their only way into this module). */
  api?: unknown;
  /** HTTP routes and pages (api role). */
  routes?(app: App): void | Promise<void>;
  /** Queue consumers (worker role). */
  startWorkers?(): Consumer[] | Promise<Consumer[]>;
  /** Periodic jobs (scheduler role). */
  jobs?: JobDefinition[];
  /** Extra readiness checks, e.g. circuit breakers. */
  health?(): Promise<Record<string, HealthCheck>>;
  /** Flushes buffers (view counters) and releases resources at shutdown. */
  close?(): Promise<void>;
}

export interface ServiceModule {
  /** A service name from `--services`, or an internal module (payments) pulled in by one. */
  name: ServiceName | 'payments';
  /** Modules this one needs created first (and enabled with it). */
  needs?: ('payments' | ServiceName)[];
  migrations: Migrations;
  create(deps: PlatformDeps): ModuleInstance | Promise<ModuleInstance>;
}
