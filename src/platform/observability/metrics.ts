import type { FastifyInstance } from 'fastify';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/**
 * One registry per app instance (tests build many apps in one process). Services add their
 * own metrics through `registry`.
 */
export interface Metrics {
  registry: Registry;
  httpDuration: Histogram<'method' | 'route' | 'status'>;
  queueOutcomes: Counter<'topic' | 'outcome'>;
  queueDepth: Gauge<'topic'>;
  jobRuns: Counter<'job' | 'outcome'>;
  jobDuration: Histogram<'job'>;
  /** Topics whose depth is read at scrape time. */
  watchQueueDepth(topic: string): void;
}

export function createMetrics(
  readDepth: (topic: string) => Promise<number>,
  poolStats: () => { total: number; idle: number; waiting: number },
  defaults = true,
): Metrics {
  const registry = new Registry();
  if (defaults) collectDefaultMetrics({ register: registry });
  new Gauge({
    name: 'db_pool_connections',
    help: 'Database connections by state (in_use, idle) and requests waiting for one',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const stats = poolStats();
      this.set({ state: 'in_use' }, stats.total - stats.idle);
      this.set({ state: 'idle' }, stats.idle);
      this.set({ state: 'waiting' }, stats.waiting);
    },
  });
  const topics = new Set<string>();
  const queueDepth = new Gauge({
    name: 'queue_depth',
    help: 'Messages waiting or in progress per queue topic',
    labelNames: ['topic'] as const,
    registers: [registry],
    async collect() {
      await Promise.all(
        [...topics].map(async (topic) => {
          try {
            this.set({ topic }, await readDepth(topic));
          } catch {
            // An unreachable queue shows up in /health/ready; the scrape still succeeds.
          }
        }),
      );
    },
  });
  return {
    registry,
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration by method, route pattern and status',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    queueOutcomes: new Counter({
      name: 'queue_messages_total',
      help: 'Queue messages handled, by topic and outcome (acked, retried, deferred, dead_lettered)',
      labelNames: ['topic', 'outcome'] as const,
      registers: [registry],
    }),
    queueDepth,
    jobRuns: new Counter({
      name: 'job_runs_total',
      help: 'Periodic job runs by job and outcome',
      labelNames: ['job', 'outcome'] as const,
      registers: [registry],
    }),
    jobDuration: new Histogram({
      name: 'job_duration_seconds',
      help: 'Periodic job duration',
      labelNames: ['job'] as const,
      registers: [registry],
    }),
    watchQueueDepth: (topic) => topics.add(topic),
  };
}

/** Request histogram by route pattern (never the raw URL: ids would explode the label set). */
export function registerRequestMetrics(app: FastifyInstance, metrics: Metrics): void {
  // prom-client hashes the label set on every observe; a child per (method, route, status) skips that.
  const children = new Map<string, ReturnType<Metrics['httpDuration']['labels']>>();
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const id = `${request.method} ${reply.statusCode} ${route}`;
    let child = children.get(id);
    if (!child) {
      child = metrics.httpDuration.labels({
        method: request.method,
        route,
        status: String(reply.statusCode),
      });
      children.set(id, child);
    }
    child.observe(reply.elapsedTime / 1000);
    done();
  });
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    reply.type(metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}
