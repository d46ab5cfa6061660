import autocannon from 'autocannon';
import pg from 'pg';
import {
  BENCH_SERVICES,
  createBenchDatabase,
  freePort,
  numberFlag,
  processCpuMs,
  startProcess,
  stopProcess,
} from './harness.ts';
import { createUsers, NOTIFY_BENCH_ENV, notificationBody } from './notify-common.ts';

/**
 * `node bench/notify-cpu.ts [--requests=20000] [--connections=100] [--rounds=3]`
 *
 * CPU time per accepted notification on PostgreSQL + Redis + NATS (the `notify-accept` setup:
 * ROLE=api, limits lifted): the API process and the database's backends, from /proc, over a
 * fixed number of requests. Less sensitive to other load on the machine than req/s. Linux only.
 */

const requests = numberFlag('requests', 20_000);
const connections = numberFlag('connections', 100);
const rounds = numberFlag('rounds', 3);
const database = await createBenchDatabase(BENCH_SERVICES.postgres);
const name = new URL(database.url).pathname.slice(1);
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const app = await startProcess(
  ['src/main.ts'],
  {
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: base,
    ROLE: 'api',
    SERVICES: 'notify',
    LOG_LEVEL: 'warn',
    NAMESPACE: `notifycpu_${Date.now()}`,
    DATABASE_URL: database.url,
    REDIS_URL: BENCH_SERVICES.redis,
    NATS_URL: BENCH_SERVICES.nats,
    ...NOTIFY_BENCH_ENV,
    ...(process.env.BENCH_PROFILE_DIR
      ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}` }
      : {}),
  },
  `${base}/health/live`,
);
const db = new pg.Client({ connectionString: database.url });
try {
  await createUsers(base);
  await db.connect();
  const backends = async () =>
    (
      await db.query('select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [
        name,
      ])
    ).rows.map((row) => row.pid as number);
  const options = {
    url: `${base}/api/notifications`,
    connections,
    method: 'POST' as const,
    headers: { 'content-type': 'application/json' },
    requests: [{ setupRequest: (request: object) => ({ ...request, body: notificationBody() }) }],
  };
  await autocannon({ ...options, amount: 5000 });
  for (let round = 1; round <= rounds; round++) {
    const before = await backends();
    const appBefore = processCpuMs(app.pid as number);
    const pgBefore = new Map(before.map((pid) => [pid, processCpuMs(pid)]));
    const result = await autocannon({ ...options, amount: requests });
    const appMs = processCpuMs(app.pid as number) - appBefore;
    let pgMs = 0;
    for (const pid of await backends()) pgMs += processCpuMs(pid) - (pgBefore.get(pid) ?? 0);
    console.log(
      `#${round}: ${result.requests.average.toFixed(0)} req/s, non-2xx ${result.non2xx}; ` +
        `CPU ms per accept: api ${(appMs / result.requests.total).toFixed(3)}, postgres ${(pgMs / result.requests.total).toFixed(3)}`,
    );
  }
} finally {
  await db.end().catch(() => {});
  await stopProcess(app);
  await database.drop();
}
