import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import { sql } from 'kysely';
import { eventually } from '../../../test/support/notify.ts';
import { browserKeys, selfSignedCertificate } from '../../../test/support/notify-push.ts';
import { createTestApp, type TestApp } from '../../../test/support/platform.ts';
import { loadNotifySettings } from '../settings.ts';

/**
 * Push endpoints are URLs a client gives and the workers call: only public https addresses are
 * taken (a local push service needs OUTBOUND_ALLOW_HOSTS), a user holds at most 10, and what an
 * endpoint answers never comes back through the public status of a notification.
 */

const SECRET = 'SECRET-ANSWER-OF-AN-INTERNAL-SERVICE';
let pushService: Server;
let base: string;
/** Notify with Web Push, its local push service (127.0.0.1) and test hosts allowed explicitly. */
let t: TestApp;
/** The same without an allow-list: what a deployment runs. */
let strict: TestApp;

before(async () => {
  const tls = selfSignedCertificate('IP:127.0.0.1');
  // The app's sender uses the default trust store, like production: the test's CA joins it.
  setDefaultCACertificates([...getCACertificates('default'), tls.cert.toString()]);
  pushService = createServer(tls, (request, response) => {
    request.resume();
    request.on('end', () => {
      if (request.url === '/leaky') response.writeHead(400).end(`${SECRET}\n${'x'.repeat(50_000)}`);
      else response.writeHead(201, { location: `${base}/messages/1` }).end();
    });
  });
  await new Promise<void>((resolve) => pushService.listen(0, '127.0.0.1', resolve));
  base = `https://127.0.0.1:${(pushService.address() as AddressInfo).port}`;
  t = await createTestApp({
    services: ['notify'],
    workers: true,
    env: { NOTIFY_PUSH_PROVIDER: 'webpush', OUTBOUND_ALLOW_HOSTS: '127.0.0.1, push.example.com' },
  });
  strict = await createTestApp({ services: ['notify'] });
});
after(async () => {
  await Promise.all([t?.close(), strict?.close()]);
  await new Promise((resolve) => pushService.close(resolve));
});

const subscribe = (app: TestApp, userId: string, endpoint: string, keys = browserKeys()) =>
  app.app.inject({
    method: 'POST',
    url: `/api/users/${userId}/push-subscriptions`,
    headers: app.asAdmin,
    payload: { endpoint, keys },
  });

const stored = async (app: TestApp, userId: string) =>
  (
    await sql<{ endpoint: string }>`select endpoint from notify_push_subscriptions
      where user_id = ${userId} order by endpoint`.execute(app.adapters.database.db)
  ).rows.map((row) => row.endpoint);

const newUser = () => `u-${randomUUID().slice(0, 8)}`;

