import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import pg from 'pg';
import {
  BENCH_SERVICES,
  createBenchDatabase,
  dropNatsNamespace,
  machineCpuMs,
  pidsOf,
  processCpuMs,
  startBenchApp,
  stopProcess,
} from './harness.ts';
import { AS_SERVICE, createUsers, notificationBody, notifyProcessEnv } from './notify-common.ts';
import { postAll } from './post-all.ts';

/**
 * The system side of notify-deliver (bench/notify-deliver.ts): 1 API process, 2 workers and a
 * scheduler on a fresh PostgreSQL database with the local Redis and NATS, started and warmed up
 * once, then timed round by round.
 */

/**
 * Waits until the two workers share the e-mail topic's partitions. The second worker to start
 * gets its share only after the first one's next lease tick (every few seconds) lets go of it;
 * a hand-over inside the timed window restarted the partitions' consumers mid-run. Returns the ms
 * waited (at most 20 s; then the run goes on with a warning).
 */
async function partitionsSettled(namespace: string, partitions = 16): Promise<number> {
  const started = performance.now();
  const nc = await connect({ servers: BENCH_SERVICES.nats, name: `${namespace}-bench-leases` });
  try {
    const kv = await new Kvm(nc).open(`${namespace}_queue_leases`);
    while (performance.now() - started < 20_000) {
      const owners = await Promise.all(
        Array.from({ length: partitions }, async (_, p) =>
          (await kv.get(`notify-email.p.notifications_email.${p}`))?.string(),
        ),
      );
      if (owners.every(Boolean) && new Set(owners).size === 2) return performance.now() - started;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    console.warn('the workers did not share the partitions within 20 s: timing anyway');
    return performance.now() - started;
  } finally {
    await nc.close();
  }
}

/** The PostgreSQL backends serving the bench database (the pools keep their connections). */
async function backendPids(db: pg.Client, database: string): Promise<number[]> {
  const { rows } = await db.query(
    'select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
    [database],
  );
  return rows.map((row) => row.pid as number);
}

/**
 * POSTs `count` notifications over `concurrency` connections; every answer must be `202` with the
 * channel `queued`. Answers counted by status code and first channel status.
 */
async function accept(api: string, count: number, concurrency: number): Promise<Map<string, number>> {
  const statuses = new Map<string, number>();
  await postAll({
    url: `${api}/api/notifications`,
    headers: AS_SERVICE,
    connections: concurrency,
    amount: count,
    body: () => notificationBody(),
    check(code, text) {
      const body = JSON.parse(text) as { status?: string; channels?: { status: string }[] };
      const status = `${code} ${body.channels?.[0]?.status ?? body.status}`;
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      return status === '202 queued';
    },
  });
  return statuses;
}

/**
 * The least notification id of a notification accepted at or after `at` (ms since the epoch):
 * ids are UUIDv7s (src/platform/ids.ts), the accept time in their first 48 bits, and PostgreSQL
 * orders uuids byte by byte. The API's clock is this machine's.
 */
function firstIdAt(at: number): string {
  const hex = at.toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8)}-7000-8000-000000000000`;
}

/**
 * Polls until the `count` deliveries of notifications accepted since `since` (ms since the epoch)
 * are `sent` or `delivered` (at most 5 minutes). The count runs in the database of the system
 * under test and on the same cores, so it reads only this round's rows, by the deliveries' key
 * (the notification id, a UUIDv7): counting the whole table (a scan of every delivery, each with
 * its earlier row version, as nothing vacuums during a run) took ~16 ms at 35 000 deliveries and
 * grew round by round. And it waits half the time the rest should take at the rate seen since
 * the last poll (20–500 ms): a handful of polls per round, the last ones close together.
 */
async function deliveredAll(db: pg.Client, count: number, since: number): Promise<void> {
  const deadline = Date.now() + 300_000;
  let last = { at: performance.now(), n: 0 };
  while (true) {
    const { rows } = await db.query(
      `select count(*)::int as n from notification_deliveries
       where notification_id >= $1::uuid and status in ('sent', 'delivered')`,
      [firstIdAt(since)],
    );
    const n: number = rows[0].n;
    if (n >= count) return;
    if (Date.now() > deadline) {
      const { rows: stuck } = await db.query(
        `select status, published_at is not null as published, attempts, count(*)::int as n
         from notification_deliveries where status not in ('sent', 'delivered') group by 1, 2, 3`,
      );
      throw new Error(`only ${n} of ${count} sent after 5 min; the others: ${JSON.stringify(stuck)}`);
    }
    const now = performance.now();
    const perMs = (n - last.n) / Math.max(1, now - last.at);
    last = { at: now, n };
    const wait = perMs > 0 ? (count - n) / perMs / 2 : 50;
    await new Promise((resolve) => setTimeout(resolve, Math.min(500, Math.max(20, wait))));
  }
}

const ROLES = ['api', 'worker 1', 'worker 2', 'scheduler'];

export interface Round {
  seconds: number;
  acceptSeconds: number;
  perSecond: number;
  /** CPU ms per notification by process (Linux): where the time goes, even on a shared machine. */
  cpuPerMessageMs: Record<string, number>;
  /** With `deliverAfterAccept`: the same for the delivery phase alone. */
  deliveryCpuPerMessageMs?: Record<string, number>;
  transactionsPerMessage: number;
  /** How busy the machine's cores were in the timed window (steal time counts as busy). */
  busyShare: number;
}

/** `cwd`: another checkout's code for the API and workers (A/B against an earlier commit). */
export async function startSystem(options: { warmup: number; concurrency: number; cwd?: string }) {
  const database = await createBenchDatabase(BENCH_SERVICES.postgres);
  const namespace = `notifydeliver_${Date.now()}`;
  const env = (role: string) => notifyProcessEnv(role, namespace, database.url);
  const processes: Awaited<ReturnType<typeof startBenchApp>>['child'][] = [];
  const db = new pg.Client({ connectionString: database.url });
  const databaseName = new URL(database.url).pathname.slice(1);
  let accepted = 0;

  async function close() {
    await db.end().catch(() => {});
    for (const child of processes.reverse()) await stopProcess(child);
    await dropNatsNamespace(namespace);
    if (process.env.BENCH_KEEP_DB) console.log(`kept ${database.url}`);
    else await database.drop();
  }

  /** One timed round of `messages` notifications: from the first accept until all are delivered. */
  async function round(messages: number, deliverAfterAccept: boolean): Promise<Round> {
    const backends = await backendPids(db, databaseName);
    const commits = async () =>
      Number(
        (await db.query('select xact_commit from pg_stat_database where datname = $1', [databaseName]))
          .rows[0].xact_commit,
      );
    const commitsBefore = await commits();
    // NATS and Redis are shared with anything else running on the machine: counted whole.
    const servers = { nats: pidsOf('nats-server'), redis: pidsOf('redis-server') };
    const serversBefore = { nats: servers.nats.map(processCpuMs), redis: servers.redis.map(processCpuMs) };
    const driverBefore = process.cpuUsage();
    const machineBefore = machineCpuMs();
    const cpu = () => [
      ...processes.map((child) => processCpuMs(child.pid as number)),
      ...backends.map(processCpuMs),
    ];
    const cpuBefore = cpu();
    // --deliver-after-accept: the workers are stopped (SIGSTOP) while the N are accepted, then
    // continued; the CPU of the delivery phase alone is printed too (worker changes compare
    // without the API's work in the same window). The main figures keep their meaning.
    const workers = processes.filter((_, i) => ROLES[i].startsWith('worker'));
    if (deliverAfterAccept) for (const worker of workers) worker.kill('SIGSTOP');
    const started = performance.now();
    const startedAt = Date.now();
    const statuses = await accept(api, messages, options.concurrency);
    const acceptedAt = performance.now();
    const cpuAccepted = cpu();
    if (deliverAfterAccept) for (const worker of workers) worker.kill('SIGCONT');
    accepted += messages;
    await deliveredAll(db, messages, startedAt);
    const seconds = (performance.now() - started) / 1000;
    const cpuAfter = cpu();
    const spent = cpuAfter.map((after, i) => after - cpuBefore[i]);
    const delivering = cpuAfter.map((after, i) => after - cpuAccepted[i]);
    const transactions = (await commits()) - commitsBefore;
    const serverMs = (name: 'nats' | 'redis') =>
      servers[name].reduce((sum, pid, i) => sum + processCpuMs(pid) - serversBefore[name][i], 0);
    const driver = process.cpuUsage(driverBefore);
    const machine = machineCpuMs();
    const busy = machine.busy - machineBefore.busy;
    // Backends connected during the round count whole (one that came and went is missed).
    const joined = (await backendPids(db, databaseName)).filter((pid) => !backends.includes(pid));
    spent.push(...joined.map(processCpuMs));
    delivering.push(...joined.map(processCpuMs));
    if ((statuses.get('202 queued') ?? 0) !== messages)
      throw new Error(`answers: ${JSON.stringify([...statuses])}`);
    const perMessage = (ms: number[]) => ({
      ...Object.fromEntries(ROLES.map((role, i) => [role, ms[i] / messages])),
      [`postgres (${backends.length + joined.length} backends)`]:
        ms.slice(ROLES.length).reduce((a, b) => a + b, 0) / messages,
    });
    return {
      seconds,
      acceptSeconds: (acceptedAt - started) / 1000,
      perSecond: messages / seconds,
      cpuPerMessageMs: {
        ...perMessage(spent),
        'nats (whole server)': serverMs('nats') / messages,
        'redis (whole server)': serverMs('redis') / messages,
        'this driver': (driver.user + driver.system) / 1000 / messages,
      },
      deliveryCpuPerMessageMs: deliverAfterAccept ? perMessage(delivering) : undefined,
      transactionsPerMessage: transactions / messages,
      busyShare: busy / (busy + machine.idle - machineBefore.idle || 1),
    };
  }

  /** Every notification of the run, the warm-up's included: stored once, in the inbox once. */
  async function audit() {
    const { rows: inbox } = await db.query(
      `select count(*)::int as messages, count(distinct notification_id)::int as notifications from notify_inbox`,
    );
    const { rows: stored } = await db.query(
      `select count(*)::int as notifications, count(distinct client_id)::int as client_ids from notifications`,
    );
    const { rows: byStatus } = await db.query(
      `select status, count(*)::int as n from notification_deliveries group by status order by status`,
    );
    return {
      expected: accepted,
      inbox: inbox[0] as { messages: number; notifications: number },
      stored: stored[0] as { notifications: number; client_ids: number },
      byStatus: byStatus as { status: string; n: number }[],
    };
  }

  let api = '';
  try {
    // The first process migrates; the others start once it is up.
    for (const role of ['api', 'worker', 'worker', 'scheduler']) {
      // BENCH_PROFILE_DIR=/tmp/prof: the API and each worker write a CPU profile there when they stop.
      const { child, base } = await startBenchApp(env(role), {
        profile: role !== 'scheduler',
        cwd: options.cwd,
      });
      processes.push(child);
      if (role === 'api') api = base;
    }
    await createUsers(api);
    const settledMs = await partitionsSettled(namespace);
    await db.connect();
    // This connection only measures: deliveredAll must read its round's rows by key whatever the
    // statistics say (there are none before the ANALYZE below; without them the planner scanned
    // the whole table for that range of keys).
    await db.query('set enable_seqscan = off');
    // Warm-up, untimed: the processes' code is compiled by V8 and the connection pools are full,
    // as in a service that has been running (the other scenarios warm up the same way).
    const warmupAt = Date.now();
    await accept(api, options.warmup, options.concurrency);
    accepted = options.warmup;
    await deliveredAll(db, accepted, warmupAt);
    // Statistics, as autovacuum would have gathered them by now (harness.ts): without them, a
    // pooled connection that prepared the workers' batch update while the tables were nearly
    // empty kept a plan that scans notification_deliveries, and the rounds it served cost
    // PostgreSQL 2-3 times as much.
    await database.analyze();
    return { settledMs, round, audit, close };
  } catch (error) {
    await close();
    throw error;
  }
}
