import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { cpus } from 'node:os';
import { AckPolicy, jetstream, jetstreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import pg from 'pg';
import {
  BENCH_SERVICES,
  createBenchDatabase,
  freePort,
  numberFlag,
  pidsOf,
  processCpuMs,
  startProcess,
  stopProcess,
} from './harness.ts';
import { createUsers, NOTIFY_BENCH_ENV, notificationBody, USERS, userId } from './notify-common.ts';

/**
 * `npm run bench -- notify-deliver [--messages=5000] [--concurrency=64]`
 *
 * End-to-end delivery with two worker processes against a bare JetStream publish-and-consume of
 * the same number of messages, in the same run:
 *
 * - baseline: a fresh work-queue stream in its own namespace; `concurrency` publishers send the
 *   N messages (the queue's envelope `{key, payload: {notificationId, channel}}`, each with a
 *   `msgID`) while one pull consumer takes and acks them; rate = N / (first publish → last ack).
 * - system: 1 API process (ROLE=api), 2 workers (ROLE=worker) and a scheduler on a fresh
 *   PostgreSQL database with the local Redis and NATS. `concurrency` clients POST the N
 *   notifications (`booking_reminder` e-mails to 1,000 users) as fast as they are answered; the
 *   clock runs from the first accept until every delivery is `sent` (or already `delivered`)
 *   in PostgreSQL, i.e. accepted → rendered → stored in the dev inbox → status recorded.
 *
 * Then the dev inbox must hold exactly N messages, one per notification. With
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

function post(agent: http.Agent, url: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => {
          text += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
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
    return { seconds, perSecond: messages / seconds };
  } finally {
    await jsm.streams.delete(stream).catch(() => {});
    await nc.close();
  }
}

async function system(messages: number, concurrency: number) {
  const database = await createBenchDatabase(BENCH_SERVICES.postgres);
  const namespace = `notifydeliver_${Date.now()}`;
  const env = (port: number, role: string) => ({
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: `http://127.0.0.1:${port}`,
    ROLE: role,
    SERVICES: 'notify',
    LOG_LEVEL: 'warn',
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
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      // BENCH_PROFILE_DIR=/tmp/prof: the API and each worker write a CPU profile there when they stop.
      const profile =
        (role === 'worker' || role === 'api') && process.env.BENCH_PROFILE_DIR
          ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}` }
          : {};
      processes.push(
        await startProcess(['src/main.ts'], { ...env(port, role), ...profile }, `${base}/health/live`),
      );
      if (role === 'api') api = base;
    }
    await createUsers(api);
    await db.connect();
    const statuses = new Map<string, number>();
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
    const servers = [...pidsOf('nats-server'), ...pidsOf('redis-server')];
    const serversBefore = servers.map(processCpuMs);
    const driverBefore = process.cpuUsage();
    const cpuBefore = [
      ...processes.map((child) => processCpuMs(child.pid as number)),
      ...backends.map(processCpuMs),
    ];
    const started = performance.now();
    let acceptedAt = 0;
    // node:http with keep-alive rather than fetch: fetch cost this driver ~1.2 ms of CPU per
    // request on the two cores the system under test also runs on (the CPU figures above).
    const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
    await pool(messages, concurrency, async () => {
      const { status: code, text } = await post(agent, `${api}/api/notifications`, notificationBody());
      const body = JSON.parse(text) as { status?: string; channels?: { status: string }[] };
      const status = `${code} ${body.channels?.[0]?.status ?? body.status}`;
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    });
    agent.destroy();
    acceptedAt = performance.now();
    const accepted = statuses.get('202 queued') ?? 0;
    if (accepted !== messages) throw new Error(`not all accepted: ${JSON.stringify([...statuses])}`);
    let done = 0;
    const deadline = Date.now() + 300_000;
    while (done < messages) {
      if (Date.now() > deadline) {
        const { rows } = await db.query(
          `select status, published_at is not null as published, attempts, count(*)::int as n
           from notification_deliveries where status not in ('sent', 'delivered') group by 1, 2, 3`,
        );
        throw new Error(`only ${done} of ${messages} sent after 5 min; the others: ${JSON.stringify(rows)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
      const { rows } = await db.query(
        `select count(*)::int as n from notification_deliveries where status in ('sent', 'delivered')`,
      );
      done = rows[0].n;
    }
    const seconds = (performance.now() - started) / 1000;
    const cpuAfter = [
      ...processes.map((child) => processCpuMs(child.pid as number)),
      ...backends.map(processCpuMs),
    ];
    const spent = cpuAfter.map((after, i) => after - cpuBefore[i]);
    const transactions = (await commits()) - commitsBefore;
    const serversMs = servers
      .map((pid, i) => processCpuMs(pid) - serversBefore[i])
      .reduce((a, b) => a + b, 0);
    const driver = process.cpuUsage(driverBefore);
    // Backends connected during the run count whole (one that came and went is missed).
    const joined = (await backendPids(db, databaseName)).filter((pid) => !backends.includes(pid));
    spent.push(...joined.map(processCpuMs));
    const cpuPerMessageMs = {
      ...Object.fromEntries(roles.map((role, i) => [role, spent[i] / messages])),
      [`postgres (${backends.length + joined.length} backends)`]:
        spent.slice(roles.length).reduce((a, b) => a + b, 0) / messages,
      'nats + redis (whole servers)': serversMs / messages,
      'this driver': (driver.user + driver.system) / 1000 / messages,
    };
    const { rows: inbox } = await db.query(
      `select count(*)::int as messages, count(distinct notification_id)::int as notifications from notify_inbox`,
    );
    const { rows: byStatus } = await db.query(
      `select status, count(*)::int as n from notification_deliveries group by status order by status`,
    );
    return {
      seconds,
      acceptSeconds: (acceptedAt - started) / 1000,
      perSecond: messages / seconds,
      cpuPerMessageMs,
      transactionsPerMessage: transactions / messages,
      inbox: inbox[0] as { messages: number; notifications: number },
      byStatus: byStatus as { status: string; n: number }[],
    };
  } finally {
    await db.end().catch(() => {});
    for (const child of processes.reverse()) await stopProcess(child);
    if (process.env.BENCH_KEEP_DB) console.log(`kept ${database.url}`);
    else await database.drop();
  }
}

async function main() {
  const messages = numberFlag('messages', 5000);
  const concurrency = numberFlag('concurrency', 64);
  console.log(
    `notify-deliver: ${messages} messages, ${concurrency} concurrent senders, ${cpus().length} cores; ` +
      `baseline: bare JetStream publish → consume → ack`,
  );
  const baseline = await bareJetStream(messages, concurrency);
  console.log(
    `baseline: ${messages} in ${baseline.seconds.toFixed(2)} s = ${baseline.perSecond.toFixed(0)} msg/s`,
  );
  console.log('system: 1 API + 2 workers + 1 scheduler on PostgreSQL + Redis + NATS…');
  const result = await system(messages, concurrency);
  console.log(
    `system: ${messages} accepted in ${result.acceptSeconds.toFixed(2)} s, all sent after ${result.seconds.toFixed(2)} s ` +
      `= ${result.perSecond.toFixed(0)} deliveries/s`,
  );
  console.log(
    `CPU ms per notification: ${Object.entries(result.cpuPerMessageMs)
      .map(([role, ms]) => `${role} ${ms.toFixed(3)}`)
      .join(', ')}; PostgreSQL transactions per notification ${result.transactionsPerMessage.toFixed(2)}`,
  );
  console.log(`statuses: ${result.byStatus.map((s) => `${s.status} ${s.n}`).join(', ')}`);
  const ratio = result.perSecond / baseline.perSecond;
  console.log(
    `ratio = system/baseline = ${ratio.toFixed(3)} (${ratio >= TARGET ? 'meets' : 'BELOW'} the target of ${TARGET})`,
  );
  const inboxOk = result.inbox.messages === messages && result.inbox.notifications === messages;
  console.log(
    `dev inbox: ${result.inbox.messages} messages for ${result.inbox.notifications} notifications ` +
      `(${inboxOk ? 'exactly one each' : 'MISMATCH'})`,
  );
  mkdirSync('bench/results', { recursive: true });
  writeFileSync(
    'bench/results/notify-deliver.json',
    `${JSON.stringify({ name: 'notify-deliver', at: new Date().toISOString(), messages, concurrency, baseline, system: result, ratio, target: TARGET }, null, 2)}\n`,
  );
  if (!inboxOk) process.exitCode = 1;
}

await main();
