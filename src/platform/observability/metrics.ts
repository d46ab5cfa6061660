import { createHash, timingSafeEqual } from 'node:crypto';
import type {
  FastifyInstance,
  onRequestHookHandler,
  onResponseHookHandler,
  preHandlerHookHandler,
} from 'fastify';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { PoolStats } from '../db/index.ts';
import { platformError } from '../errors.ts';

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
  /** Rows removed by the retention jobs (platform/jobs/retention.ts), by table. */
  retentionRemoved: Counter<'table'>;
  /** How far the oldest removable row is past its window after the last retention run. */
  retentionLag: Gauge<'table'>;
  /** Topics whose depth is read at scrape time. */
  watchQueueDepth(topic: string): void;
}

export function createMetrics(
  readDepth: (topic: string) => Promise<number>,
  poolStats: () => PoolStats,
  defaults = true,
): Metrics {
  const registry = new Registry();
  if (defaults) collectNodeDefaults(registry);
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
  // Totals kept by the pool (db/prepared.ts), copied at scrape time: no metric call per checkout.
  const poolCounter = (name: string, help: string, read: (stats: PoolStats) => number) =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(read(poolStats()));
      },
    });
  poolCounter('db_pool_acquires_total', 'Database connections handed out by the pool', (s) => s.acquired);
  poolCounter(
    'db_pool_wait_seconds_total',
    'Time callers waited for a pooled connection, in all (divide by db_pool_acquires_total for the mean)',
    (s) => s.waitSeconds,
  );
  poolCounter(
    'db_pool_timeouts_total',
    'Waits for a pooled connection that ran out (DATABASE_POOL_WAIT_MS): each request shed as a 503',
    (s) => s.timeouts,
  );
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
    retentionRemoved: new Counter({
      name: 'retention_rows_removed_total',
      help: 'Rows removed (or archived) by the retention jobs, by table',
      labelNames: ['table'] as const,
      registers: [registry],
    }),
    retentionLag: new Gauge({
      name: 'retention_lag_seconds',
      help: 'How far the oldest removable row is past its retention window after the last run',
      labelNames: ['table'] as const,
      registers: [registry],
    }),
    watchQueueDepth: (topic) => topics.add(topic),
  };
}

/**
 * Request histogram by route pattern (never the raw URL: ids would explode the label set).
 * Each route records through its own onResponse hook, which knows the route's method and
 * pattern from registration; there is no global hook, since every hook runs on every request.
 * Requests that match no route are recorded by the returned hook, which the not-found handler
 * runs (`registerProblemHandlers`): it listens for the end of those responses only.
 */
export function registerRequestMetrics(app: FastifyInstance, metrics: Metrics): preHandlerHookHandler {
  const histogram = metrics.httpDuration;
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const pattern = route.url;
    for (const method of methods) {
      // One labelled child per status this route answers, made on its first answer: observing
      // through it skips what `histogram.observe(labels, value)` redoes on every call (a closure,
      // the labels object, the exemplar check).
      const byStatus = new Map<number, { observe(seconds: number): void }>();
      const record: onResponseHookHandler = (_request, reply, done) => {
        const status = reply.statusCode;
        let series = byStatus.get(status);
        if (series === undefined) {
          series = histogram.labels({ method, route: pattern, status });
          byStatus.set(status, series);
        }
        series.observe(reply.elapsedTime / 1000);
        done();
      };
      route.onResponse = [...asArray(route.onResponse), record];
    }
  });
  return (request, reply, done) => {
    const { method } = request;
    reply.raw.once('finish', () =>
      histogram.observe({ method, route: 'unmatched', status: reply.statusCode }, reply.elapsedTime / 1000),
    );
    done();
  };
}

/**
 * `GET /metrics` (Prometheus text). With a token, only a scraper that sends
 * `Authorization: Bearer <token>` reads it: the two sides are compared as SHA-256 digests in
 * constant time, so neither the comparison's time nor its length says how much was right.
 */
export function registerMetricsEndpoint(app: FastifyInstance, registry: Registry, token?: string): void {
  const expected = token === undefined ? undefined : digest(`Bearer ${token}`);
  const onRequest: onRequestHookHandler = (request, _reply, done) => {
    if (expected === undefined || timingSafeEqual(digest(request.headers.authorization ?? ''), expected)) {
      return done();
    }
    done(
      platformError('unauthorized', {
        detail: 'The metrics need Authorization: Bearer <METRICS_TOKEN>',
        headers: { 'WWW-Authenticate': 'Bearer realm="metrics"' },
      }),
    );
  };
  app.get('/metrics', { schema: { hide: true }, onRequest }, async (_request, reply) => {
    reply.type(registry.contentType);
    return registry.metrics();
  });
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function asArray<T>(value: T | T[] | undefined): T[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/**
 * prom-client's default process and Node metrics, less the three gauges it names `_total`
 * (`nodejs_active_{handles,requests,resources}_total`): a `_total` suffix says counter, so
 * `promtool check metrics` refuses them and `rate()` over them means nothing. Their totals are
 * `sum(nodejs_active_handles)` and so on: the by-type gauges of the same defaults stay.
 */
function collectNodeDefaults(registry: Registry) {
  collectDefaultMetrics({ register: registry });
  for (const name of GAUGES_NAMED_TOTAL) registry.removeSingleMetric(name);
}

const GAUGES_NAMED_TOTAL = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

/**
 * A counter of one label whose values are known up front (outcomes), for hot paths: counted in
 * plain numbers and handed to prom-client when scraped. prom-client's inc() checks and hashes its
 * labels on every call, through a `labels()` child too; every value is exposed from the start,
 * at 0 until it happens.
 */
export function tallyCounter<V extends string>(
  registry: Registry,
  options: { name: string; help: string; label: string; values: readonly V[] },
): (value: V, count?: number) => void {
  const tally = new Map<V, number>(options.values.map((value) => [value, 0]));
  new Counter({
    name: options.name,
    help: options.help,
    labelNames: [options.label],
    registers: [registry],
    collect() {
      this.reset();
      for (const [value, count] of tally) this.inc({ [options.label]: value }, count);
    },
  });
  return (value, count = 1) => {
    tally.set(value, (tally.get(value) ?? 0) + count);
  };
}
