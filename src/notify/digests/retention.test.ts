import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { type NotifyTestApp, notifyTestApp } from '../../../test/support/notify.ts';
import { metricValue } from '../../../test/support/platform.ts';
import { createTestClock } from '../../platform/clock.ts';
import { digestRetention } from './retention.ts';

/**
 * The retention of digest windows (README, "Retention"): on a moved clock, `notify.retention`
 * removes windows whose message was stored longer ago than NOTIFY_RETENTION (30 days), and keeps
 * recent ones, open ones and closed ones whose message is not stored yet, however old.
 */
const DAY = 86_400_000;
const MINUTE = 60_000;

let t: NotifyTestApp;
before(async () => {
  t = await notifyTestApp({ clock: createTestClock(new Date()) });
  const put = await t.inject({
    method: 'PUT',
    url: '/api/notification-types/digest/digest',
    payload: { every: '10m' },
  });
  assert.equal(put.statusCode, 200, put.body);
});
after(() => t?.close());

async function user() {
  const userId = `dr-${randomUUID().slice(0, 8)}`;
  await t.setPreferences(userId, { email: `${userId}@example.com` });
  return userId;
}
async function event(userId: string) {
  const response = await t.send({ user_id: userId, type: 'digest', channels: ['email'], data: { items: 1 } });
  assert.equal(response.json().channels[0].status, 'digested', response.body);
}
const flush = () => t.app.platform.scheduler.runTick('notify.digests', t.clock.now());
const db = () => t.adapters.database.db;
const windowsOf = async (userId: string) =>
  (
    await sql<{ status: string }>`select status from notify_digests where user_id = ${userId}`.execute(db())
  ).rows.map((row) => row.status);
const itemsOf = async (userId: string) =>
  (
    await sql<{ n: number }>`select count(*)::int as n from notify_digest_items i
      join notify_digests d on d.id = i.digest_id where d.user_id = ${userId}`.execute(db())
  ).rows[0].n;

test('windows sent more than 30 days ago go; recent, open and unsent ones stay', async () => {
  const [old, stuck, stale, recent, open] = [
    await user(),
    await user(),
    await user(),
    await user(),
    await user(),
  ];
  await event(old);
  await event(stuck);
  t.clock.advance(11 * MINUTE);
  await flush();
  assert.deepEqual(await windowsOf(old), ['sent']);
  t.clock.advance(31 * DAY);
  await event(recent);
  t.clock.advance(11 * MINUTE);
  await flush();
  await event(open);
  assert.deepEqual(await windowsOf(recent), ['sent']);

  // An open window nobody flushed (past its end a month ago).
  await event(stale);
  await sql`update notify_digests set created_at = created_at - interval '31 days',
    flush_at = flush_at - interval '31 days' where user_id = ${stale}`.execute(db());
  // A window closed a month ago whose message is not stored yet (its template fails, say).
  await sql`update notify_digests set status = 'closed' where user_id = ${stuck}`.execute(db());
  assert.equal(await t.app.platform.scheduler.runTick('notify.retention', t.clock.now()), true);

  assert.deepEqual(await windowsOf(old), [], 'sent 31 days ago');
  assert.deepEqual(await windowsOf(recent), ['sent']);
  assert.deepEqual(await windowsOf(stuck), ['closed']);
  assert.deepEqual(await windowsOf(stale), ['open']);
  assert.deepEqual(await windowsOf(open), ['open']);
  assert.equal(await itemsOf(stale), 1, 'an open window keeps its events');
  assert.equal(await itemsOf(open), 1);
  assert.equal(await metricValue(t.app, 'retention_rows_removed_total', 'table="notify_digests"'), 1);
  assert.equal(await metricValue(t.app, 'retention_lag_seconds', 'table="notify_digests"'), 0);
});

test('batches go oldest first, a window each here, with the items a window still holds', async () => {
  await sql`delete from notify_digests`.execute(db()); // the first test's windows
  const users = [await user(), await user(), await user()];
  for (const userId of users) {
    await event(userId);
    t.clock.advance(11 * MINUTE);
    await flush();
  }
  // An item left behind (a window is removed with whatever it holds).
  await sql`insert into notify_digest_items (digest_id, notification_id, data, created_at)
    select id, ${randomUUID()}, '{}'::jsonb, closed_at from notify_digests where user_id = ${users[0]}`.execute(
    db(),
  );
  t.clock.advance(31 * DAY);
  const policy = digestRetention(t.adapters.database.db, 30 * DAY, t.clock);
  const cutoff = new Date(t.clock.now().getTime() - 30 * DAY);
  const first = await sql<{ closed_at: Date }>`select closed_at from notify_digests
    where user_id = ${users[0]}`.execute(db());
  assert.equal((await policy.oldest())?.getTime(), first.rows[0].closed_at.getTime());
  for (const [index, userId] of users.entries()) {
    assert.equal(await policy.removeBatch(cutoff, 1), 1);
    assert.deepEqual(await windowsOf(userId), [], `batch ${index + 1} took the oldest left`);
  }
  assert.equal(await itemsOf(users[0]), 0);
  assert.equal(await policy.removeBatch(cutoff, 1), 0);
  assert.equal(await policy.oldest(), undefined);
});
