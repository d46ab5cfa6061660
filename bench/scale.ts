import { mkdirSync, writeFileSync } from 'node:fs';
import pg from 'pg';
import { buildApp } from '../src/app.ts';
import { createAdapters } from '../src/platform/adapters.ts';
import { loadConfig } from '../src/platform/config.ts';
import {
  BENCH_SERVICES,
  createBenchDatabase,
  dropNatsNamespace,
  numberFlag,
  startBenchApp,
  stopProcess,
  textFlag,
} from './harness.ts';
import { runMixed } from './mixed-load.ts';
import { type OperationSummary, summarise } from './mixed-report.ts';
import { appEnv, databaseUrl, lotFile, prepareFixtures } from './scale-fixtures.ts';
import { HOT_PATHS } from './scale-paths.ts';
import { scaleChart, scaleTable } from './scale-report.ts';

/**
 * `npm run bench -- scale [--databases=scale_0_0001,scale_0_001] [--duration=5] [--connections=16]`
 *
 * Every hot path on an empty database and on each seeded one (`npm run seed:scale`, databases on
 * the local PostgreSQL named by `--databases`): p50, p99 and throughput per path and size, the
 * cleanup and retention jobs' run time, a table of p99 against the empty database's, and
 * `bench/results/scale.json` with the chart `bench/results/scale.svg` (p99 against rows).
 * The app runs in its own process (api role: no workers or scheduler in the way); the jobs run
 * in this one, on the same database, one tick each.
 */
export interface SizeResult {
  label: string;
  rows: number;
  bytes: number;
  operations: OperationSummary[];
  jobs: { job: string; seconds: number }[];
}

const JOB = /cleanup|retention/;
const durationMs = numberFlag('duration', 5) * 1000;
const connections = numberFlag('connections', 16);
const seeded = (textFlag('databases') ?? '').split(',').filter(Boolean);

async function measureSize(label: string, url: string): Promise<SizeResult> {
  const namespace = `scale_${Date.now()}`;
  const env = appEnv(url, namespace, lotFile(label === 'empty' ? undefined : label));
  const { child, base } = await startBenchApp({ ...env, ROLE: 'api' });
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  try {
    const fixtures = await prepareFixtures(base, pool);
    // What autovacuum would have done by then (this machine runs without it): statistics, and the
    // visibility map and hint bits of a fresh load or of the last run's retention deletes; then a
    // checkpoint, so that flushing what the vacuum dirtied is not part of the measurement.
    await pool.query('vacuum (analyze)');
    await pool.query('checkpoint');
    const operations: OperationSummary[] = [];
    for (const path of HOT_PATHS) {
      const recorder = await runMixed({
        bases: [base],
        workloads: [
          { name: path.name, weight: 1, step: (send, context) => path.step(send, context, fixtures) },
        ],
        connections,
        durationMs,
        accept: (_, status) => status < 400 || status === 409,
      });
      operations.push(...summarise(recorder, durationMs));
    }
    const jobs = await timeJobs(env);
    const { rows, bytes } = await databaseSize(pool);
    return { label, rows, bytes, operations, jobs };
  } finally {
    await pool.end();
    await stopProcess(child);
    await dropNatsNamespace(namespace).catch(() => {});
  }
}

/** One tick of each cleanup and retention job, in this process, on the same database. */
async function timeJobs(env: Record<string, string>): Promise<SizeResult['jobs']> {
  const config = loadConfig([], { ...env, ROLE: 'scheduler', REDIS_URL: '', NATS_URL: '' });
  const adapters = await createAdapters(config);
  const app = await buildApp(config, adapters, { logger: false, routes: false });
  try {
    const jobs: SizeResult['jobs'] = [];
    for (const job of app.platform.scheduler.names().filter((name) => JOB.test(name))) {
      const started = performance.now();
      await app.platform.scheduler.runTick(job, new Date(Math.floor(Date.now() / 1000) * 1000));
      jobs.push({ job, seconds: (performance.now() - started) / 1000 });
    }
    return jobs;
  } finally {
    await app.close();
    await adapters.close();
  }
}

async function databaseSize(pool: pg.Pool): Promise<{ rows: number; bytes: number }> {
  const { rows } = await pool.query<{ rows: string; bytes: string }>(
    `select coalesce(sum(greatest(reltuples, 0)), 0)::bigint as rows,
            coalesce(sum(pg_total_relation_size(oid)), 0)::bigint as bytes
     from pg_class where relkind = 'r' and relnamespace = 'public'::regnamespace`,
  );
  return { rows: Number(rows[0].rows), bytes: Number(rows[0].bytes) };
}

const results: SizeResult[] = [];
const empty = await createBenchDatabase(BENCH_SERVICES.postgres);
try {
  console.log(
    `empty database: ${HOT_PATHS.length} hot paths, ${connections} connections, ${durationMs / 1000} s each`,
  );
  results.push(await measureSize('empty', empty.url));
} finally {
  await empty.drop();
}
for (const name of seeded) {
  console.log(
    `${name}: ${HOT_PATHS.length} hot paths, ${connections} connections, ${durationMs / 1000} s each`,
  );
  results.push(await measureSize(name, databaseUrl(name)));
}
console.log(scaleTable(results));
mkdirSync('bench/results', { recursive: true });
writeFileSync(
  'bench/results/scale.json',
  `${JSON.stringify({ at: new Date().toISOString(), connections, durationMs, results }, null, 2)}\n`,
);
writeFileSync(
  'bench/results/scale.svg',
  scaleChart(results, `p99 against database rows, ${new Date().toISOString().slice(0, 10)}`),
);
console.log('wrote bench/results/scale.json and bench/results/scale.svg');
