import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually, type NotifyTestApp, notifyTestApp } from '../../../test/support/notify.ts';
import { realServices, uniqueName } from '../../../test/support/platform.ts';
import { createTestClock } from '../../platform/clock.ts';
import { createDigestRepository } from './repository.ts';
import { flushAtOf } from './service.ts';

/**
 * Digests: a digestible type's events for one user, type and channel inside a window become one
 * message whose data carries them as `items`, on a moved clock with the app's workers and the
 * `notify.digests` job as the scheduler runs it. (`digest` is a fake type whose templates need `items`.)
 */
let t: NotifyTestApp;
before(async () => {
  t = await notifyTestApp({ workers: true });
});
after(() => t.close());

const MINUTE = 60_000;

async function user(app: NotifyTestApp = t) {
  const userId = `d-${randomUUID().slice(0, 8)}`;
  await app.setPreferences(userId, { email: `${userId}@example.com` });
  return userId;
}
const setDigest = (type: string, body: Record<string, unknown>, app: NotifyTestApp = t) =>
  app.inject({ method: 'PUT', url: `/api/notification-types/${type}/digest`, payload: body });
const event = (userId: string, n: number, app: NotifyTestApp = t) =>
  app.send({ user_id: userId, type: 'digest', channels: ['email'], data: { items: n } });
const flush = (app: NotifyTestApp = t) =>
  app.app.platform.scheduler.runTick('notify.digests', app.clock.now());
/** The messages the fake provider got for a user, with the data the digest carried. */
const digestsTo = (userId: string, apps: NotifyTestApp[] = [t]) =>
  apps
    .flatMap((app) => app.provider.sent)
    .filter((m) => m.recipient.userId === userId)
    .map((m) => JSON.parse(m.message.text.slice('digest '.length, m.message.text.lastIndexOf(' @'))));

describe('the digest settings API', () => {
  test('PUT, GET, list and DELETE a type’s window; bad windows are 422/400 and change nothing', async () => {
    const put = await setDigest('weekly_news', { every: '10m' });
    assert.equal(put.statusCode, 200, put.body);
    assert.deepEqual(put.json(), { type: 'weekly_news', every_seconds: 600, daily_at: null });
    const daily = await setDigest('weekly_news', { daily_at: '09:00' });
    assert.deepEqual(daily.json(), { type: 'weekly_news', every_seconds: null, daily_at: '09:00' });
    for (const body of [{}, { every: '10m', daily_at: '09:00' }, { every: '10s' }, { every: '8d' }]) {
      const bad = await setDigest('weekly_news', body);
      assert.equal(bad.statusCode, 422, `${JSON.stringify(body)}: ${bad.body}`);
      assert.equal(bad.json().code, 'invalid_digest');
    }
    for (const body of [{ daily_at: '9:00' }, { daily_at: '24:00' }, { every: 'soon' }, { window: '1h' }]) {
      assert.equal((await setDigest('weekly_news', body)).statusCode, 400, JSON.stringify(body));
    }
    const got = await t.inject('/api/notification-types/weekly_news/digest');
    assert.deepEqual(got.json(), { type: 'weekly_news', every_seconds: null, daily_at: '09:00' });
    const listed = (await t.inject('/api/notification-types/digests')).json().digests;
    assert.ok(listed.some((d: { type: string }) => d.type === 'weekly_news'));
    assert.equal(
      (await t.inject({ method: 'DELETE', url: '/api/notification-types/weekly_news/digest' })).statusCode,
      204,
    );
    const gone = await t.inject('/api/notification-types/weekly_news/digest');
    assert.equal(gone.statusCode, 404);
    assert.equal(gone.json().code, 'digest_not_found');
    const asService = await t.app.inject({
      method: 'PUT',
      url: '/api/notification-types/x/digest',
      headers: t.asService,
      payload: { every: '1h' },
    });
    assert.equal(asService.statusCode, 401, 'only admins write digest settings');
  });

  test('daily_at: the next such local time in the user’s zone', () => {
    const setting = { type: 'x', every_seconds: null, daily_at: '09:00' };
    const now = new Date('2026-11-27T10:15:30Z');
    // Berlin is UTC+1 in November: 11:15 local, so the next 09:00 is tomorrow, 08:00 UTC.
    assert.equal(flushAtOf(setting, now, 'Europe/Berlin').toISOString(), '2026-11-28T08:00:00.000Z');
    // Kolkata is UTC+5:30: 15:45 local, next 09:00 is 03:30 UTC tomorrow.
    assert.equal(flushAtOf(setting, now, 'Asia/Kolkata').toISOString(), '2026-11-28T03:30:00.000Z');
    // New York is UTC-5: 05:15 local, 09:00 is today at 14:00 UTC.
    assert.equal(flushAtOf(setting, now, 'America/New_York').toISOString(), '2026-11-27T14:00:00.000Z');
    assert.equal(
      flushAtOf({ ...setting, every_seconds: 600, daily_at: null }, now, 'UTC').toISOString(),
      '2026-11-27T10:25:30.000Z',
    );
  });
});

