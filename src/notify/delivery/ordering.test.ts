import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
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
 * Acceptance: 1,000 notifications for 50 users (embedded: 64 for 8) through two worker members reach the provider
 * in order per user, and one user whose provider calls fail (each first try) does not delay
 * the others. On real servers the workers are two child processes sharing the database and
 * queue; on embedded PGlite (one process's database) they are two consumer sets in this process.
 */
const shared = Boolean(realServices.databaseUrl);
// PGlite runs every query of both consumers and the accepts on one connection (about 30
// deliveries a second here), so the embedded run is smaller. The failing user needs at least
// PER_USER x RETRY_MS; the others must not wait for it.
const USERS = shared ? 50 : 8;
const PER_USER = shared ? 20 : 8;
const RETRY_MS = 1000;
const FAILING = 'user-07';
const env = {
  NOTIFY_LIMIT_EMAIL_PER_DAY: '1000',
  NOTIFY_RETRY_DELAYS_MS: Array(4).fill(RETRY_MS).join(','),
};

let t: TestApp;
let db: Db;
const workers: ChildProcess[] = [];
before(async () => {
  const namespace = uniqueName('o');
  const notify = createNotifyModule({
    templates: fakeTemplates(),
    senders: providerLogSenders(() => db, { failFirstCallFor: FAILING }),
  });
  t = await createTestApp({
    services: ['notify'],
    replace: [notify],
    clock: realTimeClock(),
    env: { ...env, NAMESPACE: namespace },
  });
  db = t.adapters.database.db;
  await createProviderLog(db);
  if (!shared) {
    await t.app.platform.startWorkers();
    await t.app.platform.startWorkers();
    return;
  }
  for (let i = 0; i < 2; i++) workers.push(await spawnWorker(namespace, { ...env, FAIL_USER: FAILING }));
  // Let the two members settle their JetStream partition leases before the first message, so the
  // test measures steady delivery; a lease moving mid-run is crash.test.ts's case.
  await sleep(3000);
});
after(async () => {
  for (const worker of workers) if (worker.exitCode === null) worker.kill('SIGKILL');
  await t.close();
});

test(`${USERS * PER_USER} notifications, ${USERS} users, two workers (${shared ? 'processes' : 'consumers in one process'}): in order per user, a failing user delays only itself`, {
  timeout: 90_000,
}, async (context) => {
  const started = Date.now();
  const api = t.app.platform.modules.get('notify')?.api as NotifyApi;
  const users = Array.from({ length: USERS }, (_, i) => `user-${String(i).padStart(2, '0')}`);
  for (const userId of users) await api.setContact(userId, { email: `${userId}@example.com` });
  await Promise.all(
    users.map(async (userId) => {
      for (let n = 0; n < PER_USER; n++) {
        const accepted = await api.send({ user_id: userId, type: 'seq', channels: ['email'], data: { n } });
        assert.equal(accepted.channels[0].status, 'queued');
      }
    }),
  );
  const gateOpenedAt = Date.now();
  await openProviderGate(db);
  await eventually(async () => (await logged()).length === USERS * PER_USER, 60_000);
  const log = await logged();
  for (const userId of users) {
    const order = log.filter((row) => row.user_id === userId).map((row) => row.n);
    if (order.join() !== [...Array(PER_USER).keys()].join()) {
      const { rows } =
        await sql`select id, n, pid from test_provider_calls where user_id = ${userId} order by id`.execute(
          db,
        );
      // The ids are bigint, which JSON.stringify refuses.
      const calls = JSON.stringify(rows, (_, value) => (typeof value === 'bigint' ? String(value) : value));
      assert.fail(`order of ${userId}: ${order.join()}; provider calls: ${calls}`);
    }
  }
  if (shared) assert.equal(new Set(log.map((row) => row.pid)).size, 2, 'both processes delivered');
  // Every message was queued before the provider opened, so the failing user (PER_USER retries of
  // RETRY_MS each) finishes last unless its failures hold back the others' messages.
  const lastOf = (rows: typeof log) => Math.max(...rows.map((row) => row.at.getTime()));
  const failingDone = lastOf(log.filter((row) => row.user_id === FAILING)) - gateOpenedAt;
  const othersDone = lastOf(log.filter((row) => row.user_id !== FAILING)) - gateOpenedAt;
  context.diagnostic(
    `accepted in ${gateOpenedAt - started} ms; others done ${othersDone} ms, failing user ${failingDone} ms`,
  );
  assert.ok(failingDone >= PER_USER * RETRY_MS, `the failing user waits for its retries (${failingDone} ms)`);
  assert.ok(
    othersDone < failingDone / 2,
    `the others are not held back (${othersDone} ms vs ${failingDone} ms)`,
  );
});

async function logged() {
  const { rows } = await sql<{ user_id: string; n: number; pid: number; at: Date }>`
    select user_id, n, pid, at from test_provider_log order by id`.execute(db);
  return rows;
}
