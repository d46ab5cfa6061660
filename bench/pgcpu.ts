import autocannon from 'autocannon';
import pg from 'pg';
import {
  BENCH_SERVICES,
  createBenchDatabase,
  pinSelf,
  processCpuMs,
  startBenchApp,
  stopProcess,
} from './harness.ts';
import type { Scenario } from './run.ts';

/**
 * `node bench/pgcpu.ts <scenario> [requests=20000] [rounds=3] [connections=100]`
 *
 * Like cpu.ts, but on the local PostgreSQL: per request, the CPU time (user + system,
 * /proc/<pid>/stat) of the app process and of the PostgreSQL backends serving its database
 * (found in pg_stat_activity), and the commits per request (pg_stat_database). PostgreSQL shares
 * the two cores with the app and the load generator, so its CPU per request limits the scenario
 * as much as the app's own. Linux only; `BENCH_APP_ENV='{"NAME":"value"}'` adds app settings.
 */
pinSelf();
const name = process.argv[2] ?? 'paste-create';
const amount = Number(process.argv[3] ?? 20_000);
const rounds = Number(process.argv[4] ?? 3);
const connections = Number(process.argv[5] ?? 100);
const scenario: Scenario = (await import(`./scenarios/${name}.ts`)).default;

const cpuMicros = (pid: number) => processCpuMs(pid) * 1000;

const database = await createBenchDatabase(BENCH_SERVICES.postgres);
const databaseName = new URL(database.url).pathname.slice(1);
const { child: app, base } = await startBenchApp({
  SERVICES: scenario.services,
  NAMESPACE: `pgcpu_${Date.now()}`,
  DATABASE_URL: database.url,
  ...scenario.env,
  ...JSON.parse(process.env.BENCH_APP_ENV ?? '{}'),
});
const admin = new pg.Client({ connectionString: BENCH_SERVICES.postgres });
await admin.connect();
const backends = async () =>
  (await admin.query('select pid from pg_stat_activity where datname = $1', [databaseName])).rows.map((row) =>
    Number(row.pid),
  );
const commits = async () =>
  Number(
    (await admin.query('select xact_commit from pg_stat_database where datname = $1', [databaseName])).rows[0]
      .xact_commit,
  );
try {
  const { path = '/', ...options } = await scenario.prepare(`${base}`);
  const url = `${base}${path}`;
  await autocannon({ url, ...options, connections, amount: Math.min(5_000, amount) });
  for (let round = 1; round <= rounds; round++) {
    const before = new Map((await backends()).map((pid) => [pid, cpuMicros(pid)]));
    const appBefore = cpuMicros(app.pid as number);
    const commitsBefore = await commits();
    const result = await autocannon({ url, ...options, connections, amount });
    const n = result.requests.total;
    let postgres = 0;
    for (const pid of new Set([...before.keys(), ...(await backends())]))
      postgres += cpuMicros(pid) - (before.get(pid) ?? 0);
    console.log(
      `${name} #${round}: ${result.requests.average.toFixed(0)} req/s, non-2xx ${result.non2xx}; µs CPU/request: ` +
        `app ${((cpuMicros(app.pid as number) - appBefore) / n).toFixed(1)}, PostgreSQL backends ` +
        `${(postgres / n).toFixed(1)}; commits/request ${((await commits()) - commitsBefore) / n}`,
    );
  }
} finally {
  await admin.end();
  await stopProcess(app);
  await database.drop();
}
