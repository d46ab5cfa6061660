import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { eventually } from '../../../test/support/notify.ts';
import { createTestApp, type TestApp } from '../../../test/support/platform.ts';
import { sseEvents } from '../../../test/support/sse-reader.ts';
import { type App, buildApp } from '../../app.ts';
import { createFeedProvider, safeLink } from '../providers/feed.ts';
import { createFeedRepository } from './repository.ts';

// The real notify module (templates, workers, the feed provider) and a second API "process" on the
// same database, queue and pub/sub, which serves the live streams: an item stored by a worker must
// reach a stream held by another process.
let t: TestApp;
let other: App;
let otherUrl: string;

before(async () => {
  t = await createTestApp({
    services: ['notify'],
    workers: true,
    env: { NOTIFY_LIMIT_IN_APP_PER_HOUR: '30', NOTIFY_FEED_POLL_MS: '60000' },
  });
  other = await buildApp(t.config, t.adapters, { logger: false });
  await other.listen({ port: 0, host: '127.0.0.1' });
  otherUrl = `http://127.0.0.1:${(other.server.address() as { port: number }).port}`;
  const template = await t.app.inject({
    method: 'POST',
    url: '/api/templates',
    headers: t.asAdmin,
    payload: {
      id: 'feedtest.in_app',
      subject: 'Hello {{ n }}',
      body: 'Item {{ n }}',
      link: '/things/{{ n }}',
    },
  });
  assert.equal(template.statusCode, 201, template.body);
  const email = await t.app.inject({
    method: 'POST',
    url: '/api/templates',
    headers: t.asAdmin,
    payload: { id: 'feedtest.email', subject: 'Hello {{ n }}', body: 'Item {{ n }}' },
  });
  assert.equal(email.statusCode, 201, email.body);
});
after(async () => {
  await other.close();
  await t.close();
});

const newUser = () => `f-${randomUUID().slice(0, 8)}`;

async function send(userId: string, n: number | string, channels = ['in_app']) {
  const response = await t.app.inject({
    method: 'POST',
    url: '/api/notifications',
    headers: t.asService,
    payload: { user_id: userId, type: 'feedtest', channels, data: { n } },
  });
  assert.equal(response.statusCode, 202, response.body);
  return response.json() as { id: string; channels: { channel: string; status: string; reason?: string }[] };
}

const feed = async (userId: string, query = '') => {
  const response = await t.app.inject({
    url: `/api/users/${userId}/feed${query}`,
    headers: t.asUser(userId),
  });
  assert.equal(response.statusCode, 200, response.body);
  return response.json() as {
    items: {
      id: string;
      title: string;
      body: string;
      link: string | null;
      read_at: string | null;
      event_id: string;
    }[];
    next_cursor: string | null;
    unread: number;
    last_event_id: string;
  };
};

const waitForItems = (userId: string, count: number) =>
  eventually(async () => {
    const page = await feed(userId, '?limit=100');
    return page.items.length >= count ? page : undefined;
  });

