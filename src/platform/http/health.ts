import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Adapters } from '../adapters.ts';
import type { HealthCheck } from '../module.ts';

const CHECK_TIMEOUT_MS = 2000;
/**
 * How large the embedded database (PGlite) grows before its hot paths slow down noticeably
 * (measured: `npm run bench -- pglite-size`, bench/SCALE.md). Past it nothing is refused; the
 * readiness check says so, and that it is time for DATABASE_URL.
 */
export const PGLITE_COMFORTABLE_BYTES = 768 * 1024 ** 2;

/** The database's check, with the embedded database's size and a warning past its comfortable size. */
export async function databaseCheck(
  database: Adapters['database'],
  comfortableBytes = PGLITE_COMFORTABLE_BYTES,
): Promise<HealthCheck> {
  const check = await timed(database.kind, database.ping);
  if (check.status !== 'ok' || !database.sizeBytes) return check;
  const size = await database.sizeBytes();
  if (size <= comfortableBytes) return { ...check, size_bytes: size };
  const mb = (bytes: number) => `${Math.round(bytes / 1024 ** 2)} MB`;
  return {
    ...check,
    status: 'degraded',
    size_bytes: size,
    warning: `The embedded database holds ${mb(size)}, past the ${mb(comfortableBytes)} it serves comfortably: set DATABASE_URL to move to PostgreSQL`,
  };
}

async function timed(kind: string, ping: () => Promise<void>): Promise<HealthCheck> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      ping(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer in ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
      }),
    ]);
    return { status: 'ok', kind, latency_ms: Math.round((performance.now() - started) * 10) / 10 };
  } catch (error) {
    return { status: 'down', kind, error: (error as Error).message };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `/health/live` says the process is up; `/health/ready` says it can do its work: every adapter
 * in use answers, and the modules' own checks (circuit breakers) are not down.
 *
 * Neither runs the compression plugin's hooks (`compress: false`): every load balancer and
 * orchestrator probes them every few seconds, and their answers are a few hundred bytes at most,
 * never worth compressing, while the hooks cost every request of a route that has them.
 */
export function registerHealth(
  app: FastifyInstance,
  adapters: Adapters,
  extraChecks: () => Promise<Record<string, HealthCheck>>,
  isClosing: () => boolean,
): void {
  app.get(
    '/health/live',
    {
      config: { access: { public: true } },
      compress: false,
      schema: {
        tags: ['platform'],
        summary: 'The process is running',
        response: {
          200: { type: 'object', properties: { status: { type: 'string' } }, required: ['status'] },
        },
      },
    },
    async () => ({
      status: 'ok',
    }),
  );
  app.get(
    '/health/ready',
    {
      // Load balancers probe it without credentials; it names adapters and breaker states, no data.
      config: { access: { public: true } },
      compress: false,
      schema: {
        tags: ['platform'],
        summary: 'Every dependency in use answers',
        response: {
          200: {
            type: 'object',
            required: ['status', 'checks'],
            properties: {
              status: { type: 'string' },
              checks: {
                type: 'object',
                additionalProperties: { type: 'object', additionalProperties: true },
              },
            },
          },
        },
      },
    },
    async (_request, reply) => {
      const [database, cache, limiter, pubsub, queue, extra] = await Promise.all([
        databaseCheck(adapters.database),
        timed(adapters.cache.kind, adapters.cache.ping),
        timed(adapters.limiter.kind, adapters.limiter.ping),
        timed(adapters.pubsub.kind, adapters.pubsub.ping),
        timed(adapters.queue.kind, adapters.queue.ping),
        extraChecks().catch(
          (error): Record<string, HealthCheck> => ({ modules: { status: 'down', error: String(error) } }),
        ),
      ]);
      const checks: Record<string, HealthCheck> = {
        database,
        cache,
        rate_limiter: limiter,
        pubsub,
        queue,
        ...extra,
      };
      const down = isClosing() || Object.values(checks).some((check) => check.status === 'down');
      // The same body as a 503 (not a problem: what a probe reads); the document describes the 200.
      if (down) (reply as FastifyReply).code(503).header('retry-after', '5');
      return { status: isClosing() ? 'shutting_down' : down ? 'unavailable' : 'ok', checks };
    },
  );
}
