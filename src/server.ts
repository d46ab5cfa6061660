import closeWithGrace from 'close-with-grace';
import Fastify, { type FastifyInstance } from 'fastify';
import { type App, buildApp } from './app.ts';
import { createAdapters } from './platform/adapters.ts';
import { createOffsetClock, type OffsetClock, systemClock } from './platform/clock.ts';
import type { Config } from './platform/config.ts';
import {
  answerClientError,
  registerProblemHandlers,
  sendProblem,
  toAppError,
} from './platform/http/problem.ts';
import { requestIdFor } from './platform/http/request-id.ts';
import { registerSecurityHeaders } from './platform/http/security.ts';
import { registerMetricsEndpoint } from './platform/observability/metrics.ts';

export interface StartOptions {
  /** Lets a test harness add routes before the server listens. */
  beforeListen?: (app: App) => void | Promise<void>;
}

/**
 * Adapters → app → listen → roles, with graceful shutdown: on SIGTERM/SIGINT the server stops
 * accepting, answers the requests in flight, stops workers after their current job, flushes
 * module buffers and closes the adapters, all within SHUTDOWN_TIMEOUT_MS.
 */
export async function start(config: Config, options: StartOptions = {}): Promise<App> {
  const clock = config.testClock ? createOffsetClock() : systemClock;
  const adapters = await createAdapters(config, clock);
  const app = await buildApp(config, adapters, { routes: config.role === 'api' || config.role === 'all' });
  if (config.testClock) registerTestClock(app, clock as OffsetClock);
  await options.beforeListen?.(app);
  let metricsServer: App | undefined;

  closeWithGrace({ delay: config.shutdownTimeoutMs }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'shutting down after an error');
    else app.log.info({ signal }, 'shutting down: finishing in-flight requests and jobs');
    await app.close();
    await metricsServer?.close();
    await adapters.close();
    app.log.info('shut down cleanly');
  });

  await app.listen({ port: config.port, host: config.host });
  if (config.metricsPort !== undefined) metricsServer = await listenMetrics(config, app);
  if (config.role === 'worker' || config.role === 'all') await app.platform.startWorkers();
  if (config.role === 'scheduler' || config.role === 'all') app.platform.startScheduler();
  const address = app.server.address();
  app.log.info(
    {
      port: typeof address === 'object' && address ? address.port : config.port,
      services: config.services,
      role: config.role,
      database: adapters.database.kind,
      queue: adapters.queue.kind,
      cache: adapters.cache.kind,
    },
    `ready on ${config.baseUrl}`,
  );
  return app;
}

/**
 * METRICS_PORT: `/metrics` on a listen address of its own (one only the scraper reaches), and
 * not on the API's port at all (buildApp leaves it out). METRICS_TOKEN applies here too.
 */
export async function listenMetrics(config: Config, app: App): Promise<FastifyInstance> {
  const server = Fastify({
    loggerInstance: app.log,
    genReqId: requestIdFor,
    connectionTimeout: config.connectionTimeoutMs,
    requestTimeout: config.requestTimeoutMs,
    http: { maxHeaderSize: config.maxHeaderBytes },
    // As on the API's port: what the HTTP parser or the router refuses is problem+json with a
    // request id, not Fastify's default `{"error", …}` body.
    clientErrorHandler: (error, socket) => answerClientError(error, socket, { limits: config, log: app.log }),
    frameworkErrors: (error, _request, reply) => sendProblem(reply, toAppError(error)),
  });
  server.server.maxHeadersCount = config.maxHeadersCount;
  registerSecurityHeaders(server);
  registerProblemHandlers(server);
  registerMetricsEndpoint(server, app.platform.metrics.registry, config.metricsToken);
  await server.listen({ port: config.metricsPort, host: config.metricsHost });
  return server;
}

/** TEST_CLOCK=1 only (config refuses it in production): lets a browser test move the server's clock. */
function registerTestClock(app: App, clock: OffsetClock) {
  app.log.warn("TEST_CLOCK is on: POST /test/clock moves this server's clock");
  app.post(
    '/test/clock',
    {
      schema: {
        hide: true,
        body: {
          type: 'object',
          required: ['advance_ms'],
          properties: { advance_ms: { type: 'integer', minimum: 0 } },
          additionalProperties: false,
        },
      },
    },
    async (request) => {
      clock.advance((request.body as { advance_ms: number }).advance_ms);
      return { now: clock.now().toISOString() };
    },
  );
}
