import { randomInt, randomUUID } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import {
  BENCH_SERVICES,
  createBenchDatabase,
  dropNatsNamespace,
  freePort,
  numberFlag,
  startBenchApp,
  startProcess,
  stopProcess,
  textFlag,
} from './harness.ts';
import { runMixed, type Send, type Workload } from './mixed-load.ts';
import { chart, summarise, table } from './mixed-report.ts';
import { AS_SERVICE, createUsers, NOTIFY_BENCH_ENV, notificationRequest, userId } from './notify-common.ts';
import { soakReport, startSampler } from './sampler.ts';
import {
  admitUsers,
  auditShow,
  BOOKING_BENCH_ENV,
  createHotShow,
  randomSeats,
} from './scenarios/booking-hold.ts';
import { writeBenchLot } from './standalone.ts';
import { boundedReport, startTableSampler } from './table-sampler.ts';

/**
 * `npm run bench -- mixed [--duration=60] [--connections=64]`
 *
 * Every service at once on the local PostgreSQL, Redis and NATS JetStream: 2 API processes,
 * 2 worker processes and a scheduler. Paste reads and creates in the spec's 100:1 ratio,
 * notification sends, holds and bookings on one hot show, parking entries and paid exits.
 * The same load generator first drives a bare Fastify GET for the baseline. Prints a table
 * per operation, writes bench/results/mixed.json and the chart bench/results/mixed.svg.
 * Every 5 s each process's RSS, event-loop delay and pool use are sampled: `--duration=600` is
 * the soak, and the report says whether memory stayed flat after warm-up.
 */
const ROWS = 200;
const SEATS_PER_ROW = 100;
/** Notification recipients (the first of notify-common's bench users). */
const NOTIFY_USERS = 200;
/** Entries and exits are the lot's panels (the development operator key). */
const PANEL = { 'x-operator-key': 'dev-operator-key' };
const CARD = { card_number: '4242424242424242', exp_month: 12, exp_year: 2030, cvc: '123' };

/**
 * Answers that are correct decisions, not failures: seats someone else holds (409), and a hold
 * with an admission that has ended (403: that buyer already booked, or their ten minutes passed;
 * the driver then queues a new buyer, as a real one would).
 */
const accept = (operation: string, status: number) =>
  (status >= 200 && status < 300) || (operation === 'booking hold' && (status === 409 || status === 403));

