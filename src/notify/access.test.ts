import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { type NotifyTestApp, notifyTestApp } from '../../test/support/notify.ts';
import type { NotifyApi } from './api.ts';

/**
 * Who may call what (README, Security): sending is for services with `notify:send` and admins; a
 * user's contacts, preferences, push subscriptions, limits and history for that user, a service
 * with `notify:contacts` and admins; a notification's status also for its own user; templates
 * written by admins and read by services with `notify:templates`; dead letters and the dev inbox
 * for admins. (The console pages: pages/pages.test.ts.)
 */
const SENDER = { 'x-api-key': 'sender-key-0123456789' };
const OTHER_SENDER = { 'x-api-key': 'other-sender-key-0123456789' };
const CONTACTS = { 'x-api-key': 'contacts-key-0123456789' };
const READER = { 'x-api-key': 'reader-key-0123456789' };
const TEMPLATES = { 'x-api-key': 'templates-key-0123456789' };

let t: NotifyTestApp;
before(async () => {
  t = await notifyTestApp({
    env: {
      SERVICE_KEYS: [
        `mailer notify:send ${SENDER['x-api-key']}`,
        `billing notify:send ${OTHER_SENDER['x-api-key']}`,
        `crm notify:contacts ${CONTACTS['x-api-key']}`,
        `support notify:read ${READER['x-api-key']}`,
        `cms notify:templates ${TEMPLATES['x-api-key']}`,
      ].join('; '),
    },
  });
});
after(() => t.close());

const order = (userId: string) => ({
  user_id: userId,
  type: 'order_update',
  channels: ['email'],
  data: { order_id: 'o-1' },
});