describe('the in-app channel', () => {
  test('a notification becomes a feed item rendered from the in_app template, once', async () => {
    const userId = newUser();
    const accepted = await send(userId, 7, ['in_app', 'email']);
    assert.deepEqual(
      accepted.channels.map((c) => [c.channel, c.status]),
      [
        ['in_app', 'queued'],
        ['email', 'skipped'],
      ],
    );
    const page = await waitForItems(userId, 1);
    assert.equal(page.items[0].id, accepted.id);
    assert.equal(page.items[0].title, 'Hello 7');
    assert.equal(page.items[0].body, 'Item 7');
    assert.equal(page.items[0].link, '/things/7');
    assert.equal(page.unread, 1);
    const status = await t.app.inject({ url: `/api/notifications/${accepted.id}`, headers: t.asAdmin });
    const inApp = status.json().channels.find((c: { channel: string }) => c.channel === 'in_app');
    await eventually(async () => {
      const view = (
        await t.app.inject({ url: `/api/notifications/${accepted.id}`, headers: t.asAdmin })
      ).json();
      return view.channels.find((c: { channel: string }) => c.channel === 'in_app').status === 'sent';
    });
    assert.ok(inApp);

    // A redelivered message (after a crash between the feed write and the `sent` record) stores nothing more.
    const provider = createFeedProvider({
      repo: createFeedRepository(t.adapters.database.db),
      clock: t.clock,
    });
    const message = {
      deliveryId: `${accepted.id}:in_app`,
      notificationId: accepted.id,
      channel: 'in_app' as const,
      type: 'feedtest',
      recipient: { userId },
      message: { subject: 'Hello 7', text: 'Item 7', link: '/things/7' },
    };
    const first = await provider.send(message);
    const second = await provider.send(message);
    assert.deepEqual(first, second);
    assert.equal((await feed(userId)).items.length, 1);
  });

  test('preferences: the channel can be switched off; quiet hours do not hold the feed back; limits apply', async () => {
    const off = newUser();
    await t.app.inject({
      method: 'PATCH',
      url: `/api/users/${off}/notification-preferences`,
      headers: t.asUser(off),
      payload: { in_app_enabled: false },
    });
    const skipped = await send(off, 1);
    assert.deepEqual(skipped.channels, [
      { channel: 'in_app', status: 'skipped', reason: 'channel_disabled' },
    ]);

    const night = newUser();
    // Quiet all day long but one minute: the push is held, the feed item is not.
    const now = t.clock.now();
    const hhmm = (d: Date) => d.toISOString().slice(11, 16);
    await t.app.inject({
      method: 'PATCH',
      url: `/api/users/${night}/notification-preferences`,
      headers: t.asUser(night),
      payload: { quiet_hours_start: hhmm(now), quiet_hours_end: hhmm(new Date(now.getTime() - 60_000)) },
    });
    const quiet = await send(night, 2);
    assert.equal(quiet.channels[0].status, 'queued');
    await waitForItems(night, 1);

    const busy = newUser();
    for (let i = 0; i < 30; i++) await send(busy, i);
    const refused = await t.app.inject({
      method: 'POST',
      url: '/api/notifications',
      headers: t.asService,
      payload: { user_id: busy, type: 'feedtest', channels: ['in_app'], data: { n: 31 } },
    });
    assert.equal(refused.statusCode, 429, refused.body);
    assert.equal(refused.json().code, 'notifications_rate_limited');
  });

  test('keyset pages newest first; an opaque cursor; a foreign one is 400', async () => {
    const userId = newUser();
    for (let n = 1; n <= 5; n++) await send(userId, n);
    await waitForItems(userId, 5);
    const first = await feed(userId, '?limit=2');
    assert.deepEqual(
      first.items.map((i) => i.title),
      ['Hello 5', 'Hello 4'],
    );
    assert.ok(first.next_cursor && !/^[0-9]+$/.test(first.next_cursor));
    const second = await feed(userId, `?limit=2&cursor=${first.next_cursor}`);
    assert.deepEqual(
      second.items.map((i) => i.title),
      ['Hello 3', 'Hello 2'],
    );
    const third = await feed(userId, `?limit=2&cursor=${second.next_cursor}`);
    assert.deepEqual(
      third.items.map((i) => i.title),
      ['Hello 1'],
    );
    assert.equal(third.next_cursor, null);
    const bad = await t.app.inject({
      url: `/api/users/${userId}/feed?cursor=MTIz`,
      headers: t.asUser(userId),
    });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().code, 'invalid_cursor');
  });

  test('read, seen and archived, one item and "all up to"; unread counts follow; others get 404', async () => {
    const userId = newUser();
    for (let n = 1; n <= 4; n++) await send(userId, n);
    const page = await waitForItems(userId, 4);
    const [newest, third, second] = page.items;
    const as = t.asUser(userId);
    const read = await t.app.inject({
      method: 'PATCH',
      url: `/api/users/${userId}/feed/${newest.id}`,
      headers: as,
      payload: { read: true },
    });
    assert.equal(read.statusCode, 200, read.body);
    assert.equal(read.json().unread, 3);
    assert.ok(read.json().item.read_at && read.json().item.seen_at);

    const upTo = await t.app.inject({
      method: 'POST',
      url: `/api/users/${userId}/feed/mark`,
      headers: as,
      payload: { up_to: second.id, mark: 'read' },
    });
    assert.deepEqual(upTo.json(), { updated: 2, unread: 1 });
    const unread = await t.app.inject({ url: `/api/users/${userId}/feed/unread`, headers: as });
    assert.equal(unread.json().unread, 1);
    assert.equal((await feed(userId, '?filter=unread')).items[0].id, third.id);

    const archived = await t.app.inject({
      method: 'PATCH',
      url: `/api/users/${userId}/feed/${third.id}`,
      headers: as,
      payload: { archived: true },
    });
    assert.equal(archived.json().unread, 0);
    assert.deepEqual(
      (await feed(userId, '?filter=archived')).items.map((i) => i.id),
      [third.id],
    );
    assert.equal((await feed(userId)).items.length, 3);

    // Another user's token: 404, as if the feed did not exist, and nothing changed.
    const stranger = t.asUser(newUser());
    for (const request of [
      { url: `/api/users/${userId}/feed`, headers: stranger },
      { url: `/api/users/${userId}/feed/unread`, headers: stranger },
      {
        method: 'PATCH' as const,
        url: `/api/users/${userId}/feed/${second.id}`,
        headers: stranger,
        payload: { read: false },
      },
    ]) {
      assert.equal((await t.app.inject(request)).statusCode, 404, request.url);
    }
    // Someone else's item through one's own feed: 404 too.
    const mine = newUser();
    const foreign = await t.app.inject({
      method: 'PATCH',
      url: `/api/users/${mine}/feed/${second.id}`,
      headers: t.asUser(mine),
      payload: { read: false },
    });
    assert.equal(foreign.statusCode, 404);
    assert.equal(foreign.json().code, 'feed_item_not_found');
    const invalid = await t.app.inject({
      method: 'PATCH',
      url: `/api/users/${userId}/feed/${second.id}`,
      headers: as,
      payload: { read: 'yes' },
    });
    assert.equal(invalid.statusCode, 400);
    assert.ok((await feed(userId)).items.find((i) => i.id === second.id)?.read_at);
    // A service with notify:contacts and an admin may read it.
    for (const headers of [t.asService, t.asAdmin]) {
      const response = await t.app.inject({ url: `/api/users/${userId}/feed`, headers });
      assert.equal(response.statusCode, 200);
    }
  });

  test('live: items in order over SSE from another process, state changes, Last-Event-ID resumes', async () => {
    const userId = newUser();
    const headers = t.asUser(userId);
    const response = await fetch(`${otherUrl}/api/users/${userId}/feed/events`, { headers });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    const events = sseEvents(response);
    assert.equal((await events.until<{ unread: number }>('unread')).unread, 0);
    for (let n = 1; n <= 3; n++) await send(userId, n);
    const seen: { title: string; event_id: string }[] = [];
    while (seen.length < 3) seen.push(await events.until<{ title: string; event_id: string }>('item'));
    assert.deepEqual(
      seen.map((item) => item.title),
      ['Hello 1', 'Hello 2', 'Hello 3'],
    );
    const page = await feed(userId);
    await t.app.inject({
      method: 'POST',
      url: `/api/users/${userId}/feed/mark`,
      headers,
      payload: { up_to: page.items[0].id, mark: 'read' },
    });
    const state = await events.until<{ up_to: string; mark: string; unread: number }>('state');
    assert.deepEqual(state, { up_to: page.items[0].id, mark: 'read', unread: 0 });
    await events.cancel();

    // Reconnecting after the first item: the two after it, in order, and nothing else.
    const resumed = await fetch(`${otherUrl}/api/users/${userId}/feed/events`, {
      headers: { ...headers, 'last-event-id': seen[0].event_id },
    });
    const again = sseEvents(resumed);
    const first = await again.next();
    const second = await again.next();
    assert.deepEqual(
      [first.event, first.id, second.event, second.id],
      ['item', seen[1].event_id, 'item', seen[2].event_id],
    );
    await again.cancel();

    const stranger = await fetch(`${otherUrl}/api/users/${userId}/feed/events`, {
      headers: t.asUser(newUser()),
    });
    assert.equal(stranger.status, 404);
    const bad = await fetch(`${otherUrl}/api/users/${userId}/feed/events`, {
      headers: { ...headers, 'last-event-id': 'x' },
    });
    assert.equal(bad.status, 400);
  });

  test('links: a path on this site or https only', () => {
    assert.equal(safeLink('/bookings/1'), '/bookings/1');
    assert.equal(safeLink('https://example.com/x'), 'https://example.com/x');
    for (const link of [
      'javascript:alert(1)',
      '//evil.example',
      '/\\evil.example',
      'http://example.com',
      'data:x',
    ]) {
      assert.equal(safeLink(link), null, link);
    }
  });
});