function workloads(
  pastes: string[],
  show: string,
  admitted: { token: string; authorization: string }[],
): Workload[] {
  const plate = `M${Date.now().toString(36).slice(-4).toUpperCase()}`;
  // A new buyer: a guest identity, then the waiting room with its token.
  const admitAnother = async (send: Send, slot: number) => {
    const guest = await send('booking guest', 'POST', '/api/v1/guests');
    if (guest.status !== 201) return;
    const authorization = `Bearer ${JSON.parse(guest.body).token}`;
    const queued = await send('booking queue', 'GET', `/api/v1/shows/${show}/queue`, undefined, {
      authorization,
    });
    const token = queued.status === 200 ? JSON.parse(queued.body).admission_token : null;
    if (token) admitted[slot] = { token, authorization };
  };
  let plates = 0;
  let reads = 0;
  return [
    {
      name: 'paste',
      weight: 4,
      async step(send) {
        // The spec's read:write ratio of 100:1, across all paste connections.
        if (++reads % 101 === 0) {
          const created = await send('paste create', 'POST', '/api/v1/paste', {
            content: `mixed ${randomUUID()}`,
          });
          if (created.status === 201) pastes.push(JSON.parse(created.body).short_url);
          return;
        }
        await send('paste read', 'GET', `/api/v1/paste/${pastes[randomInt(pastes.length)]}`);
      },
    },
    {
      name: 'booking',
      weight: 2,
      async step(send) {
        const slot = randomInt(admitted.length);
        const { token, authorization } = admitted[slot];
        const hold = await send(
          'booking hold',
          'POST',
          `/api/v1/shows/${show}/hold`,
          { seat_ids: randomSeats(ROWS, SEATS_PER_ROW), admission_token: token },
          { authorization },
        );
        // A buyer whose admission ended (booked, or ten minutes passed) leaves; a new one queues.
        if (hold.status === 403) return void (await admitAnother(send, slot));
        if (hold.status !== 201) return;
        const paid = await send(
          'booking pay',
          'POST',
          '/api/v1/bookings',
          { hold_id: JSON.parse(hold.body).hold_id, payment_method: 'CARD', payment_details: CARD },
          { authorization, 'idempotency-key': randomUUID() },
        );
        if (paid.status === 201) await admitAnother(send, slot);
      },
    },
    {
      name: 'notify',
      weight: 2,
      async step(send) {
        await send(
          'notification send',
          'POST',
          '/api/notifications',
          notificationRequest(userId(randomInt(NOTIFY_USERS))),
          AS_SERVICE,
        );
      },
    },
    {
      name: 'parking',
      weight: 2,
      async step(send) {
        const entry = await send(
          'parking entry',
          'POST',
          '/api/v1/parking/entry',
          { licensePlate: `${plate}${(plates++).toString(36).toUpperCase()}`, vehicleType: 'CAR' },
          PANEL,
        );
        if (entry.status !== 201) return;
        await send(
          'parking exit (paid)',
          'POST',
          '/api/v1/parking/exit',
          { ticketId: JSON.parse(entry.body).ticketId, payment: CARD },
          { ...PANEL, 'idempotency-key': randomUUID() },
        );
      },
    },
  ];
}