describe('sending', () => {
  test('needs a service key with notify:send (or the admin key): nobody else can spend a user quota', async () => {
    const userId = randomUUID();
    await t.setPreferences(userId, { email: 'quota@example.com' });
    const send = (
      headers: Record<string, string>,
      url = '/api/notifications',
      payload: Record<string, unknown> = order(userId),
    ) => t.app.inject({ method: 'POST', url, headers, payload });
    const anonymous = await send({});
    assert.equal(anonymous.statusCode, 401);
    assert.equal(anonymous.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.equal((await send(t.asUser(userId))).statusCode, 401, "a user's own token cannot send");
    assert.equal((await send(CONTACTS)).statusCode, 403, 'a key without notify:send');
    assert.equal((await send({ 'x-api-key': 'a-guessed-key-123' })).statusCode, 401);
    assert.equal((await send(SENDER)).statusCode, 202);
    assert.equal((await send(t.asAdmin)).statusCode, 202);
    const batch = {
      type: 'order_update',
      channels: ['email'],
      user_ids: [userId],
      data: { order_id: 'o-2' },
    };
    assert.equal((await send({}, '/api/notifications/batch', batch)).statusCode, 401);
    assert.equal((await send(READER, '/api/notifications/batch', batch)).statusCode, 403);
    assert.equal((await send(SENDER, '/api/notifications/batch', batch)).statusCode, 202);
    const limits = await t.app.inject({ url: `/api/users/${userId}/notification-limits`, headers: CONTACTS });
    const email = limits.json().limits.find((limit: { channel: string }) => limit.channel === 'email');
    assert.equal(email.limit - email.remaining, 3, 'only the three accepted sends spent the quota');
  });
});

test('an Idempotency-Key belongs to the caller that sent it: another caller never gets its answer', async () => {
  const userId = randomUUID();
  await t.setPreferences(userId, { email: 'keys@example.com' });
  const send = (headers: Record<string, string>, orderId: string) =>
    t.app.inject({
      method: 'POST',
      url: '/api/notifications',
      headers: { ...headers, 'idempotency-key': 'order-42' },
      payload: { ...order(userId), data: { order_id: orderId } },
    });
  const first = await send(SENDER, 'o-1');
  assert.equal(first.statusCode, 202, first.body);
  const other = await send(t.asAdmin, 'o-2');
  assert.equal(other.statusCode, 202, other.body);
  assert.notEqual(other.json().id, first.json().id, "not the sender's stored answer");
  assert.equal((await send(SENDER, 'o-1')).json().id, first.json().id, "the sender's own replay");
});

describe("a user's own data", () => {
  const paths = (userId: string) => [
    ['GET', `/api/users/${userId}/notification-preferences`],
    ['PATCH', `/api/users/${userId}/notification-preferences`],
    ['PUT', `/api/users/${userId}/notification-preferences`],
    ['POST', `/api/users/${userId}/push-subscriptions`],
    ['DELETE', `/api/users/${userId}/push-subscriptions?endpoint=https%3A%2F%2Fpush.example.com%2Fx`],
    ['GET', `/api/users/${userId}/notification-limits`],
    ['GET', `/api/users/${userId}/notifications`],
  ];

  test('nobody without credentials, not another user, not a sender: e-mail, phone and push endpoints stay theirs', async () => {
    const victim = randomUUID();
    await t.setPreferences(victim, { email: 'victim@example.com', phone: '+15005550006' });
    for (const [method, url] of paths(victim)) {
      const call = (headers: Record<string, string>) =>
        t.app.inject({
          method: method as 'GET',
          url,
          headers,
          payload: method === 'GET' || method === 'DELETE' ? undefined : { email: 'attacker@example.com' },
        });
      assert.equal((await call({})).statusCode, 401, `${method} ${url} without credentials`);
      assert.equal((await call(t.asUser(randomUUID()))).statusCode, 404, `${method} ${url} by another user`);
      assert.equal((await call(SENDER)).statusCode, 403, `${method} ${url} by a key without notify:contacts`);
    }
    const stored = await t.app.inject({
      url: `/api/users/${victim}/notification-preferences`,
      headers: CONTACTS,
    });
    assert.equal(stored.json().email, 'victim@example.com', 'nothing was changed');
    const subscriptions = await t.app.inject({
      url: `/api/users/${victim}/notification-preferences`,
      headers: t.asUser(victim),
    });
    assert.equal(subscriptions.statusCode, 200, 'the user reads their own');
  });

  test('the user, a contacts service and an admin may change them', async () => {
    const userId = randomUUID();
    for (const headers of [t.asUser(userId), CONTACTS, t.asAdmin]) {
      const response = await t.app.inject({
        method: 'PATCH',
        url: `/api/users/${userId}/notification-preferences`,
        headers,
        payload: { email: `${Object.keys(headers)[0]}@example.com` },
      });
      assert.equal(response.statusCode, 200, response.body);
    }
  });
});

test("a notification's status: its own user, a service with notify:read, an admin; another user gets 404", async () => {
  const userId = randomUUID();
  await t.setPreferences(userId, { email: 'owner@example.com' });
  const accepted = await t.app.inject({
    method: 'POST',
    url: '/api/notifications',
    headers: SENDER,
    payload: order(userId),
  });
  const url = `/api/notifications/${accepted.json().id}`;
  assert.equal((await t.app.inject({ url })).statusCode, 401);
  assert.equal((await t.app.inject({ url, headers: t.asUser(userId) })).statusCode, 200);
  assert.equal((await t.app.inject({ url, headers: READER })).statusCode, 200);
  assert.equal((await t.app.inject({ url, headers: t.asAdmin })).statusCode, 200);
  const stranger = await t.app.inject({ url, headers: t.asUser(randomUUID()) });
  assert.equal(stranger.statusCode, 404);
  assert.equal(stranger.json().code, 'notification_not_found');
  assert.equal((await t.app.inject({ url, headers: SENDER })).statusCode, 403);
});

describe('cancelling: only the sender, or an admin', () => {
  /** A notification scheduled an hour ahead by `headers`' caller: pending until cancelled. */
  async function scheduled(headers: Record<string, string>) {
    const userId = randomUUID();
    await t.setPreferences(userId, { email: 'cancel@example.com' });
    const sendAt = new Date(t.clock.now().getTime() + 3600_000).toISOString();
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/notifications',
      headers,
      payload: { ...order(userId), id: 'pending-1', send_at: sendAt },
    });
    assert.equal(response.statusCode, 202, response.body);
    return { id: response.json().id as string, userId };
  }
  const cancel = (id: string, headers: Record<string, string>) =>
    t.app.inject({ method: 'DELETE', url: `/api/notifications/${id}`, headers });
  const statusOf = async (id: string) =>
    (await t.app.inject({ url: `/api/notifications/${id}`, headers: READER })).json().channels[0].status;

  test("another sender's notification answers 404 and stays pending; its own sender cancels it", async () => {
    const { id } = await scheduled(SENDER);
    const foreign = await cancel(id, OTHER_SENDER);
    assert.equal(foreign.statusCode, 404, foreign.body);
    assert.equal(foreign.json().code, 'notification_not_found', 'as an unknown id');
    assert.equal(await statusOf(id), 'scheduled');
    assert.equal((await cancel(id, SENDER)).statusCode, 204);
    assert.equal(await statusOf(id), 'cancelled');
    assert.equal((await cancel(id, OTHER_SENDER)).statusCode, 404, 'a cancelled one stays foreign too');
  });

  test("an admin cancels any sender's; a user, a key without notify:send and nobody cannot", async () => {
    const { id, userId } = await scheduled(OTHER_SENDER);
    assert.equal((await cancel(id, {})).statusCode, 401);
    assert.equal((await cancel(id, t.asUser(userId))).statusCode, 401, 'not even its recipient');
    assert.equal((await cancel(id, READER)).statusCode, 403);
    assert.equal(await statusOf(id), 'scheduled');
    assert.equal((await cancel(id, t.asAdmin)).statusCode, 204);
    assert.equal(await statusOf(id), 'cancelled');
  });

  test('a batch records its sender too', async () => {
    const userId = randomUUID();
    await t.setPreferences(userId, { email: 'batch-cancel@example.com' });
    const batch = await t.app.inject({
      method: 'POST',
      url: '/api/notifications/batch',
      headers: SENDER,
      payload: {
        type: 'order_update',
        channels: ['email'],
        user_ids: [userId],
        data: { order_id: 'o-3' },
        send_at: new Date(t.clock.now().getTime() + 3600_000).toISOString(),
      },
    });
    assert.equal(batch.statusCode, 202, batch.body);
    const history = await t.app.inject({ url: `/api/users/${userId}/notifications`, headers: CONTACTS });
    const [{ id }] = history.json().notifications;
    assert.equal((await cancel(id, OTHER_SENDER)).statusCode, 404);
    assert.equal((await cancel(id, SENDER)).statusCode, 204);
  });

  test('one accepted before senders were recorded (no sender): an admin only', async () => {
    const { id } = await scheduled(SENDER);
    await sql`update notifications set sent_by = null where id = ${id}`.execute(t.adapters.database.db);
    assert.equal((await cancel(id, SENDER)).statusCode, 404);
    assert.equal((await cancel(id, OTHER_SENDER)).statusCode, 404);
    assert.equal(await statusOf(id), 'scheduled');
    assert.equal((await cancel(id, t.asAdmin)).statusCode, 204);
  });

  test('the in-process NotifyApi.cancel takes back what NotifyApi.send sent, not what a service sent', async () => {
    const notify = t.app.platform.modules.get('notify')?.api as NotifyApi;
    const { id: viaHttp, userId } = await scheduled(SENDER);
    assert.equal(await notify.cancel({ user_id: userId, id: 'pending-1' }), 'not_found');
    assert.equal(await statusOf(viaHttp), 'scheduled');
    const sendAt = new Date(t.clock.now().getTime() + 3600_000).toISOString();
    const own = await notify.send({
      ...order(userId),
      channels: ['email'],
      id: 'reminder-1',
      send_at: sendAt,
    });
    assert.equal((await cancel(own.id, SENDER)).statusCode, 404, 'a service cannot cancel it');
    assert.equal(await notify.cancel({ user_id: userId, id: 'reminder-1' }), 'cancelled');
    assert.equal(await statusOf(own.id), 'cancelled');
  });
});