describe('subscribing', () => {
  test('endpoints on loopback, private, link-local or mapped addresses are 422 and store nothing', async () => {
    const userId = newUser();
    for (const [endpoint, reason] of [
      ['https://127.0.0.1/push', '127.0.0.1 is a loopback address'],
      ['https://localhost:8443/push', 'localhost resolves to a loopback address'],
      ['https://[::1]/push', '::1 is a loopback address'],
      ['https://10.0.0.8/push', '10.0.0.8 is a private address'],
      ['https://192.168.1.1/push', '192.168.1.1 is a private address'],
      ['https://169.254.169.254/latest/meta-data', '169.254.169.254 is a link-local address'],
      ['https://100.64.0.1/push', '100.64.0.1 is a shared (CGNAT) address'],
      ['https://[fd00::1]/push', 'fd00::1 is a unique-local address'],
      ['https://[::ffff:7f00:1]/push', '::ffff:7f00:1 is a loopback address'],
      ['https://2130706433/push', '127.0.0.1 is a loopback address'],
      ['https://push.invalid/push', 'push.invalid does not resolve'],
    ]) {
      const response = await subscribe(strict, userId, endpoint);
      assert.equal(response.statusCode, 422, endpoint);
      assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8');
      const problem = response.json();
      assert.equal(problem.code, 'push_endpoint_refused', endpoint);
      assert.equal(problem.detail, `Push endpoint refused: ${reason}`);
    }
    assert.deepEqual(await stored(strict, userId), []);
  });

  test('OUTBOUND_ALLOW_HOSTS lets exactly the listed hosts through', async () => {
    const userId = newUser();
    assert.equal((await subscribe(t, userId, `${base}/device`)).statusCode, 201);
    assert.equal((await subscribe(t, userId, 'https://push.example.com/d')).statusCode, 201);
    assert.equal((await subscribe(t, userId, 'https://127.0.0.2/device')).statusCode, 422);
    assert.deepEqual(await stored(t, userId), [`${base}/device`, 'https://push.example.com/d']);
  });

  test('at most 10 per user; re-adding one of them stays idempotent', async () => {
    const userId = newUser();
    const endpoint = (i: number) => `https://push.example.com/device-${String(i).padStart(2, '0')}`;
    for (let i = 0; i < 10; i++) assert.equal((await subscribe(t, userId, endpoint(i))).statusCode, 201);
    const eleventh = await subscribe(t, userId, endpoint(10));
    assert.equal(eleventh.statusCode, 409);
    assert.equal(eleventh.json().code, 'push_subscriptions_limit');
    assert.equal(eleventh.json().limit, 10);
    // The same endpoint again (a browser refreshing its keys) is not a new subscription.
    assert.equal((await subscribe(t, userId, endpoint(3))).statusCode, 201);
    assert.deepEqual(await stored(t, userId), [...Array(10).keys()].map(endpoint));
    const removed = await t.app.inject({
      method: 'DELETE',
      url: `/api/users/${userId}/push-subscriptions?endpoint=${encodeURIComponent(endpoint(0))}`,
      headers: t.asAdmin,
    });
    assert.equal(removed.statusCode, 204);
    assert.equal((await subscribe(t, userId, endpoint(10))).statusCode, 201);
    assert.equal((await stored(t, userId)).length, 10);
  });

  test('a burst of concurrent subscriptions cannot pass the limit together', async () => {
    const userId = newUser();
    const answers = await Promise.all(
      Array.from({ length: 16 }, (_, i) => subscribe(t, userId, `https://push.example.com/burst-${i}`)),
    );
    const codes = answers.map((answer) => answer.statusCode).sort();
    assert.deepEqual(codes, [...Array(10).fill(201), ...Array(6).fill(409)]);
    assert.equal((await stored(t, userId)).length, 10);
  });
});

test('a malformed OUTBOUND_ALLOW_HOSTS stops the start, naming the variable', () => {
  assert.deepEqual(loadNotifySettings({}).outboundAllow, []);
  assert.deepEqual(loadNotifySettings({ OUTBOUND_ALLOW_HOSTS: ' 127.0.0.1, push.test ' }).outboundAllow, [
    '127.0.0.1',
    'push.test',
  ]);
  for (const bad of ['https://push.test', '10.0.0.0/40', 'a b']) {
    assert.throws(() => loadNotifySettings({ OUTBOUND_ALLOW_HOSTS: bad }), {
      name: 'ConfigError',
      message: /^OUTBOUND_ALLOW_HOSTS: /,
    });
  }
});

describe('sending', () => {
  test("an endpoint's answer never reaches the notification's public status", async () => {
    const userId = newUser();
    assert.equal((await subscribe(t, userId, `${base}/leaky`)).statusCode, 201);
    const sent = await t.app.inject({
      method: 'POST',
      url: '/api/notifications',
      headers: t.asAdmin,
      payload: {
        user_id: userId,
        type: 'security_alert',
        channels: ['push'],
        data: { event: 'a new sign-in', occurred_at: '2026-03-01T10:00:00Z' },
      },
    });
    assert.equal(sent.statusCode, 202, sent.body);
    const id = sent.json().id as string;
    const status = await eventually(async () => {
      const response = await t.app.inject({ url: `/api/notifications/${id}`, headers: t.asAdmin });
      return response.json().channels[0].status === 'failed' && response;
    });
    assert.ok(!status.body.includes(SECRET), status.body);
    const body = status.json();
    assert.deepEqual(
      body.attempts.map((a: { error: string }) => a.error),
      ['push_400: push endpoint answered 400'],
    );
    assert.equal(body.channels[0].reason, 'push_400: push endpoint answered 400');
  });
});
