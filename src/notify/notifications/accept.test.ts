import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { type NotifyTestApp, notifyTestApp } from '../../../test/support/notify.ts';

let t: NotifyTestApp;
before(async () => {
  // Test users subscribe push endpoints at push.example.com, which has no DNS here.
  t = await notifyTestApp({ env: { OUTBOUND_ALLOW_HOSTS: 'push.example.com' } });
});
after(() => t.close());

const stored = async (table: string) =>
  (
    await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)}`.execute(
      t.adapters.database.db,
    )
  ).rows[0].n;

/** A user with an address on every channel. */
async function reachableUser(prefs: Record<string, unknown> = {}) {
  const userId = `u-${randomUUID().slice(0, 8)}`;
  await t.setPreferences(userId, { email: `${userId}@example.com`, phone: '+4915112345678', ...prefs });
  const sub = await t.inject({
    method: 'POST',
    url: `/api/users/${userId}/push-subscriptions`,
    payload: { endpoint: `https://push.example.com/${userId}`, keys: { p256dh: 'key', auth: 'auth' } },
  });
  assert.equal(sub.statusCode, 201, sub.body);
  return userId;
}

const order = (userId: string, channels: string[], extra: Record<string, unknown> = {}) => ({
  user_id: userId,
  type: 'order_update',
  channels,
  data: { order_id: 'o-1' },
  ...extra,
});

function assertProblem(response: Awaited<ReturnType<NotifyTestApp['send']>>, status: number, code: string) {
  assert.equal(response.statusCode, status, response.body);
  assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
  assert.equal(response.json().code, code, response.body);
  return response.json();
}

describe('POST /api/notifications', () => {
  test('202: queued per channel, stored with its deliveries, readable by id', async () => {
    t.clock.set('2026-01-05T12:00:00Z');
    const userId = await reachableUser();
    const response = await t.send(order(userId, ['push', 'sms', 'email']));
    assert.equal(response.statusCode, 202, response.body);
    const body = response.json();
    assert.match(body.id, /^[0-9a-f-]{36}$/);
    assert.deepEqual(body, {
      id: body.id,
      status: 'accepted',
      channels: [
        { channel: 'push', status: 'queued' },
        { channel: 'sms', status: 'queued' },
        { channel: 'email', status: 'queued' },
      ],
    });
    const status = (await t.inject(`/api/notifications/${body.id}`)).json();
    assert.deepEqual(
      status.channels.map((c: { channel: string; status: string }) => [c.channel, c.status]),
      [
        ['push', 'queued'],
        ['sms', 'queued'],
        ['email', 'queued'],
      ],
    );
    assert.equal(status.created_at, '2026-01-05T12:00:00.000Z');
    assert.equal((await t.inject(`/api/notifications/${randomUUID()}`)).statusCode, 404);
    assert.equal((await t.inject('/api/notifications/not-a-uuid')).statusCode, 404);
  });

  test('422 unknown_type, unknown_channel, missing_variables and 400s store nothing', async () => {
    const userId = await reachableUser();
    const before = [await stored('notifications'), await stored('notification_deliveries')];
    const unknownType = assertProblem(
      await t.send({ ...order(userId, ['email']), type: 'nope' }),
      422,
      'unknown_type',
    );
    assert.deepEqual(unknownType.channels, ['email']);
    // The problem's `type` stays the problem's; the notification type has a member of its own.
    assert.equal(unknownType.type, '/problems/unknown_type');
    assert.equal(unknownType.notification_type, 'nope');
    assertProblem(await t.send(order(userId, ['email', 'fax'])), 422, 'unknown_channel');
    const missing = assertProblem(
      await t.send({ ...order(userId, ['sms']), data: {} }),
      422,
      'missing_variables',
    );
    assert.deepEqual(missing.missing, ['order_id']);
    assertProblem(await t.send(order(userId, [])), 400, 'validation_failed');
    assertProblem(await t.send(order(userId, ['sms', 'sms'])), 400, 'validation_failed');
    assertProblem(
      await t.send({ ...order(userId, ['sms']), type: 'x'.repeat(21) }),
      400,
      'validation_failed',
    );
    assertProblem(await t.send({ ...order(userId, ['sms']), user_id: 'a b' }), 400, 'validation_failed');
    assert.deepEqual([await stored('notifications'), await stored('notification_deliveries')], before);
  });

  test('skipped: a channel turned off, no address, no push subscription; nothing is spent', async () => {
    const userId = `bare-${randomUUID().slice(0, 8)}`;
    await t.setPreferences(userId, { sms_enabled: false, email: 'a@example.com' });
    const response = await t.send(order(userId, ['push', 'sms', 'email']));
    assert.equal(response.statusCode, 202, response.body);
    assert.deepEqual(response.json().channels, [
      { channel: 'push', status: 'skipped', reason: 'no_address' },
      { channel: 'sms', status: 'skipped', reason: 'channel_disabled' },
      { channel: 'email', status: 'queued' },
    ]);
    const limits = (await t.inject(`/api/users/${userId}/notification-limits`)).json().limits;
    assert.deepEqual(
      limits.map((l: { channel: string; remaining: number }) => [l.channel, l.remaining]),
      [
        ['push', 50],
        ['sms', 5],
        ['email', 9],
        ['in_app', 100],
      ],
    );
  });
});

