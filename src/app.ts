import './platform/perf/tick-shape.ts';
import formbody from '@fastify/formbody';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyServerOptions, LogController } from 'fastify';
import { API_TAGS, modulesFor, SERVICE_LINKS } from './modules.ts';
import type { Adapters } from './platform/adapters.ts';
import { registerGuestRoute } from './platform/auth/guests.ts';
import { registerAuth } from './platform/auth/index.ts';
import { registerSignIn } from './platform/auth/sign-in.ts';
import type { Config } from './platform/config.ts';
import { migrateModule } from './platform/db/migrate.ts';
import { platformError } from './platform/errors.ts';
import { registerCompression } from './platform/http/compression.ts';
import { registerConditionalGets } from './platform/http/conditional.ts';
import { watchConnections } from './platform/http/connections.ts';
import { registerCors } from './platform/http/cors.ts';
import { registerHealth } from './platform/http/health.ts';
import { idempotencyRetention, registerIdempotency } from './platform/http/idempotency.ts';
import { registerInputGuards } from './platform/http/input.ts';
import { registerLinks } from './platform/http/links.ts';
import { registerOpenApi } from './platform/http/openapi.ts';
import {
  answerClientError,
  registerProblemHandlers,
  sendProblem,
  sendRawProblem,
  toAppError,
} from './platform/http/problem.ts';
import { registerUrlRedaction } from './platform/http/redact-url.ts';
import { requestIdFor } from './platform/http/request-id.ts';
import { registerSecurityHeaders } from './platform/http/security.ts';
import { createSseHub } from './platform/http/sse.ts';
import { requestValidation } from './platform/http/validation.ts';
import { createScheduler, type Scheduler } from './platform/jobs/index.ts';
import { retentionJob } from './platform/jobs/retention.ts';
import { platformMigrations } from './platform/migrations.ts';
import type { App, HealthCheck, ModuleInstance, PlatformDeps, ServiceModule } from './platform/module.ts';
import { countedCache, countedLimiter, registerProcessGauges } from './platform/observability/instrument.ts';
import {
  createMetrics,
  type Metrics,
  registerMetricsEndpoint,
  registerRequestMetrics,
} from './platform/observability/metrics.ts';
import { deferredChildLogger } from './platform/observability/request-logger.ts';
import { registerPages } from './platform/pages/index.ts';
import type { Consumer } from './platform/queue/index.ts';
import { deadLetterRetention } from './platform/queue/postgres/dead-letters.ts';
import { APP_VERSION } from './platform/version.ts';

export type { App };

export interface Platform {
  modules: Map<string, ModuleInstance>;
  metrics: Metrics;
  scheduler: Scheduler;
  /** Starts the queue consumers of every module (worker role). */
  startWorkers(): Promise<void>;
  /** Starts the periodic jobs (scheduler role). */
  startScheduler(): void;
}

declare module 'fastify' {
  interface FastifyInstance {
    platform: Platform;
  }
}

export interface BuildOptions {
  /** Pino options or an existing logger; tests pass `false`. */
  logger?: FastifyServerOptions['logger'];
  /** Register the HTTP routes of the services (the api role). Health, metrics and docs are always there. */
  routes?: boolean;
  /** Build these modules (and what they need) instead of `config.services`' ones: tests of an internal module. */
  modules?: ServiceModule['name'][];
  /**
   * Public APIs to use as given instead of building those modules (tests: a recording double of a
   * neighbour, e.g. `{notify: recorder}`); modules that need them receive these in `deps.modules`.
   */
  stubs?: Partial<Record<ServiceModule['name'], unknown>>;
  /** Module definitions built instead of the registry's of the same name (tests: `createNotifyModule({senders})`). */
  replace?: ServiceModule[];
}

/**
 * Builds the Fastify app: platform plugins, migrations, then each enabled module. Starting
 * workers and the scheduler is left to the caller (main.ts by role, tests by need);
 * `app.close()` stops them after the last in-flight request has finished.
 */