async function main() {
  const durationMs = numberFlag('duration', 60) * 1000;
  const connections = numberFlag('connections', 64);
  // `--retention=2m`: every retention window that short (the steady-state run of issue 23).
  const retention = textFlag('retention');

  const database = await createBenchDatabase(BENCH_SERVICES.postgres);
  const namespace = `mixed_${Date.now()}`;
  const lot = writeBenchLot(4, 5000);
  const env = (role: string) => ({
    ROLE: role,
    NAMESPACE: namespace,
    DATABASE_URL: database.url,
    REDIS_URL: BENCH_SERVICES.redis,
    NATS_URL: BENCH_SERVICES.nats,
    BOOKING_DEMO: 'false',
    BOOKING_QUEUE_CAPACITY: '1000',
    PASTE_RATE_ANON: '100000000/600',
    PARKING_LOT_CONFIG: lot,
    ...NOTIFY_BENCH_ENV,
    ...BOOKING_BENCH_ENV,
    ...(retention ? shortRetention(retention) : {}),
  });
  const processes = [];
  const bases: string[] = [];
  try {
    // The first process migrates; the others start once it is up.
    const targets: { name: string; pid: number; base: string }[] = [];
    for (const role of ['api', 'api', 'worker', 'worker', 'scheduler']) {
      const { child, base } = await startBenchApp(env(role));
      processes.push(child);
      if (role === 'api') bases.push(base);
      const nth = targets.filter((target) => target.name.startsWith(role)).length + 1;
      targets.push({ name: `${role} ${nth}`, pid: child.pid ?? 0, base });
    }
    const basePort = await freePort();
    processes.push(
      await startProcess(
        ['bench/baseline.ts'],
        { PORT: String(basePort), BASELINE_KIND: 'get', BASELINE_BODY_BYTES: '0' },
        `http://127.0.0.1:${basePort}/ready`,
      ),
    );

    console.log('preparing: pastes, a hot show with admitted users, the lot…');
    const pastes: string[] = [];
    for (let i = 0; i < 200; i++) {
      const response = await fetch(`${bases[0]}/api/v1/paste`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ content: `mixed seed ${i} ${'x'.repeat(2000)}` }),
      });
      pastes.push(((await response.json()) as { short_url: string }).short_url);
    }
    const show = await createHotShow(bases[0], ROWS, SEATS_PER_ROW);
    const admitted = await admitUsers(bases[0], show, 500);
    await createUsers(bases[0], NOTIFY_USERS);

    console.log(`baseline: bare Fastify GET, ${connections} connections, 10 s`);
    const baseline = await runMixed({
      bases: [`http://127.0.0.1:${basePort}`],
      workloads: [
        {
          name: 'baseline',
          weight: 1,
          step: async (send) => void (await send('baseline GET', 'GET', '/target')),
        },
      ],
      connections,
      durationMs: 10_000,
      accept: (_, status) => status === 200,
    });
    const [baselineSummary] = summarise(baseline, 10_000);
    console.log(
      `mixed: ${connections} connections over 2 API processes, ${durationMs / 1000} s, ${cpus().length} cores`,
    );
    const sampler = startSampler(targets);
    const scheduler = targets.find((target) => target.name.startsWith('scheduler'))!;
    const tables = retention ? startTableSampler(database.url, scheduler.base) : undefined;
    const recorder = await runMixed({
      bases,
      workloads: workloads(pastes, show, admitted),
      connections,
      durationMs,
      accept,
    });
    const samples = sampler.stop();
    const tableSamples = await tables?.stop();
    const rows = summarise(recorder, durationMs);
    const total = rows.reduce((sum, row) => sum + row.perSecond, 0);
    console.log(table([baselineSummary, ...rows], baselineSummary.perSecond));
    console.log(
      `all operations: ${total.toFixed(0)} req/s = ${(total / baselineSummary.perSecond).toFixed(3)} of the bare baseline`,
    );

    const audit = await auditShow(bases[0], show);
    const checks = [
      `show audit: ${audit.double_booked_seats} seats held twice, ${audit.incomplete_holds} incomplete holds`,
    ];
    const worst = Math.max(...rows.map((row) => row.errorRate));
    checks.push(`highest error rate: ${(worst * 100).toFixed(3)} % (limit 0.1 %)`);
    for (const line of checks) console.log(line);
    const soak = soakReport(samples);
    for (const line of soak) console.log(line);
    const bounded = tableSamples ? boundedReport(tableSamples) : [];
    for (const line of bounded) console.log(line);

    mkdirSync('bench/results', { recursive: true });
    writeFileSync(
      'bench/results/mixed.json',
      `${JSON.stringify({ at: new Date().toISOString(), connections, durationMs, retention, baseline: baselineSummary, rows, checks, soak, samples, tableSamples, bounded }, null, 2)}\n`,
    );
    writeFileSync(
      'bench/results/mixed.svg',
      chart(
        recorder,
        `mixed load: ${connections} connections, 2 API + 2 worker processes, ${new Date().toISOString().slice(0, 10)}`,
      ),
    );
    console.log('wrote bench/results/mixed.json and bench/results/mixed.svg');
    if (audit.double_booked_seats !== 0 || audit.incomplete_holds !== 0 || worst > 0.001)
      process.exitCode = 1;
  } finally {
    for (const child of processes.reverse()) await stopProcess(child);
    await database.drop();
    await dropNatsNamespace(namespace);
    rmSync(lot, { force: true });
  }
}

/**
 * Every retention window set to `window`, and admissions and holds of a minute, so that
 * waiting-room entries and unbooked holds end (and become removable) within the run.
 */
function shortRetention(window: string): Record<string, string> {
  return {
    BOOKING_ADMISSION_MINUTES: '1',
    BOOKING_HOLD_MINUTES: '1',
    NOTIFY_RETENTION: window,
    BOOKING_HOLD_RETENTION: window,
    BOOKING_QUEUE_RETENTION: window,
    BOOKING_SHOW_SEATS_RETENTION: window,
    BOOKING_REMINDER_RETENTION: window,
    PARKING_TICKET_ARCHIVE_AFTER: window,
  };
}

await main();