describe('preferences read by the accept (cached per process)', () => {
  test('a change through the API is seen by the very next accept', async () => {
    const userId = `c-${randomUUID().slice(0, 8)}`;
    await t.setPreferences(userId, { email: `${userId}@example.com` });
    const outcome = async (channel: string) =>
      (await t.send(order(userId, [channel]))).json().channels[0] as { status: string; reason?: string };
    assert.equal((await outcome('email')).status, 'queued');
    assert.equal((await outcome('email')).status, 'queued');
    const patch = await t.inject({
      method: 'PATCH',
      url: `/api/users/${userId}/notification-preferences`,
      payload: { email_enabled: false },
    });
    assert.equal(patch.statusCode, 200, patch.body);
    assert.deepEqual(await outcome('email'), {
      channel: 'email',
      status: 'skipped',
      reason: 'channel_disabled',
    });
    assert.equal((await outcome('push')).reason, 'no_address');
    const sub = await t.inject({
      method: 'POST',
      url: `/api/users/${userId}/push-subscriptions`,
      payload: { endpoint: `https://push.example.com/${userId}`, keys: { p256dh: 'key', auth: 'auth' } },
    });
    assert.equal(sub.statusCode, 201, sub.body);
    assert.equal((await outcome('push')).status, 'queued');
    assert.equal((await outcome('sms')).reason, 'no_address');
    const api = t.app.platform.modules.get('notify')?.api as import('../api.ts').NotifyApi;
    await api.setContact(userId, { phone: '+4915112345678' });
    assert.equal((await outcome('sms')).status, 'queued');
  });
});