export async function buildApp(config: Config, adapters: Adapters, options: BuildOptions = {}): Promise<App> {
  const app: App = Fastify({
    logger: withTraceIds(options.logger ?? { level: config.logLevel }, adapters),
    // Access logs cost a log line per request; the request id is on every line that is written.
    logController: new LogController({
      disableRequestLogging: !config.logRequests,
      requestIdLogLabel: 'requestId',
    }),
    genReqId: requestIdFor,
    // Each request's logger is built on its first line (request-logger.ts).
    childLoggerFactory: deferredChildLogger,
    bodyLimit: config.bodyLimitBytes,
    trustProxy: config.trustProxy,
    return503OnClosing: true,
    ...serverLimits(config),
    // What the HTTP parser refuses before a request exists (431, 414, 408, 400) is problem+json too.
    clientErrorHandler: (error, socket) => answerClientError(error, socket, { limits: config, log: app.log }),
    forceCloseConnections: 'idle',
    // Router errors that happen before routing get the same problem+json as everything else.
    frameworkErrors: (error, _request, reply) => sendProblem(reply, toAppError(error)),
    routerOptions: {
      maxParamLength: 200,
      onMaxParamLength: (_path, request, response) =>
        sendRawProblem(
          request,
          response,
          platformError('uri_too_long', 'A path segment is longer than 200 characters'),
        ),
    },
    // JSON bodies are validated as sent; query strings, params and form fields are coerced (validation.ts).
    schemaController: requestValidation(),
    ajv: {
      customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: true },
    },
  }).withTypeProvider<TypeBoxTypeProvider>();
  // Node's own property (not a constructor option): a request with more headers is refused (431).
  app.server.maxHeadersCount = config.maxHeadersCount;
  // First of all hooks (TRACING=otlp): every later hook and the handler run inside the request's span.
  adapters.tracing?.registerHttp(app);

  const db = adapters.database.db;
  await migrateModule(adapters.database, 'platform', platformMigrations);
  const stubs = options.stubs ?? {};
  const modules = modulesFor(options.modules ?? config.services, options.replace).filter(
    (module) => !(module.name in stubs),
  );
  for (const module of modules) await migrateModule(adapters.database, module.name, module.migrations);

  const metrics = createMetrics(
    (topic) => adapters.queue.depth(topic),
    () => adapters.database.poolStats(),
  );
  adapters.queue.events.on('outcome', (topic: string, outcome: string) =>
    metrics.queueOutcomes.inc({ topic, outcome }),
  );
  adapters.queue.events.on('error', (error: unknown) => app.log.error({ err: error }, 'queue error'));
  const scheduler = createScheduler(db, adapters.clock);
  scheduler.events.on('ran', (job: string, outcome: string, seconds: number) => {
    metrics.jobRuns.inc({ job, outcome });
    metrics.jobDuration.observe({ job }, seconds);
  });
  scheduler.events.on('error', (job: string, error: unknown) =>
    app.log.error({ err: error, job }, 'job failed'),
  );
  scheduler.add(
    retentionJob('platform.retention', '17 * * * *', [idempotencyRetention(db), deadLetterRetention(db)], {
      clock: adapters.clock,
      metrics,
    }),
  );

  const sse = createSseHub({ maxPerAddress: config.sseMaxPerAddress });
  // Every module's cache lookups and limit refusals are counted here, where they all pass.
  const cache = countedCache(adapters.cache, metrics.registry);
  const limiter = countedLimiter(adapters.limiter, metrics.registry);
  const connections = watchConnections(app.server, config.connectionTimeoutMs);
  registerProcessGauges(metrics.registry, {
    server: app.server,
    inFlight: connections.inFlight,
    sse,
    version: APP_VERSION,
    role: config.role,
    services: config.services,
  });
  let closing = false;
  // Before any route: these onRoute hooks see every route (CORS reads each one's access).
  const cors = registerCors(app, config.corsOrigins);
  registerSecurityHeaders(app, cors);
  // Its onRoute hook installs each route's credential check.
  const auth = registerAuth(app, { config, limiter, clock: adapters.clock });
  registerProblemHandlers(app, [registerRequestMetrics(app, metrics)], cors.preflight);
  // With METRICS_PORT the metrics are served there instead (server.ts), never on the API's port.
  if (config.metricsPort === undefined) registerMetricsEndpoint(app, metrics.registry, config.metricsToken);
  registerUrlRedaction(app);
  registerInputGuards(app);
  registerLinks(app, config);
  registerIdempotency(app, db, adapters.clock, config.secret);
  // Before compression: the validator is of the plain body.
  registerConditionalGets(app);
  // After idempotency: its onSend stores the body as sent, before compression turns it into a stream.
  // COMPRESSION_MIN_BYTES=off leaves it to the proxy in front.
  if (config.compressionMinBytes !== undefined) await registerCompression(app, config.compressionMinBytes);
  await app.register(formbody);
  registerPages(
    app,
    SERVICE_LINKS.map(({ name, title, href }) => ({ name, title, href })),
    { development: config.development, reloadTemplates: config.reloadTemplates },
  );

  const instances = new Map<string, ModuleInstance>();
  const apis = new Map<string, unknown>(Object.entries(stubs));
  const deps: PlatformDeps = {
    ...adapters,
    cache,
    limiter,
    config,
    log: app.log,
    metrics,
    sse,
    auth,
    modules: apis,
  };
  for (const module of modules) {
    const instance = await module.create(deps);
    instances.set(module.name, instance);
    if (instance.api !== undefined) apis.set(module.name, instance.api);
    for (const job of instance.jobs ?? []) scheduler.add(job);
  }
  // After the modules (they add their account schemes while created), before their routes.
  await registerOpenApi(app, {
    baseUrl: config.baseUrl,
    publicBaseUrl: config.publicBaseUrl,
    securitySchemes: auth.securitySchemes(),
    tags: API_TAGS,
  });

  registerHealth(
    app,
    adapters,
    () => moduleHealth(instances),
    () => closing,
  );
  if (options.routes !== false) {
    registerGuestRoute(app, auth.userTokens);
    registerSignIn(app, auth);
    for (const instance of instances.values()) await instance.routes?.(app);
  }
  if (!app.hasRoute({ method: 'GET', url: '/' })) {
    app.get('/', { schema: { hide: true } }, (_request, reply) =>
      reply.page('/platform/pages/home', {
        title: 'Home',
        services: SERVICE_LINKS.map((link) => ({ ...link, available: config.services.includes(link.name) })),
      }),
    );
  }

  for (const link of SERVICE_LINKS) {
    if (app.hasRoute({ method: 'GET', url: link.href })) continue;
    const enabled = config.services.includes(link.name);
    app.get(link.href, { schema: { hide: true } }, (_request, reply) =>
      reply.code(enabled ? 200 : 404).page('/platform/pages/message', {
        title: link.title,
        message: enabled
          ? `${link.title} is not built yet; its API will appear in the docs when it lands.`
          : `${link.title} is not enabled in this process (see --services).`,
        link: { href: '/', title: 'Back to the home page' },
      }),
    );
  }

  const consumers: Consumer[] = [];
  app.decorate('platform', {
    modules: instances,
    metrics,
    scheduler,
    async startWorkers() {
      for (const instance of instances.values()) consumers.push(...((await instance.startWorkers?.()) ?? []));
    },
    startScheduler: () => scheduler.start(),
  } satisfies Platform);

  app.addHook('preClose', async () => {
    closing = true;
    sse.closeAll();
  });
  // Runs once the server has stopped accepting and every in-flight request has been answered.
  app.addHook('onClose', async () => {
    connections.stop();
    await scheduler.stop();
    await Promise.all(consumers.map((consumer) => consumer.stop()));
    for (const instance of [...instances.values()].reverse()) await instance.close?.();
  });
  return app;
}

