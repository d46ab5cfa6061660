import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import type { Db } from '../platform/db/index.ts';
import { createTestApp, realServices, type TestApp, uniqueName } from '../platform/testing.ts';
import type { NotifyApi } from './api.ts';
import { createProviderLog, providerLogSenders } from './fake-provider.ts';
import { notifyTestDoubles } from './module.ts';
import { eventually, fakeTemplates, realTimeClock } from './testing.ts';

/**
 * Acceptance: 1,000 notifications for 50 users through two worker members reach the provider
 * in order per user, and one user whose provider calls fail (each first try) does not delay
 * the others. On real servers the workers are two child processes sharing the database and
 * queue; on embedded PGlite (one process's database) they are two consumer sets in this process.
 */
const USERS = 50;
const PER_USER = 20;
const FAILING = 'user-07';
const shared = Boolean(realServices.databaseUrl);
const env = {
  NOTIFY_LIMIT_EMAIL_PER_DAY: '1000',
  NOTIFY_RETRY_DELAYS_MS: '300,300,300,300',
};

let t: TestApp;
let db: Db;
const workers: ChildProcess[] = [];
before(async () => {
  const namespace = uniqueName('o');
  notifyTestDoubles.set(namespace, {
    templates: fakeTemplates(),
    senders: providerLogSenders(() => db, { failFirstCallFor: FAILING }),
  });
  t = await createTestApp({
    services: ['notify'],
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
  for (let i = 0; i < 2; i++) workers.push(await spawnWorker(namespace, { FAIL_USER: FAILING }));
});
after(async () => {
  for (const worker of workers) if (worker.exitCode === null) worker.kill('SIGKILL');
  await t.close();
});

test(`${USERS * PER_USER} notifications, ${USERS} users, two workers (${shared ? 'processes' : 'consumers in one process'}): in order per user, a failing user delays only itself`, {
  timeout: 90_000,
}, async () => {
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
  await eventually(async () => (await logged()).length === USERS * PER_USER, 60_000);
  const log = await logged();
  for (const userId of users) {
    const order = log.filter((row) => row.user_id === userId).map((row) => row.n);
    assert.deepEqual(order, [...Array(PER_USER).keys()], `order of ${userId}`);
  }
  if (shared) assert.equal(new Set(log.map((row) => row.pid)).size, 2, 'both processes delivered');
  const lastOf = (rows: typeof log) => Math.max(...rows.map((row) => row.at.getTime()));
  const failingDone = lastOf(log.filter((row) => row.user_id === FAILING));
  const othersDone = lastOf(log.filter((row) => row.user_id !== FAILING));
  assert.ok(
    othersDone < failingDone - 1000,
    `the others finished ${failingDone - othersDone} ms before the failing user (20 retries of 300 ms)`,
  );
});

async function logged() {
  const { rows } = await sql<{ user_id: string; n: number; pid: number; at: Date }>`
    select user_id, n, pid, at from test_provider_log order by id`.execute(db);
  return rows;
}

export async function spawnWorker(
  namespace: string,
  extra: Record<string, string> = {},
): Promise<ChildProcess> {
  const worker = spawn(process.execPath, ['src/notify/worker.fixture.ts'], {
    env: {
      ...process.env,
      ...env,
      ...extra,
      DATABASE_URL: realServices.databaseUrl,
      DATABASE_SCHEMA: namespace,
      NAMESPACE: namespace,
      NATS_URL: realServices.natsUrl ?? '',
      REDIS_URL: realServices.redisUrl ?? '',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  worker.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  worker.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  while (!output.includes('worker ready')) {
    if (worker.exitCode !== null) throw new Error(`worker exited: ${output}`);
    await sleep(50);
  }
  return worker;
}