describe('limits per user and channel', () => {
  test('push: the 50th in an hour goes, the 51st is rate_limited, the next hour opens a new window', async () => {
    t.clock.set('2026-01-05T12:10:00Z');
    const userId = await reachableUser();
    for (let i = 1; i <= 50; i++) {
      const response = await t.send(order(userId, ['push', 'email'].slice(0, i <= 10 ? 2 : 1)));
      assert.equal(response.statusCode, 202, `push #${i}: ${response.body}`);
      assert.equal(response.json().channels[0].status, 'queued', `push #${i}`);
    }
    const limited = await t.send(order(userId, ['push', 'email']));
    assertProblem(limited, 429, 'notifications_rate_limited');
    assert.equal(limited.headers['retry-after'], String(50 * 60), 'until 13:00 UTC');
    assert.deepEqual(limited.json().channels, [
      { channel: 'push', status: 'rate_limited', retry_after: 3000 },
      { channel: 'email', status: 'rate_limited', retry_after: 42_600 },
    ]);
    t.clock.set('2026-01-05T13:00:00Z');
    const next = await t.send(order(userId, ['push']));
    assert.equal(next.statusCode, 202, next.body);
    assert.equal(next.json().channels[0].status, 'queued');
  });

  test('sms 5 a day and email 10 a day; one channel limited still answers 202 for the other', async () => {
    t.clock.set('2026-01-06T08:00:00Z');
    const userId = await reachableUser();
    for (let i = 1; i <= 5; i++) {
      assert.equal((await t.send(order(userId, ['sms']))).statusCode, 202, `sms #${i}`);
    }
    const mixed = await t.send(order(userId, ['sms', 'email']));
    assert.equal(mixed.statusCode, 202, mixed.body);
    assert.deepEqual(mixed.json().channels, [
      { channel: 'sms', status: 'rate_limited', retry_after: 16 * 3600 },
      { channel: 'email', status: 'queued' },
    ]);
    for (let i = 2; i <= 10; i++) {
      assert.equal((await t.send(order(userId, ['email']))).statusCode, 202, `email #${i}`);
    }
    const before = await stored('notifications');
    assertProblem(await t.send(order(userId, ['email'])), 429, 'notifications_rate_limited');
    assert.equal(await stored('notifications'), before, 'a 429 stores nothing');
    const limits = (await t.inject(`/api/users/${userId}/notification-limits`)).json().limits;
    assert.deepEqual(limits[1], {
      channel: 'sms',
      limit: 5,
      window_seconds: 86_400,
      remaining: 0,
      reset_at: '2026-01-07T00:00:00.000Z',
    });
    t.clock.set('2026-01-07T00:00:01Z');
    assert.equal((await t.send(order(userId, ['sms', 'email']))).statusCode, 202);
  });
});

describe('quiet hours', () => {
  test('22:00-07:00 across midnight in Berlin and New York: push and sms wait, email goes, critical bypasses', async () => {
    // 23:30 in Berlin (22:30 UTC) is 17:30 in New York.
    t.clock.set('2026-01-07T22:30:00Z');
    const quiet = { quiet_hours_start: '22:00', quiet_hours_end: '07:00' };
    const berlin = await reachableUser({ ...quiet, timezone: 'Europe/Berlin' });
    const newYork = await reachableUser({ ...quiet, timezone: 'America/New_York' });
    const inBerlin = (await t.send(order(berlin, ['push', 'sms', 'email']))).json();
    assert.deepEqual(
      inBerlin.channels.map((c: { status: string }) => c.status),
      ['scheduled', 'scheduled', 'queued'],
    );
    const status = (await t.inject(`/api/notifications/${inBerlin.id}`)).json();
    assert.equal(status.channels[0].scheduled_for, '2026-01-08T06:00:00.000Z', '07:00 in Berlin');
    assert.equal(status.channels[0].reason, 'quiet_hours');
    const inNewYork = (await t.send(order(newYork, ['push', 'sms']))).json();
    assert.deepEqual(
      inNewYork.channels.map((c: { status: string }) => c.status),
      ['queued', 'queued'],
    );
    // 02:00 in New York (07:00 UTC) is after the Berlin quiet period.
    t.clock.set('2026-01-08T07:00:00Z');
    const nyNight = (await t.send(order(newYork, ['push']))).json();
    assert.equal(nyNight.channels[0].status, 'scheduled');
    const nyStatus = (await t.inject(`/api/notifications/${nyNight.id}`)).json();
    assert.equal(nyStatus.channels[0].scheduled_for, '2026-01-08T12:00:00.000Z', '07:00 in New York');
    assert.equal((await t.send(order(berlin, ['push']))).json().channels[0].status, 'queued');
    const critical = (await t.send({ ...order(newYork, ['push', 'sms']), priority: 'critical' })).json();
    assert.deepEqual(
      critical.channels.map((c: { status: string }) => c.status),
      ['queued', 'queued'],
    );
    const alert = await t.send({
      user_id: newYork,
      type: 'security_alert',
      channels: ['sms'],
      data: { message: 'x' },
    });
    assert.equal(alert.json().channels[0].status, 'queued', 'security alerts are critical by type');
  });
});