describe('a burst inside a window', () => {
  test('100 events per user become exactly one message per user, with the 100 as items', async () => {
    assert.equal((await setDigest('digest', { every: '10m' })).statusCode, 200);
    const users = [await user(), await user(), await user()];
    const outcomes = await Promise.all(
      users.flatMap((userId) => Array.from({ length: 100 }, (_, n) => event(userId, n))),
    );
    for (const response of outcomes) {
      assert.equal(response.statusCode, 202, response.body);
      assert.deepEqual(response.json().channels, [
        { channel: 'email', status: 'digested', reason: 'digest' },
      ]);
    }
    const limits = (await t.inject(`/api/users/${users[0]}/notification-limits`)).json();
    const email = limits.limits.find((l: { channel: string }) => l.channel === 'email');
    assert.equal(email.remaining, email.limit, 'the events spend no sends; the digest spends one');

    t.clock.advance(10 * MINUTE - 1000);
    await flush();
    await t.publishDue();
    await sleep(300);
    for (const userId of users) assert.deepEqual(digestsTo(userId), [], 'the window is still open');

    t.clock.advance(1000);
    // Two runs at once, as two instances would run them: SKIP LOCKED and the digest's client id.
    await Promise.all([flush(), flush()]);
    for (const userId of users) {
      await eventually(async () => digestsTo(userId).length === 1);
    }
    await flush();
    await sleep(300);
    for (const userId of users) {
      const [digest] = digestsTo(userId);
      assert.equal(digestsTo(userId).length, 1, 'exactly one message');
      assert.equal(digest.count, 100);
      assert.deepEqual(
        digest.items.map((item: { items: number }) => item.items).sort((a: number, b: number) => a - b),
        Array.from({ length: 100 }, (_, n) => n),
      );
    }
    const history = (await t.inject(`/api/users/${users[0]}/notifications?limit=100`)).json().notifications;
    const statuses = history.map((n: { data: { count?: number }; channels: { status: string }[] }) =>
      n.data.count === undefined ? n.channels[0].status : 'the digest',
    );
    assert.equal(
      statuses.filter((s: string) => s === 'digested').length,
      99,
      'the 99 newest events on this page',
    );
    assert.ok(statuses.includes('the digest'));

    // The next event opens a new window.
    const later = await event(users[0], 100);
    assert.equal(later.json().channels[0].status, 'digested');
    t.clock.advance(10 * MINUTE);
    await flush();
    await eventually(async () => digestsTo(users[0]).length === 2);
    assert.deepEqual(digestsTo(users[0])[1].items, [{ items: 100 }]);
  });

  test('a window closed by a process that stopped before storing its message is sent once, a minute later', async () => {
    assert.equal((await setDigest('digest', { every: '10m' })).statusCode, 200);
    const userId = await user();
    for (let n = 0; n < 3; n++) assert.equal((await event(userId, n)).json().channels[0].status, 'digested');
    t.clock.advance(10 * MINUTE);
    // What a process does before it dies: it closed the window, and stored no message.
    const closed = await createDigestRepository(t.adapters.database.db).closeDue(t.clock.now(), 500);
    assert.ok(closed.some((w) => w.user_id === userId));
    await flush();
    await sleep(300);
    assert.deepEqual(digestsTo(userId), [], 'another process may still be storing it');
    t.clock.advance(MINUTE);
    await Promise.all([flush(), flush()]);
    await eventually(async () => digestsTo(userId).length === 1);
    t.clock.advance(MINUTE);
    await flush();
    await sleep(300);
    assert.equal(digestsTo(userId).length, 1);
    assert.equal(digestsTo(userId)[0].count, 3);
  });

  test('a type that is not digestible is sent event by event (the negative control)', async () => {
    assert.equal(
      (await t.inject({ method: 'DELETE', url: '/api/notification-types/digest/digest' })).statusCode,
      204,
    );
    const userId = await user();
    for (let n = 0; n < 3; n++) assert.equal((await event(userId, n)).json().channels[0].status, 'queued');
    await eventually(async () => digestsTo(userId).length === 3);
  });
});

