import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { type NotifyTestApp, notifyTestApp } from '../../../test/support/notify.ts';
import { metricValue } from '../../../test/support/platform.ts';
import { createTestClock } from '../../platform/clock.ts';
import { ConfigError } from '../../platform/config.ts';
import { loadNotifySettings } from '../settings.ts';
import { createFeedRepository, type FeedRepository } from './repository.ts';
import { feedRetention } from './retention.ts';

/**
 * The in-app feed's retention (README, "Retention"): on a moved clock, `notify.retention` removes
 * items older than NOTIFY_FEED_RETENTION (90 days) and archived ones NOTIFY_FEED_ARCHIVED_RETENTION
 * (30 days) after their archiving; what the user's feed and unread count show afterwards.
 */
const DAY = 86_400_000;

let t: NotifyTestApp;
let repo: FeedRepository;
before(async () => {
  t = await notifyTestApp({ clock: createTestClock(new Date('2026-01-01T09:00:00Z')) });
  repo = createFeedRepository(t.adapters.database.db);
});
after(() => t?.close());

const newUser = () => `fr-${randomUUID().slice(0, 8)}`;

/** An item as the feed provider stores it, arrived now (on the moved clock). */
async function item(userId: string, title: string): Promise<string> {
  const notificationId = randomUUID();
  await repo.store({ notificationId, userId, type: 't', title, body: title, link: null, at: t.clock.now() });
  return notificationId;
}

async function feed(userId: string, filter = 'active') {
  const response = await t.app.inject({
    url: `/api/users/${userId}/feed?filter=${filter}`,
    headers: t.asUser(userId),
  });
  assert.equal(response.statusCode, 200, response.body);
  const body = response.json() as { items: { title: string }[]; unread: number };
  return { titles: body.items.map((i) => i.title), unread: body.unread };
}

test('NOTIFY_FEED_RETENTION 90 days and NOTIFY_FEED_ARCHIVED_RETENTION 30 days by default; a bad value names its variable', () => {
  const settings = loadNotifySettings({});
  assert.equal(settings.feedRetentionMs, 90 * DAY);
  assert.equal(settings.feedArchivedRetentionMs, 30 * DAY);
  const short = loadNotifySettings({ NOTIFY_FEED_RETENTION: '12h', NOTIFY_FEED_ARCHIVED_RETENTION: '15m' });
  assert.deepEqual([short.feedRetentionMs, short.feedArchivedRetentionMs], [12 * 3600_000, 15 * 60_000]);
  for (const name of ['NOTIFY_FEED_RETENTION', 'NOTIFY_FEED_ARCHIVED_RETENTION']) {
    for (const value of ['90', '90 days', '10s', '0d']) {
      assert.throws(
        () => loadNotifySettings({ [name]: value }),
        (error: Error) => error instanceof ConfigError && error.message.includes(name),
        `${name}=${value}`,
      );
    }
  }
});

test('items older than 90 days go, read or not, archived ones 30 days after archiving; the unread count follows', async () => {
  const [ana, ben] = [newUser(), newUser()];
  await item(ana, 'old unread');
  const oldRead = await item(ana, 'old read');
  await repo.markOne(ana, oldRead, 'read', t.clock.now());
  await item(ben, 'ben old');
  t.clock.advance(2 * DAY);
  await item(ana, 'kept unread');
  const archivedLong = await item(ana, 'archived long ago');
  const archivedLately = await item(ana, 'archived lately');
  await item(ben, 'ben kept');
  t.clock.advance(58 * DAY);
  await repo.markOne(ana, archivedLong, 'archived', t.clock.now());
  t.clock.advance(2 * DAY);
  await repo.markOne(ana, archivedLately, 'archived', t.clock.now());
  t.clock.advance(29 * DAY);
  await item(ana, 'new');
  // 91 days after the first items; the archivings 31 and 29 days ago.
  assert.deepEqual(await feed(ana), { titles: ['new', 'kept unread', 'old read', 'old unread'], unread: 3 });

  assert.equal(await t.app.platform.scheduler.runTick('notify.retention', t.clock.now()), true);

  assert.deepEqual(await feed(ana), { titles: ['new', 'kept unread'], unread: 2 });
  assert.deepEqual((await feed(ana, 'archived')).titles, ['archived lately']);
  assert.deepEqual(await feed(ben), { titles: ['ben kept'], unread: 1 });
  const unread = await t.app.inject({ url: `/api/users/${ana}/feed/unread`, headers: t.asUser(ana) });
  assert.equal(unread.json().unread, 2);
  assert.equal(await metricValue(t.app, 'retention_rows_removed_total', 'table="notify_feed"'), 3);
  assert.equal(await metricValue(t.app, 'retention_rows_removed_total', 'table="notify_feed_archived"'), 1);
  assert.equal(await metricValue(t.app, 'retention_lag_seconds', 'table="notify_feed"'), 0);
});

test('batches are bounded and go oldest first', async () => {
  await sql`delete from notify_feed`.execute(t.adapters.database.db); // the test before's items
  const userId = newUser();
  const [policy] = feedRetention(t.adapters.database.db, {
    keepMs: 90 * DAY,
    archivedKeepMs: 30 * DAY,
    clock: t.clock,
  });
  for (const title of ['a', 'b', 'c']) {
    await item(userId, title);
    t.clock.advance(1000);
  }
  t.clock.advance(91 * DAY);
  const cutoff = new Date(t.clock.now().getTime() - 90 * DAY);
  assert.equal(await policy.removeBatch(cutoff, 2), 2);
  assert.deepEqual((await feed(userId)).titles, ['c']);
  assert.ok(await policy.oldest(), 'one left past its window');
  assert.equal(await policy.removeBatch(cutoff, 2), 1);
  assert.equal(await policy.removeBatch(cutoff, 2), 0);
  assert.deepEqual(await feed(userId), { titles: [], unread: 0 });
  assert.equal(await policy.oldest(), undefined);
});