describe('idempotency', () => {
  test('the same id replays the first answer and stores once; another body with it is a 422', async () => {
    const userId = await reachableUser();
    const first = await t.send(order(userId, ['email'], { id: 'order-42:shipped' }));
    assert.equal(first.statusCode, 202);
    const before = await stored('notifications');
    const again = await t.send(order(userId, ['email'], { id: 'order-42:shipped' }));
    assert.equal(again.statusCode, 202);
    assert.deepEqual(again.json(), first.json());
    assert.equal(await stored('notifications'), before);
    assertProblem(
      await t.send({ ...order(userId, ['email'], { id: 'order-42:shipped' }), data: { order_id: 'o-2' } }),
      422,
      'idempotency_key_reused',
    );
    const limits = (await t.inject(`/api/users/${userId}/notification-limits`)).json().limits;
    assert.equal(limits[2].remaining, 9, 'a replay spends nothing');
    // After the 24 h window the id may be used again.
    t.clock.advance(24 * 3600_000 + 1000);
    const later = await t.send(order(userId, ['email'], { id: 'order-42:shipped' }));
    assert.notEqual(later.json().id, first.json().id);
  });

  test('a replay answers from the store when a new request would now be refused (limit spent, template gone)', async () => {
    const userId = await reachableUser();
    const first = await t.send(order(userId, ['sms'], { id: 'sms-1' }));
    assert.equal(first.json().status, 'accepted');
    for (let n = 2; n <= 5; n++)
      assert.equal((await t.send(order(userId, ['sms']))).json().status, 'accepted');
    assert.equal((await t.send(order(userId, ['sms']))).statusCode, 429);
    const again = await t.send(order(userId, ['sms'], { id: 'sms-1' }));
    assert.equal(again.statusCode, 202);
    assert.deepEqual(again.json(), first.json());
    const fresh = { ...order(userId, ['email'], { id: 'digest-1' }), type: 'digest', data: { items: 1 } };
    const digest = await t.send(fresh);
    assert.equal(digest.statusCode, 202, digest.body);
    // The same request with a variable the type needs left out is a 422 as a new request, yet
    // here it only differs in the hash, which the stored answer checks first.
    assertProblem(await t.send({ ...fresh, data: {} }), 422, 'idempotency_key_reused');
    assertProblem(await t.send({ ...fresh, id: 'digest-2', data: {} }), 422, 'missing_variables');
  });

  test('Idempotency-Key header: replayed byte for byte, a different body is a 422', async () => {
    const userId = await reachableUser();
    const headers = { 'idempotency-key': `k-${randomUUID()}` };
    const first = await t.send(order(userId, ['sms']), headers);
    assert.equal(first.statusCode, 202, first.body);
    const again = await t.send(order(userId, ['sms']), headers);
    assert.equal(again.body, first.body);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assertProblem(await t.send(order(userId, ['email']), headers), 422, 'idempotency_key_reused');
  });

  test('NotifyApi.send goes through the same use case; setContact keeps the other preferences', async () => {
    const api = t.app.platform.modules.get('notify')?.api as import('../api.ts').NotifyApi;
    const userId = `api-${randomUUID().slice(0, 8)}`;
    await t.setPreferences(userId, { sms_enabled: false, timezone: 'Asia/Kolkata' });
    await api.setContact(userId, { email: 'x@example.com', phone: '+919876543210' });
    await api.setContact(userId, { email: 'y@example.com' });
    const prefs = (await t.inject(`/api/users/${userId}/notification-preferences`)).json();
    assert.equal(prefs.sms_enabled, false);
    assert.equal(prefs.timezone, 'Asia/Kolkata');
    assert.equal(prefs.email, 'y@example.com');
    assert.equal(prefs.phone, '+919876543210');
    const request = {
      id: 'b:1',
      user_id: userId,
      type: 'order_update',
      channels: ['email' as const],
      data: { order_id: 1 },
    };
    const first = await api.send(request);
    assert.deepEqual(await api.send(request), first);
    await assert.rejects(api.send({ ...request, id: 'b:2', type: 'nope' }), { code: 'unknown_type' });
    // The HTTP door refuses NUL (platform input guards); the in-process API meets the same rule.
    for (const data of [{ order_id: 'a\u0000b' }, { order_id: 1, items: [{ 'k\u0000': 1 }] }]) {
      await assert.rejects(api.send({ ...request, id: 'b:3', data }), { code: 'validation_failed' });
    }
  });
});