describe('templates decide what every user receives', () => {
  const writes: [string, string, Record<string, unknown>?][] = [
    ['POST', '/api/templates', { id: 'hijack.sms', body: 'Pay here: https://evil.example' }],
    ['PUT', '/api/templates/booking_confirmed.sms', { body: 'Pay here: https://evil.example' }],
    ['DELETE', '/api/templates/booking_confirmed.sms'],
    ['POST', '/api/templates/booking_confirmed.sms/preview', { data: {} }],
  ];

  test('only an admin writes or previews them: no credentials, a service key or a user token get 401', async () => {
    for (const [method, url, payload] of writes) {
      for (const headers of [{}, TEMPLATES, t.asService, t.asUser(randomUUID())]) {
        const response = await t.app.inject({ method: method as 'GET', url, headers, payload });
        assert.equal(response.statusCode, 401, `${method} ${url} with ${Object.keys(headers)}`);
        assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
      }
    }
    const stored = await t.app.inject({ url: '/api/templates/booking_confirmed.sms', headers: t.asAdmin });
    assert.doesNotMatch(stored.json().body, /evil/, 'nothing was changed');
    const created = await t.app.inject({
      method: 'PUT',
      url: '/api/templates/access_check.sms',
      headers: t.asAdmin,
      payload: { body: 'Hi {{ name }}' },
    });
    assert.equal(created.statusCode, 201, created.body);
  });

  test('a service with notify:templates or an admin reads them; nobody else', async () => {
    const read = (url: string, headers: Record<string, string>) => t.app.inject({ url, headers });
    for (const url of ['/api/templates', '/api/templates/booking_confirmed.sms']) {
      assert.equal((await read(url, {})).statusCode, 401, url);
      assert.equal((await read(url, t.asUser(randomUUID()))).statusCode, 401, `${url} by a user`);
      assert.equal((await read(url, SENDER)).statusCode, 403, `${url} by a key without notify:templates`);
      assert.equal((await read(url, TEMPLATES)).statusCode, 200, `${url} by a key with notify:templates`);
      assert.equal((await read(url, t.asAdmin)).statusCode, 200, `${url} by an admin`);
    }
  });
});

test('dead letters, their redrive and the dev inbox API are for admins only', async () => {
  const operations: [string, string][] = [
    ['GET', '/api/notifications/dead-letters'],
    ['POST', `/api/notifications/dead-letters/${encodeURIComponent('notifications.email:1')}/redrive`],
    ['GET', '/api/notifications/inbox'],
    ['GET', `/api/notifications/inbox/${randomUUID()}`],
  ];
  for (const [method, url] of operations) {
    for (const headers of [{}, t.asService, SENDER, t.asUser(randomUUID())]) {
      const response = await t.app.inject({ method: method as 'GET', url, headers });
      assert.equal(response.statusCode, 401, `${method} ${url} with ${Object.keys(headers)}`);
    }
    const admin = await t.app.inject({ method: method as 'GET', url, headers: t.asAdmin });
    assert.ok([200, 404].includes(admin.statusCode), `${method} ${url} by an admin: ${admin.statusCode}`);
  }
});
