import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { AckPolicy, jetstream, jetstreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import pg from 'pg';
import {
  BENCH_SERVICES,
  createBenchDatabase,
  dropNatsNamespace,
  machineCpuMs,
  numberFlag,
  pidsOf,
  processCpuMs,
  startBenchApp,
  stopProcess,
} from './harness.ts';
import { createUsers, NOTIFY_BENCH_ENV, notificationBody, USERS, userId } from './notify-common.ts';
import { postAll } from './post-all.ts';

/**
 * `npm run bench -- notify-deliver [--messages=5000] [--warmup=2000] [--concurrency=64] [--deliver-after-accept]`
 *
 * End-to-end delivery with two worker processes against a bare JetStream publish-and-consume of
 * the same number of messages, in the same run:
 *
 * - baseline: a fresh work-queue stream in its own namespace; `concurrency` publishers send the
 *   N messages (the queue's envelope `{key, payload: {notificationId, channel}}`, each with a
 *   `msgID`) while one pull consumer takes and acks them; rate = N / (first publish → last ack).
 *   A first, untimed run of `warmup` messages warms this process's code up.
 * - system: 1 API process (ROLE=api), 2 workers (ROLE=worker) and a scheduler on a fresh
 *   PostgreSQL database with the local Redis and NATS. Once the two workers share the e-mail
 *   topic's partitions (a worker that starts second gets its share a lease tick later, which used
 *   to fall inside the timed window) and `warmup` notifications went through untimed (so V8 has
 *   compiled the processes' code and the pools are full, as in a service that has been running),
 *   `concurrency` clients POST the N notifications (`booking_reminder` e-mails to 1,000 users) as
 *   fast as they are answered; the clock runs from the first accept until every delivery is
 *   `sent` (or already `delivered`) in PostgreSQL, i.e. accepted → rendered → stored in the dev
 *   inbox → status recorded. The clients (bench/post-all.ts: `concurrency` keep-alive
 *   connections, one request at a time on each) are in this process: a request's body is built
 *   when it is sent (a random user and a fresh client `id`, so no request is a replay) and every
 *   answer must be `202` with the channel `queued`, or the run stops. The driver shares the two
 *   cores with the system it measures, so it does as little as a client can: node:http cost ~0.2
 *   ms of CPU per request, autocannon ~0.03 ms on a fast machine and ~0.2 ms on a slow one
 *   (bench/README.md).
 *
 * Then PostgreSQL must hold a notification per request (warm-up included) with distinct client
 * ids, and the dev inbox exactly one message per notification. With
 * BENCH_PROFILE_DIR set, the API and each worker write a CPU profile (`--cpu-prof`) there.
 * BENCH_KEEP_DB=1 keeps the database afterwards (its URL is printed), to look at plans and rows.
 */
const TARGET = 0.3;

async function pool<T>(count: number, concurrency: number, work: (index: number) => Promise<T>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

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

async function bareJetStream(messages: number, concurrency: number) {
  const ns = `benchnd_${Date.now()}`;
  const nc = await connect({ servers: BENCH_SERVICES.nats, name: `${ns}-bench` });
  const jsm = await jetstreamManager(nc);
  const js = jetstream(nc);
  const stream = `${ns}_Q`.toUpperCase();
  await jsm.streams.add({
    name: stream,
    subjects: [`${ns}.q.>`],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    duplicate_window: 24 * 3600 * 1e9,
  });
  await jsm.consumers.add(stream, { durable_name: 'bench', ack_policy: AckPolicy.Explicit });
  try {
    const consumer = await js.consumers.get(stream, 'bench');
    let acked = 0;
    const nats = pidsOf('nats-server');
    const natsBefore = nats.map(processCpuMs);
    const clientBefore = process.cpuUsage();
    const started = performance.now();
    const consumed = (async () => {
      const iterator = await consumer.consume({ max_messages: 256 });
      for await (const message of iterator) {
        const envelope = message.json<{ key: string; payload: { notificationId: string } }>();
        if (!envelope.payload.notificationId) throw new Error('bad message');
        message.ack();
        if (++acked === messages) break;
      }
    })();
    await pool(messages, concurrency, async (i) => {
      const notificationId = randomUUID();
      await js.publish(
        `${ns}.q.notifications.email.${i % 16}`,
        JSON.stringify({ key: userId(i % USERS), payload: { notificationId, channel: 'email' } }),
        { msgID: `${notificationId}:email` },
      );
    });
    await consumed;
    const seconds = (performance.now() - started) / 1000;
    const client = process.cpuUsage(clientBefore);
    // What one message costs the machine in the baseline: the NATS server and this client.
    const cpuPerMessageMs = {
      nats: nats.reduce((sum, pid, i) => sum + processCpuMs(pid) - natsBefore[i], 0) / messages,
      client: (client.user + client.system) / 1000 / messages,
    };
    return { seconds, perSecond: messages / seconds, cpuPerMessageMs };
  } finally {
    await jsm.streams.delete(stream).catch(() => {});
    await nc.close();
  }
}

/**
 * POSTs `count` notifications over `concurrency` connections; every answer must be `202` with the
 * channel `queued`. Answers counted by status code and first channel status.
 */
async function accept(api: string, count: number, concurrency: number): Promise<Map<string, number>> {
  const statuses = new Map<string, number>();
  await postAll({
    url: `${api}/api/notifications`,
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
 * Polls until `count` deliveries are `sent` or `delivered` (at most 5 minutes). The count is a
 * scan of every delivery, in the database of the system under test and on the same cores: every
 * 50 ms it cost ~3 % of the machine. So it waits half the time the rest should take at the rate
 * seen since the last poll (20–500 ms): a handful of polls per run, the last ones close together.
 */
async function deliveredAll(db: pg.Client, count: number): Promise<void> {
  const deadline = Date.now() + 300_000;
  let last = { at: performance.now(), n: 0 };
  while (true) {
    const { rows } = await db.query(
      `select count(*)::int as n from notification_deliveries where status in ('sent', 'delivered')`,
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

async function system(messages: number, concurrency: number, deliverAfterAccept: boolean, warmup: number) {
  const database = await createBenchDatabase(BENCH_SERVICES.postgres);
  const namespace = `notifydeliver_${Date.now()}`;
  const env = (role: string) => ({
    ROLE: role,
    SERVICES: 'notify',
    NAMESPACE: namespace,
    DATABASE_URL: database.url,
    REDIS_URL: BENCH_SERVICES.redis,
    NATS_URL: BENCH_SERVICES.nats,
    ...NOTIFY_BENCH_ENV,
  });
  const processes = [];
  const db = new pg.Client({ connectionString: database.url });
  try {
    let api = '';
    // The first process migrates; the others start once it is up.
    for (const role of ['api', 'worker', 'worker', 'scheduler']) {
      // BENCH_PROFILE_DIR=/tmp/prof: the API and each worker write a CPU profile there when they stop.
      const { child, base } = await startBenchApp(env(role), { profile: role !== 'scheduler' });
      processes.push(child);
      if (role === 'api') api = base;
    }
    await createUsers(api);
    const settled = await partitionsSettled(namespace);
    await db.connect();
    // Warm-up, untimed: the processes' code is compiled by V8 and the connection pools are full,
    // as in a service that has been running (the other scenarios warm up the same way).
    await accept(api, warmup, concurrency);
    await deliveredAll(db, warmup);
    // CPU per notification by process (Linux): the figure that says where the time goes, even on
    // a machine shared with other runs.
    const roles = ['api', 'worker 1', 'worker 2', 'scheduler'];
    const databaseName = new URL(database.url).pathname.slice(1);
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
    const cpuBefore = [
      ...processes.map((child) => processCpuMs(child.pid as number)),
      ...backends.map(processCpuMs),
    ];
    // --deliver-after-accept: the workers are stopped (SIGSTOP) while the N are accepted, then
    // continued; the CPU of the delivery phase alone is printed too (worker changes compare
    // without the API's work in the same window). The main figures keep their meaning.
    const workers = processes.filter((_, i) => roles[i].startsWith('worker'));
    if (deliverAfterAccept) for (const worker of workers) worker.kill('SIGSTOP');
    const started = performance.now();
    const statuses = await accept(api, messages, concurrency);
    const acceptedAt = performance.now();
    const cpuAccepted = [
      ...processes.map((child) => processCpuMs(child.pid as number)),
      ...backends.map(processCpuMs),
    ];
    if (deliverAfterAccept) for (const worker of workers) worker.kill('SIGCONT');
    await deliveredAll(db, warmup + messages);
    const seconds = (performance.now() - started) / 1000;
    const cpuAfter = [
      ...processes.map((child) => processCpuMs(child.pid as number)),
      ...backends.map(processCpuMs),
    ];
    const spent = cpuAfter.map((after, i) => after - cpuBefore[i]);
    const delivering = cpuAfter.map((after, i) => after - cpuAccepted[i]);
    const transactions = (await commits()) - commitsBefore;
    const serverMs = (name: 'nats' | 'redis') =>
      servers[name].reduce((sum, pid, i) => sum + processCpuMs(pid) - serversBefore[name][i], 0);
    const natsMs = serverMs('nats');
    const redisMs = serverMs('redis');
    const driver = process.cpuUsage(driverBefore);
    const machine = machineCpuMs();
    const busyShare =
      (machine.busy - machineBefore.busy) /
      (machine.busy - machineBefore.busy + machine.idle - machineBefore.idle || 1);
    // Backends connected during the run count whole (one that came and went is missed).
    const joined = (await backendPids(db, databaseName)).filter((pid) => !backends.includes(pid));
    spent.push(...joined.map(processCpuMs));
    delivering.push(...joined.map(processCpuMs));
    const queued = statuses.get('202 queued') ?? 0;
    if (queued !== messages) throw new Error(`answers: ${JSON.stringify([...statuses])}`);
    const perMessage = (ms: number[]) => ({
      ...Object.fromEntries(roles.map((role, i) => [role, ms[i] / messages])),
      [`postgres (${backends.length + joined.length} backends)`]:
        ms.slice(roles.length).reduce((a, b) => a + b, 0) / messages,
    });
    const cpuPerMessageMs = {
      ...perMessage(spent),
      'nats (whole server)': natsMs / messages,
      'redis (whole server)': redisMs / messages,
      'this driver': (driver.user + driver.system) / 1000 / messages,
    };
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
      settledMs: settled,
      seconds,
      acceptSeconds: (acceptedAt - started) / 1000,
      perSecond: messages / seconds,
      cpuPerMessageMs,
      deliveryCpuPerMessageMs: deliverAfterAccept ? perMessage(delivering) : undefined,
      transactionsPerMessage: transactions / messages,
      busyShare,
      inbox: inbox[0] as { messages: number; notifications: number },
      stored: stored[0] as { notifications: number; client_ids: number },
      byStatus: byStatus as { status: string; n: number }[],
    };
  } finally {
    await db.end().catch(() => {});
    for (const child of processes.reverse()) await stopProcess(child);
    await dropNatsNamespace(namespace);
    if (process.env.BENCH_KEEP_DB) console.log(`kept ${database.url}`);
    else await database.drop();
  }
}

async function main() {
  const messages = numberFlag('messages', 5000);
  const warmup = numberFlag('warmup', 2000);
  const concurrency = numberFlag('concurrency', 64);
  const deliverAfterAccept = process.argv.includes('--deliver-after-accept');
  console.log(
    `notify-deliver: ${messages} messages, ${concurrency} concurrent senders, ${cpus().length} cores; ` +
      `baseline: bare JetStream publish → consume → ack`,
  );
  // The baseline warms up too (its own run of `warmup` messages, untimed).
  if (warmup > 0) await bareJetStream(warmup, concurrency);
  const baseline = await bareJetStream(messages, concurrency);
  console.log(
    `baseline: ${messages} in ${baseline.seconds.toFixed(2)} s = ${baseline.perSecond.toFixed(0)} msg/s; ` +
      `CPU ms per message: nats ${baseline.cpuPerMessageMs.nats.toFixed(3)}, client ${baseline.cpuPerMessageMs.client.toFixed(3)}`,
  );
  console.log('system: 1 API + 2 workers + 1 scheduler on PostgreSQL + Redis + NATS…');
  const result = await system(messages, concurrency, deliverAfterAccept, warmup);
  console.log(`(waited ${result.settledMs.toFixed(0)} ms for the workers to share the partitions)`);
  console.log(
    `system: ${messages} accepted in ${result.acceptSeconds.toFixed(2)} s, all sent after ${result.seconds.toFixed(2)} s ` +
      `= ${result.perSecond.toFixed(0)} deliveries/s`,
  );
  console.log(
    `CPU ms per notification: ${Object.entries(result.cpuPerMessageMs)
      .map(([role, ms]) => `${role} ${ms.toFixed(3)}`)
      .join(', ')}; PostgreSQL transactions per notification ${result.transactionsPerMessage.toFixed(2)}; ` +
      `the machine's cores were busy ${(100 * result.busyShare).toFixed(0)} % of the timed window`,
  );
  if (result.deliveryCpuPerMessageMs)
    console.log(
      `CPU ms per notification, delivery phase only: ${Object.entries(result.deliveryCpuPerMessageMs)
        .map(([role, ms]) => `${role} ${ms.toFixed(3)}`)
        .join(', ')}`,
    );
  console.log(`statuses: ${result.byStatus.map((s) => `${s.status} ${s.n}`).join(', ')}`);
  const ratio = result.perSecond / baseline.perSecond;
  console.log(
    `ratio = system/baseline = ${ratio.toFixed(3)} (${ratio >= TARGET ? 'meets' : 'BELOW'} the target of ${TARGET})`,
  );
  // Every notification of the run, the warm-up's included, is checked.
  const total = warmup + messages;
  const storedOk = result.stored.notifications === total && result.stored.client_ids === total;
  console.log(
    `stored: ${result.stored.notifications} notifications with ${result.stored.client_ids} client ids ` +
      `(${storedOk ? 'one per request' : 'MISMATCH'})`,
  );
  const inboxOk = result.inbox.messages === total && result.inbox.notifications === total;
  console.log(
    `dev inbox: ${result.inbox.messages} messages for ${result.inbox.notifications} notifications ` +
      `(${inboxOk ? 'exactly one each' : 'MISMATCH'})`,
  );
  mkdirSync('bench/results', { recursive: true });
  writeFileSync(
    'bench/results/notify-deliver.json',
    `${JSON.stringify({ name: 'notify-deliver', at: new Date().toISOString(), messages, concurrency, baseline, system: result, ratio, target: TARGET }, null, 2)}\n`,
  );
  if (!inboxOk || !storedOk) process.exitCode = 1;
}

await main();
