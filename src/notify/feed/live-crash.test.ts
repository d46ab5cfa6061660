import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { eventually, realTimeClock } from '../../../test/support/notify.ts';
import { spawnWorker } from '../../../test/support/notify-provider-log.ts';
import { createTestApp, realServices, type TestApp, uniqueName } from '../../../test/support/platform.ts';
import { sseEvents } from '../../../test/support/sse-reader.ts';
import type { NotifyApi } from '../api.ts';

/**
 * The acceptance: 1,000 in-app notifications to 50 users through two worker processes
 * (production workers: stored templates, the feed provider, the pub/sub) while an SSE client per
 * user follows its feed on an API process of its own. One worker is SIGKILLed mid-batch and
 * another starts: every user's stream shows its 20 items once each and in order, the feed holds
 * each once, and the unread counts are 20. Runs on the shared PostgreSQL and Redis, with the
 * PostgreSQL queue or (with NATS_URL) JetStream.
 */
const USERS = 50;
const PER_USER = 20;
const TOTAL = USERS * PER_USER;
const env = {
  NOTIFY_LIMIT_IN_APP_PER_HOUR: '1000',
  NOTIFY_WORKER_CONCURRENCY: '16',
  // 50 streams from one test address: above the default cap of 32 per address.
  SSE_MAX_PER_ADDRESS: '64',
};

let t: TestApp | undefined;
let namespace: string;
let url: string;
const workers: ChildProcess[] = [];

before(async () => {
  if (!realServices.databaseUrl || !realServices.redisUrl) return;
  namespace = uniqueName('fk');
  t = await createTestApp({
    services: ['notify'],
    clock: realTimeClock(),
    env: { ...env, NAMESPACE: namespace },
  });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
  const template = await t.app.inject({
    method: 'PUT',
    url: '/api/templates/seqfeed.in_app',
    headers: t.asAdmin,
    payload: { subject: 'Item {{ n }}', body: 'number {{ n }}', link: '/items/{{ n }}' },
  });
  assert.ok(template.statusCode < 300, template.body);
});
after(async () => {
  for (const worker of workers) if (worker.exitCode === null) worker.kill('SIGKILL');
  await t?.close();
});

test('1,000 feed items to 50 users over two workers, one killed mid-batch: live, in order, once, unread right', {
  skip:
    realServices.databaseUrl && realServices.redisUrl
      ? false
      : 'needs the shared PostgreSQL and Redis (TEST_DATABASE_URL, REDIS_URL; NATS_URL for JetStream)',
  timeout: 240_000,
}, async (context) => {
  assert.ok(t);
  const db = t.adapters.database.db;
  const api = t.app.platform.modules.get('notify')?.api as NotifyApi;
  const users = Array.from({ length: USERS }, (_, i) => `feedk-${i}`);
  const streams = await Promise.all(
    users.map(async (userId) => {
      const response = await fetch(`${url}/api/users/${userId}/feed/events`, { headers: t!.asUser(userId) });
      assert.equal(response.status, 200);
      const events = sseEvents(response);
      await events.until('unread');
      return events;
    }),
  );
  // What each stream shows, read while the load runs.
  const shown = streams.map(async (events) => {
    const items: { n: number; id: string; event_id: string }[] = [];
    while (items.length < PER_USER) {
      const item = await events.until<{ title: string; id: string; event_id: string }>(
        'item',
        () => true,
        180_000,
      );
      items.push({ n: Number(item.title.slice(5)), id: item.id, event_id: item.event_id });
    }
    await events.cancel();
    return items;
  });

  workers.push(await spawnWorker(namespace, env, 'test/fixtures/notify-feed-worker.ts'));
  workers.push(await spawnWorker(namespace, env, 'test/fixtures/notify-feed-worker.ts'));
  const started = Date.now();
  // Accepted while the workers deliver: the kill lands in the middle of the load.
  const sending = Promise.all(
    users.map(async (userId) => {
      for (let n = 0; n < PER_USER; n++) {
        const result = await api.send({
          user_id: userId,
          type: 'seqfeed',
          channels: ['in_app'],
          data: { n },
        });
        assert.equal(result.channels[0].status, 'queued');
      }
    }),
  );
  const stored = async () =>
    (await sql<{ n: number }>`select count(*)::int as n from notify_feed`.execute(db)).rows[0].n;
  await eventually(async () => (await stored()) >= TOTAL / 5, 60_000);
  const [first] = workers;
  first.kill('SIGKILL');
  await once(first, 'exit');
  const atKill = await stored();
  assert.ok(atKill < TOTAL, `killed mid-batch (${atKill} stored)`);
  workers.push(await spawnWorker(namespace, env, 'test/fixtures/notify-feed-worker.ts'));
  await sending;
  await eventually(async () => (await stored()) === TOTAL, 120_000);
  const seen = await Promise.all(shown);
  const elapsed = Date.now() - started;

  // Live: each stream got its user's 20 items once, in the order they were sent, ids increasing.
  for (const [i, items] of seen.entries()) {
    assert.deepEqual(
      items.map((item) => item.n),
      Array.from({ length: PER_USER }, (_, n) => n),
      `${users[i]}'s stream in order`,
    );
    assert.equal(new Set(items.map((item) => item.id)).size, PER_USER, `${users[i]}: no repeats`);
    const ids = items.map((item) => BigInt(item.event_id));
    assert.ok(
      ids.every((id, k) => k === 0 || id > ids[k - 1]),
      'event ids grow',
    );
  }
  // The feed: each item once, newest first, 20 unread per user, right after the crash.
  for (const userId of users) {
    const response = await t.app.inject({
      url: `/api/users/${userId}/feed?limit=100`,
      headers: t.asUser(userId),
    });
    const page = response.json() as { items: { title: string }[]; unread: number };
    assert.deepEqual(
      page.items.map((item: { title: string }) => Number(item.title.slice(5))),
      Array.from({ length: PER_USER }, (_, n) => PER_USER - 1 - n),
    );
    assert.equal(page.unread, PER_USER);
  }
  const { rows: duplicates } = await sql<{ n: number }>`select count(*)::int as n from (
      select notification_id from notify_feed group by notification_id having count(*) > 1) d`.execute(db);
  assert.equal(duplicates[0].n, 0);
  await eventually(async () => {
    const { rows } = await sql<{ status: string; n: number }>`select status, count(*)::int as n
      from notification_deliveries group by status`.execute(db);
    return rows.length === 1 && rows[0].status === 'sent' && rows[0].n === TOTAL;
  }, 60_000);
  context.diagnostic(
    `${realServices.natsUrl ? 'JetStream' : 'PostgreSQL queue'}: ${atKill} stored before the kill; all ${TOTAL} stored and streamed in ${elapsed} ms`,
  );
});
