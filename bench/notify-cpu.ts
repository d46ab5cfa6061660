import autocannon from 'autocannon';
import pg from 'pg';
import {
  BENCH_SERVICES,
  createBenchDatabase,
  dropNatsNamespace,
  numberFlag,
  pidsOf,
  processCpuMs,
  startBenchApp,
  stopProcess,
} from './harness.ts';
import { createUsers, JSON_AS_SERVICE, notificationBody, notifyProcessEnv } from './notify-common.ts';

/**
 * `node bench/notify-cpu.ts [--requests=20000] [--connections=100] [--rounds=3] [--rate=0]`
 *
 * CPU time per accepted notification on PostgreSQL + Redis + NATS (the `notify-accept` setup:
 * ROLE=api, limits lifted): the API process, the database's backends, PostgreSQL's own
 * processes (WAL writer, checkpointer, autovacuum: whole server) and the NATS and Redis servers
 * (whole servers: anything else running on the machine counts too), from /proc, over a fixed
 * number of requests. Less sensitive to other load on the machine
 * than req/s. `--rate=N` holds the load at N requests per second in all (0: as fast as it goes),
 * so batch sizes do not move with the machine's speed. BENCH_KEEP_DB=1 keeps the database
 * afterwards (its URL is printed), to look at plans and rows. Linux only.
 */

const requests = numberFlag('requests', 20_000);
const connections = numberFlag('connections', 100);
const rounds = numberFlag('rounds', 3);
const rate = numberFlag('rate', 0);
const database = await createBenchDatabase(BENCH_SERVICES.postgres);
const name = new URL(database.url).pathname.slice(1);
const namespace = `notifycpu_${Date.now()}`;
const { child: app, base } = await startBenchApp(notifyProcessEnv('api', namespace, database.url), {
  profile: true,
});
const db = new pg.Client({ connectionString: database.url });
try {
  await createUsers(base);
  await db.connect();
  const pids = async (clients: boolean) =>
    (
      await db.query(
        `select pid from pg_stat_activity where pid <> pg_backend_pid() and ${
          clients ? `datname = $1` : `backend_type <> 'client backend' and $1::text is not null`
        }`,
        [name],
      )
    ).rows.map((row) => row.pid as number);
  const options = {
    url: `${base}/api/notifications`,
    connections,
    method: 'POST' as const,
    headers: JSON_AS_SERVICE,
    requests: [{ setupRequest: (request: object) => ({ ...request, body: notificationBody() }) }],
    ...(rate > 0 ? { overallRate: rate } : {}),
  };
  await autocannon({ ...options, amount: 5000 });
  for (let round = 1; round <= rounds; round++) {
    const groups = {
      api: [app.pid as number],
      postgres: await pids(true),
      'postgres aux': await pids(false),
      nats: pidsOf('nats-server'),
      redis: pidsOf('redis-server'),
    };
    const before = Object.values(groups).map((list) => new Map(list.map((pid) => [pid, processCpuMs(pid)])));
    const result = await autocannon({ ...options, amount: requests });
    // Backends that joined during the round count whole.
    groups.postgres = [...new Set([...groups.postgres, ...(await pids(true))])];
    const perAccept = Object.keys(groups).map((group, i) => {
      const pidsOfGroup = groups[group as keyof typeof groups];
      const ms = pidsOfGroup.reduce((sum, pid) => sum + processCpuMs(pid) - (before[i].get(pid) ?? 0), 0);
      return [group, ms / result.requests.total] as const;
    });
    const total = perAccept.reduce((sum, [, ms]) => sum + ms, 0);
    console.log(
      `#${round}: ${result.requests.average.toFixed(0)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, ` +
        `non-2xx ${result.non2xx}; CPU ms per accept: ` +
        `${perAccept.map(([group, ms]) => `${group} ${ms.toFixed(3)}`).join(', ')}; total ${total.toFixed(3)}`,
    );
  }
} finally {
  await db.end().catch(() => {});
  await stopProcess(app);
  await dropNatsNamespace(namespace);
  if (process.env.BENCH_KEEP_DB) console.log(`kept ${database.url}`);
  else await database.drop();
}
