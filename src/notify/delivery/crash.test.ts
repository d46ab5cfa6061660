import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { eventually, fakeTemplates, realTimeClock } from '../../../test/support/notify.ts';
import {
  createProviderLog,
  openProviderGate,
  providerLogSenders,
  spawnWorker,
} from '../../../test/support/notify-provider-log.ts';
import { createTestApp, realServices, type TestApp, uniqueName } from '../../../test/support/platform.ts';
import type { Db } from '../../platform/db/index.ts';
import type { NotifyApi } from '../api.ts';
import { createNotifyModule } from '../module.ts';

/**
 * No loss across a crash: a worker process is SIGKILLed in the middle of a batch, another one
 * starts, and every accepted notification reaches the provider exactly once. The provider
 * honours the delivery id as an idempotency key (as the spec's dedup asks end to end); the raw
 * calls show that only the messages in flight at the kill were tried again.
 */
const USERS = 30;
const PER_USER = 10;
const CONCURRENCY = 8;
const env = {
  NOTIFY_LIMIT_EMAIL_PER_DAY: '1000',
  NOTIFY_WORKER_CONCURRENCY: String(CONCURRENCY),
  PROVIDER_DELAY_MS: '20',
};

let t: TestApp | undefined;
let db: Db;
let namespace: string;
const workers: ChildProcess[] = [];

before(async () => {
  if (!realServices.databaseUrl) return;
  namespace = uniqueName('k');
  t = await createTestApp({
    services: ['notify'],
    replace: [createNotifyModule({ templates: fakeTemplates(), senders: providerLogSenders(() => db) })],
    clock: realTimeClock(),
    env: { ...env, NAMESPACE: namespace },
  });
  db = t.adapters.database.db;
  await createProviderLog(db);
  await openProviderGate(db);
});
after(async () => {
  for (const worker of workers) if (worker.exitCode === null) worker.kill('SIGKILL');
  await t?.close();
});

test('a SIGKILLed worker loses nothing and sends nothing twice', {
  skip: realServices.databaseUrl
    ? false
    : 'PGlite is one process’s database; set TEST_DATABASE_URL (and NATS_URL)',
  timeout: 120_000,
}, async (context) => {
  assert.ok(t);
  const api = t.app.platform.modules.get('notify')?.api as NotifyApi;
  workers.push(await spawnWorker(namespace, env));
  const accepted: string[] = [];
  const users = Array.from({ length: USERS }, (_, i) => `crash-${i}`);
  for (const userId of users) await api.setContact(userId, { email: `${userId}@example.com` });
  await Promise.all(
    users.map(async (userId) => {
      for (let n = 0; n < PER_USER; n++) {
        const result = await api.send({ user_id: userId, type: 'seq', channels: ['email'], data: { n } });
        accepted.push(`${result.id}:email`);
      }
    }),
  );
  const count = async () =>
    (await sql<{ n: number }>`select count(*)::int as n from test_provider_log`.execute(db)).rows[0].n;
  await eventually(async () => (await count()) >= 40, 30_000);
  const [first] = workers;
  first.kill('SIGKILL');
  await once(first, 'exit');
  const atKill = await count();
  assert.ok(atKill < USERS * PER_USER, 'killed mid-batch');
  workers.push(await spawnWorker(namespace, env));
  await eventually(async () => (await count()) === USERS * PER_USER, 90_000);

  const { rows: logged } = await sql<{
    delivery_id: string;
  }>`select delivery_id from test_provider_log`.execute(db);
  assert.deepEqual(logged.map((row) => row.delivery_id).sort(), [...accepted].sort());
  const { rows: repeats } = await sql<{ delivery_id: string; calls: number; first_pid: number }>`
    select delivery_id, count(*)::int as calls, (array_agg(pid order by id))[1] as first_pid
    from test_provider_calls group by delivery_id having count(*) > 1`.execute(db);
  const { rows: order } = await sql<{ user_id: string; ns: number[] }>`
    select user_id, array_agg(n order by id) as ns from test_provider_log group by user_id`.execute(db);
  const outOfOrder = order.filter((row) => row.ns.some((n, i) => i > 0 && n < row.ns[i - 1])).length;
  context.diagnostic(
    `${atKill} delivered before the kill; ${repeats.length} tried again after it; ${outOfOrder} users out of order`,
  );
  // On JetStream this needs the queue's fresh consumer on take-over (src/platform/queue/jetstream.ts):
  // before it, 13–20 of 30 users saw a reordering here.
  assert.equal(outOfOrder, 0, 'order per user survives the crash');
  assert.ok(
    repeats.length <= CONCURRENCY,
    `only messages in flight are tried again: ${JSON.stringify(repeats)}`,
  );
  for (const repeat of repeats) assert.equal(repeat.first_pid, first.pid);
  await eventually(async () => {
    const { rows } = await sql<{ status: string; n: number }>`select status, count(*)::int as n
      from notification_deliveries group by status`.execute(db);
    return rows.length === 1 && rows[0].status === 'sent' && rows[0].n === USERS * PER_USER;
  }, 30_000);
});