describe('two instances on one database, one stopped inside the window', () => {
  const skip = realServices.databaseUrl
    ? false
    : 'PGlite is one process’s database; set TEST_DATABASE_URL (and NATS_URL) for two instances';
  let one: NotifyTestApp;
  let two: NotifyTestApp;
  before(async () => {
    if (skip) return;
    const clock = createTestClock();
    // One namespace: one schema, one set of streams and keys, as two deployed processes share them.
    // The suite's other files share the PostgreSQL server, and under the whole suite this burst was
    // answered 503 (a connection the server or the pool could not give in time). Eight connections
    // each and a long wait for a free one: the race on the window is what is tested, not shedding.
    const env = { NAMESPACE: uniqueName('dg'), DATABASE_POOL_SIZE: '8', DATABASE_POOL_WAIT_MS: '60000' };
    one = await notifyTestApp({ workers: true, clock, env });
    two = await notifyTestApp({ workers: true, clock, env });
  });
  after(async () => {
    if (skip) return;
    await two.close();
    await one.adapters.close();
  });

  test('a burst through both makes one message per user, the survivor flushing the window', {
    skip,
  }, async () => {
    assert.equal((await setDigest('digest', { every: '10m' }, one)).statusCode, 200);
    // The other instance's copy of the settings is refreshed within 5 s.
    await sleep(5_500);
    const users = [await user(one), await user(one)];
    // Waves of 20 at once, half through each instance: both race on each user's window, and a
    // loaded CI machine is not asked for 200 statements waiting on two rows at the same time.
    const sends = users.flatMap((userId) =>
      Array.from({ length: 100 }, (_, n) => () => event(userId, n, n % 2 ? one : two)),
    );
    const outcomes = [];
    for (let i = 0; i < sends.length; i += 20) {
      outcomes.push(...(await Promise.all(sends.slice(i, i + 20).map((send) => send()))));
    }
    for (const response of outcomes)
      assert.equal(
        response.json().channels?.[0]?.status,
        'digested',
        `${response.statusCode} ${response.body}`,
      );
    // The first instance stops inside the window (its workers, jobs and HTTP; the schema stays).
    await one.app.close();
    one.clock.advance(10 * MINUTE);
    await flush(two);
    for (const userId of users) await eventually(async () => digestsTo(userId, [one, two]).length === 1);
    await flush(two);
    await sleep(500);
    for (const userId of users) {
      const sent = digestsTo(userId, [one, two]);
      assert.equal(sent.length, 1, 'exactly one message');
      assert.equal(sent[0].count, 100);
    }
  });
});