/** With tracing on, every log line written inside a span carries its `trace_id` and `span_id`. */
function withTraceIds(
  logger: FastifyServerOptions['logger'],
  adapters: Adapters,
): FastifyServerOptions['logger'] {
  const tracing = adapters.tracing;
  if (!tracing || typeof logger !== 'object') return logger;
  return { ...logger, mixin: () => tracing.logFields() };
}

/**
 * Timeouts and header limits of the HTTP server. Node's request and headers timeouts bound how
 * long *receiving* a request may take (a slow-loris client sending its headers a byte at a time),
 * never the response: an SSE stream answers a request received long ago and lives on. Node looks
 * for late requests every `connectionsCheckingInterval` (30 s by default, longer than the headers
 * timeout itself); a quarter of the shortest timeout keeps the cut-off close to the setting. Each
 * check walks only the connections with a request still arriving.
 */
function serverLimits(config: Config) {
  const shortest = Math.min(config.headersTimeoutMs, config.requestTimeoutMs || Number.POSITIVE_INFINITY);
  return {
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    http: {
      // A request without Content-Length or Transfer-Encoding has no body; Node then starts it as an
      // ended stream and skips its stream life cycle (read, 'end', destroy, 'close'), work every
      // small GET would otherwise pay for. Its 'close' event never fires, so a stream that must
      // notice the client leaving listens on the response (sse.ts).
      optimizeEmptyRequests: true,
      requestTimeout: config.requestTimeoutMs,
      headersTimeout: config.headersTimeoutMs,
      connectionsCheckingInterval: Math.max(50, Math.min(30_000, Math.floor(shortest / 4))),
      maxHeaderSize: config.maxHeaderBytes,
    },
  };
}

async function moduleHealth(instances: Map<string, ModuleInstance>): Promise<Record<string, HealthCheck>> {
  const results = await Promise.all([...instances.values()].map((instance) => instance.health?.() ?? {}));
  return Object.assign({}, ...results);
}
