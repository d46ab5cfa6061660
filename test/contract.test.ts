import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createFeedRepository } from '../src/notify/feed/repository.ts';
import { topicFor } from '../src/notify/notifications/outbox.ts';
import { unsubscribeToken } from '../src/notify/preferences/unsubscribe.ts';
import { TEST_CARDS } from '../src/payments/api.ts';
import { DEV_KEYS } from '../src/platform/auth/keys.ts';
import { PermanentError } from '../src/platform/queue/index.ts';
import { signWebhook } from '../src/platform/webhook-signature.ts';
import { type Seeded, seedShow } from './support/booking.ts';
import {
  type Call,
  contractValidator,
  firstEvent,
  type LocatedOperation,
  operationsOf,
  type Spec,
} from './support/contract.ts';
import { lotEnv, lotJson } from './support/parking.ts';
import { freshIp } from './support/paste.ts';
import { createTestApp, type TestApp } from './support/platform.ts';

/**
 * Live answers against /openapi.json: every operation of the document, with all four services,
 * is driven through its documented success case and the errors it documents (400 validation,
 * 401 without credentials, 403, 404, 409, 410, 413, 422, 402 a declined card, 202 a gateway that
 * does not answer, 429 where cheap; an endless event stream's status, headers and first event over
 * a socket), and each answer must be one the document describes (support/contract.ts checks status, media
 * type, body and headers). An operation without an entry in CASES fails the test: a new route
 * comes with its requests here.
 */
const RECEIPT_SECRET = 'contract-receipts';
const DECLINED = '4000000000000002';
const PAID = '4242424242424242';
const card = (number: string) => ({ card_number: number, exp_month: 12, exp_year: 2030, cvc: '123' });
const json = { 'content-type': 'application/json' };
const missing = '00000000-0000-4000-8000-000000000000';
const t0ServiceKey = DEV_KEYS.service;
const NARROW_KEY = 'contract-narrow-service-key';
const narrow = { 'x-api-key': NARROW_KEY };

let t: TestApp;
let spec: Spec;
let base: string;

before(async () => {
  t = await createTestApp({
    env: {
      BOOKING_DEMO: 'false',
      BOOKING_RATE_HOLD: '1000000/60',
      PASTE_RATE_SIGNUP: '2/3600',
      NOTIFY_RECEIPT_SECRET: RECEIPT_SECRET,
      OUTBOUND_ALLOW_HOSTS: 'push.example.com',
      // The sandbox's card that never answers leaves its payment PENDING (202) this soon.
      PAYMENT_TIMEOUT_MS: '300',
      // The development keys, and a service key without the scopes notify asks for (403).
      SERVICE_KEYS: `dev * ${t0ServiceKey}; narrow booking:read ${NARROW_KEY}`,
      ...lotEnv(
        lotJson({
          floors: [{ floor: 1, spots: { COMPACT: 50, LARGE: 50 } }],
          reservations: { spots: { COMPACT: 10, LARGE: 5 } },
        }),
      ),
    },
  });
  spec = (await t.app.inject({ url: '/openapi.json' })).json();
  // Endless event streams are read over a socket (firstEvent).
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  // The type the notification cases send.
  const stored = await t.app.inject({
    method: 'PUT',
    url: '/api/templates/contract.email',
    headers: t.asAdmin,
    payload: { subject: 'Hi', body: 'Hello {{ name }}' },
  });
  assert.equal(stored.statusCode, 201, stored.body);
});
after(() => t.close());

interface Context {
  call: Call;
  /** The start of an endless event stream (status, headers, first event), checked like a call. */
  stream(expected: number, url: string, headers?: Record<string, string>): Promise<unknown>;
  user: { authorization: string };
  userId: string;
}

/** Admin-made fixtures the cases share, through the plain API (not themselves checked). */
const fixtures = {
  show: undefined as Seeded | undefined,
  async seeded(): Promise<Seeded> {
    fixtures.show ??= await seedShow({ ...t, notify: undefined as never });
    return fixtures.show;
  },
  async paste(body: object = { content: 'hello' }) {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/v1/paste',
      payload: body,
      remoteAddress: freshIp(),
    });
    assert.equal(response.statusCode, 201, response.body);
    return response.json() as { short_url: string; delete_token: string };
  },
  async account() {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/v1/users',
      payload: { email: `${randomUUID()}@example.com` },
      remoteAddress: freshIp(),
    });
    return { authorization: `Bearer ${response.json().api_key}` };
  },
  async hold(userId: string, seats: string[]) {
    const { showId } = await fixtures.seeded();
    const response = await t.app.inject({
      method: 'POST',
      url: `/api/v1/shows/${showId}/hold`,
      headers: t.asUser(userId),
      payload: { seat_ids: seats },
    });
    assert.equal(response.statusCode, 201, response.body);
    return response.json() as { hold_id: string; user_id: string; show_id: string };
  },
  async booking(userId: string, seat: string) {
    const held = await fixtures.hold(userId, [seat]);
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/v1/bookings',
      headers: { ...t.asUser(userId), 'idempotency-key': randomUUID() },
      payload: { hold_id: held.hold_id, payment_method: 'CARD', payment_details: card(PAID) },
    });
    assert.equal(response.statusCode, 201, response.body);
    return response.json() as { booking_id: string; ticket_token: string };
  },
  async parked(plate = `P${randomUUID().slice(0, 6)}`) {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/v1/parking/entry',
      headers: t.asOperator,
      payload: { licensePlate: plate, vehicleType: 'CAR' },
    });
    assert.equal(response.statusCode, 201, response.body);
    return { ...(response.json() as { ticketId: string }), plate };
  },
  /** A reservation window starting `hours` from the clock's now, two hours long. */
  window(hours: number) {
    const start = t.clock.now().getTime() + hours * 3_600_000;
    return {
      spotType: 'COMPACT',
      startsAt: new Date(start).toISOString(),
      endsAt: new Date(start + 2 * 3_600_000).toISOString(),
    };
  },
  async reservation(user: { authorization: string }, hours: number, plate = `R${randomUUID().slice(0, 6)}`) {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/v1/parking/reservations',
      headers: user,
      payload: { ...fixtures.window(hours), licensePlate: plate, vehicleType: 'CAR' },
    });
    assert.equal(response.statusCode, 201, response.body);
    return response.json().reservationId as string;
  },
  async unpark(ticketId: string) {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/v1/parking/exit',
      headers: { ...t.asOperator, 'idempotency-key': randomUUID() },
      payload: { ticketId, payment: card(PAID) },
    });
    assert.equal(response.statusCode, 200, response.body);
    return response.json() as { paymentId: string };
  },
  /** An item in the user's in-app feed, as the feed provider stores it (no workers run here). */
  async feedItem(userId: string) {
    const notificationId = randomUUID();
    await createFeedRepository(t.adapters.database.db).store({
      notificationId,
      userId,
      type: 'contract',
      title: 'Hi',
      body: 'Hello',
      link: '/contract',
      at: new Date(),
    });
    return notificationId;
  },
  async payment() {
    const { ticketId } = await fixtures.parked();
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/v1/parking/exit',
      headers: t.asOperator,
      payload: { ticketId },
    });
    assert.equal(response.statusCode, 200, response.body);
    return { ticketId, paymentId: (response.json() as { paymentId: string }).paymentId };
  },
};

/** An end-to-end encrypted paste's body: a version 1 envelope (src/paste/envelope.ts) of random bytes. */
const ENCRYPTED_PASTE = {
  encryption: 'aes-256-gcm',
  content: Buffer.concat([Buffer.from([1, 0]), randomBytes(12 + 32)]).toString('base64'),
};
const template = { id: 'contract.sms', body: 'Hello {{ name }}' };
const theaterBody = (cityId: string) => ({
  city_id: cityId,
  name: `Contract ${randomUUID()}`,
  screens: [
    {
      screen_number: 1,
      screen_type: 'Standard',
      rows: [{ row: 'A', seats: 2, seat_type: 'REGULAR' }],
      prices: { REGULAR: 100 },
    },
  ],
});

/** operationId → the requests that drive it: its success case and the errors it documents. */
const CASES: Record<string, (c: Context) => Promise<void>> = {
  // Platform
  async getHealthLive({ call }) {
    await call(200, { url: '/health/live' });
  },
  async getHealthReady({ call }) {
    await call(200, { url: '/health/ready' });
  },
  async postGuests({ call }) {
    await call(201, { method: 'POST', url: '/api/v1/guests' });
  },

  // Paste
  async postPaste({ call }) {
    await call(201, {
      method: 'POST',
      url: '/api/v1/paste',
      payload: { content: 'x' },
      remoteAddress: freshIp(),
    });
    // Past the 10 MB limit: refused from its Content-Length, before the body is read.
    await call(413, {
      method: 'POST',
      url: '/api/v1/paste',
      headers: json,
      payload: JSON.stringify({ content: 'x'.repeat(10 * 1024 * 1024 + 1) }),
      remoteAddress: freshIp(),
    });
    await call(400, {
      method: 'POST',
      url: '/api/v1/paste',
      payload: { content: 'x', expires_in: 1 },
      remoteAddress: freshIp(),
    });
    await call(401, {
      method: 'POST',
      url: '/api/v1/paste',
      headers: { authorization: 'Bearer pk_wrong' },
      payload: { content: 'x' },
      remoteAddress: freshIp(),
    });
    await call(415, {
      method: 'POST',
      url: '/api/v1/paste',
      headers: { 'content-type': 'text/plain; charset=iso-8859-1' },
      payload: 'caf\xe9',
      remoteAddress: freshIp(),
    });
    await call(422, {
      method: 'POST',
      url: '/api/v1/paste',
      headers: { 'content-type': 'application/octet-stream' },
      payload: Buffer.from([0, 1, 2, 0xff, 0xfe]),
      remoteAddress: freshIp(),
    });
    const key = randomUUID();
    const address = freshIp();
    const once = {
      method: 'POST',
      url: '/api/v1/paste',
      headers: { 'idempotency-key': key },
      remoteAddress: address,
    } as const;
    await call(201, { ...once, payload: { content: 'once' } });
    await call(201, { ...once, payload: { content: 'once' } });
    await call(422, { ...once, payload: { content: 'another' } });
    // End-to-end encrypted: the envelope is checked, never decrypted.
    await call(201, {
      method: 'POST',
      url: '/api/v1/paste',
      payload: ENCRYPTED_PASTE,
      remoteAddress: freshIp(),
    });
    await call(400, {
      method: 'POST',
      url: '/api/v1/paste',
      payload: { ...ENCRYPTED_PASTE, content: 'not an envelope' },
      remoteAddress: freshIp(),
    });
  },
  async postDocuments({ call }) {
    // The haste API (src/paste/haste.ts): the body is the text, answered 200 {"key"}.
    await call(200, {
      method: 'POST',
      url: '/documents',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'from the haste gem',
      remoteAddress: freshIp(),
    });
    await call(400, { method: 'POST', url: '/documents', remoteAddress: freshIp() });
    await call(401, {
      method: 'POST',
      url: '/documents',
      headers: { authorization: 'Bearer pk_wrong', 'content-type': 'text/plain' },
      payload: 'x',
      remoteAddress: freshIp(),
    });
    await call(415, {
      method: 'POST',
      url: '/documents',
      headers: { 'content-type': 'text/plain; charset=iso-8859-1' },
      payload: 'caf\xe9',
      remoteAddress: freshIp(),
    });
    await call(422, {
      method: 'POST',
      url: '/documents',
      headers: { 'content-type': 'application/octet-stream' },
      payload: Buffer.from([0, 1, 2, 0xff, 0xfe]),
      remoteAddress: freshIp(),
    });
  },
  async getDocumentsByKey({ call }) {
    const paste = await fixtures.paste();
    await call(200, { url: `/documents/${paste.short_url}` });
    await call(200, { url: `/documents/${paste.short_url}.txt` });
    await call(400, { url: '/documents/no-such-id!' });
    const locked = await fixtures.paste({ content: 'x', password: 'sesame' });
    await call(401, { url: `/documents/${locked.short_url}` });
    await call(404, { url: '/documents/nopaste' });
    const sealed = await fixtures.paste(ENCRYPTED_PASTE);
    await call(409, { url: `/documents/${sealed.short_url}` });
    await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/paste/${paste.short_url}`,
      headers: { 'x-delete-token': paste.delete_token },
    });
    await call(410, { url: `/documents/${paste.short_url}` });
  },
  async getRawByKey({ call }) {
    const paste = await fixtures.paste();
    const raw = await call(200, { url: `/raw/${paste.short_url}` });
    await call(304, {
      url: `/raw/${paste.short_url}`,
      headers: { 'if-none-match': String(raw.headers.etag) },
    });
    await call(400, { url: '/raw/no-such-id!' });
    await call(404, { url: '/raw/nopaste' });
    const sealed = await fixtures.paste(ENCRYPTED_PASTE);
    await call(409, { url: `/raw/${sealed.short_url}` });
  },
  async postPasteAlias({ call }) {
    await call(201, { method: 'POST', url: '/paste', payload: { content: 'x' }, remoteAddress: freshIp() });
    await call(201, {
      method: 'POST',
      url: '/paste?syntax=python',
      headers: { 'content-type': 'text/plain' },
      payload: 'x = 1\n',
      remoteAddress: freshIp(),
    });
    await call(400, {
      method: 'POST',
      url: '/paste?expires_in=5',
      headers: { 'content-type': 'text/plain' },
      payload: 'x',
      remoteAddress: freshIp(),
    });
  },
  async postPasteAtRoot({ call }) {
    // What curl sends: a multipart upload, or the text itself; the form's own answers are pages.
    await call(201, {
      method: 'POST',
      url: '/',
      headers: { 'content-type': 'multipart/form-data; boundary=b' },
      payload:
        '--b\r\nContent-Disposition: form-data; name="file"; filename="f.txt"\r\n\r\nhello\r\n--b--\r\n',
      remoteAddress: freshIp(),
    });
    await call(201, {
      method: 'POST',
      url: '/',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'plain text, not the form',
      remoteAddress: freshIp(),
    });
    await call(400, {
      method: 'POST',
      url: '/?expires_in=5',
      headers: { 'content-type': 'text/plain' },
      payload: 'x',
      remoteAddress: freshIp(),
    });
  },
  async putPaste({ call }) {
    await call(201, { method: 'PUT', url: '/paste', payload: 'uploaded\n', remoteAddress: freshIp() });
    await call(400, { method: 'PUT', url: '/paste?expires_in=5', payload: 'x', remoteAddress: freshIp() });
  },
  async putPasteAtRoot({ call }) {
    await call(201, { method: 'PUT', url: '/', payload: 'from stdin\n', remoteAddress: freshIp() });
    await call(400, { method: 'PUT', url: '/?expires_in=5', payload: 'x', remoteAddress: freshIp() });
  },
  async getPasteByShortUrl({ call }) {
    const paste = await fixtures.paste();
    const read = await call(200, { url: `/api/v1/paste/${paste.short_url}` });
    await call(304, {
      url: `/api/v1/paste/${paste.short_url}`,
      headers: { 'if-none-match': String(read.headers.etag) },
    });
    await call(400, { url: '/api/v1/paste/no-such-id!' });
    const locked = await fixtures.paste({ content: 'x', password: 'sesame' });
    await call(401, { url: `/api/v1/paste/${locked.short_url}` });
    await call(404, { url: '/api/v1/paste/nopaste' });
    await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/paste/${paste.short_url}`,
      headers: { 'x-delete-token': paste.delete_token },
    });
    await call(410, { url: `/api/v1/paste/${paste.short_url}` });
    const address = freshIp();
    let last = 0;
    for (let attempt = 0; attempt < 12 && last !== 429; attempt++) {
      const answer = await t.app.inject({
        url: `/api/v1/paste/${locked.short_url}`,
        headers: { 'x-paste-password': 'wrong' },
        remoteAddress: address,
      });
      last = answer.statusCode;
    }
    await call(429, {
      url: `/api/v1/paste/${locked.short_url}`,
      headers: { 'x-paste-password': 'wrong' },
      remoteAddress: address,
    });
  },
  async getPasteByShortUrlAlias({ call }) {
    const paste = await fixtures.paste();
    await call(200, { url: `/paste/${paste.short_url}` });
    await call(404, { url: '/paste/nopaste' });
  },
  async getByShortUrlRaw({ call }) {
    const paste = await fixtures.paste();
    const raw = await call(200, { url: `/${paste.short_url}/raw` });
    await call(304, {
      url: `/${paste.short_url}/raw`,
      headers: { 'if-none-match': String(raw.headers.etag) },
    });
    await call(404, { url: '/nopaste/raw' });
    const sealed = await fixtures.paste(ENCRYPTED_PASTE);
    await call(409, { url: `/${sealed.short_url}/raw` });
  },
  async deletePasteByShortUrl({ call }) {
    const paste = await fixtures.paste();
    await call(403, {
      method: 'DELETE',
      url: `/api/v1/paste/${paste.short_url}`,
      headers: { 'x-delete-token': 'dt_wrong' },
    });
    await call(204, {
      method: 'DELETE',
      url: `/api/v1/paste/${paste.short_url}`,
      headers: { 'x-delete-token': paste.delete_token },
    });
    await call(410, {
      method: 'DELETE',
      url: `/api/v1/paste/${paste.short_url}`,
      headers: { 'x-delete-token': paste.delete_token },
    });
    await call(404, {
      method: 'DELETE',
      url: '/api/v1/paste/nopaste',
      headers: { 'x-delete-token': 'dt_x' },
    });
    await call(401, {
      method: 'DELETE',
      url: '/api/v1/paste/nopaste',
      headers: { authorization: 'Bearer pk_wrong' },
    });
  },
  async getPasteLanguages({ call }) {
    await call(200, { url: '/api/v1/paste/languages' });
  },
  async postUsers({ call }) {
    const address = freshIp();
    const email = `${randomUUID()}@example.com`;
    await call(201, { method: 'POST', url: '/api/v1/users', payload: { email }, remoteAddress: address });
    await call(409, { method: 'POST', url: '/api/v1/users', payload: { email }, remoteAddress: address });
    await call(429, { method: 'POST', url: '/api/v1/users', payload: { email }, remoteAddress: address });
    await call(400, {
      method: 'POST',
      url: '/api/v1/users',
      payload: { email: 'nope' },
      remoteAddress: freshIp(),
    });
  },
  async getUsersMePastes({ call }) {
    const account = await fixtures.account();
    await call(200, { url: '/api/v1/users/me/pastes', headers: account });
    await call(400, { url: '/api/v1/users/me/pastes?limit=0', headers: account });
    await call(401, { url: '/api/v1/users/me/pastes' });
  },

  // Notifications
  async postNotifications({ call }) {
    const send = { user_id: 'u-contract', type: 'contract', channels: ['email'], data: { name: 'Ada' } };
    const headers = { ...t.asService, 'idempotency-key': randomUUID() };
    await call(202, { method: 'POST', url: '/api/notifications', headers, payload: send });
    await call(202, { method: 'POST', url: '/api/notifications', headers, payload: send });
    await call(422, {
      method: 'POST',
      url: '/api/notifications',
      headers,
      payload: { ...send, user_id: 'u-other' },
    });
    await call(422, {
      method: 'POST',
      url: '/api/notifications',
      headers: t.asService,
      payload: { ...send, type: 'nope' },
    });
    await call(400, {
      method: 'POST',
      url: '/api/notifications',
      headers: t.asService,
      payload: { ...send, channels: [] },
    });
    await call(401, { method: 'POST', url: '/api/notifications', payload: send });
    await call(403, { method: 'POST', url: '/api/notifications', headers: narrow, payload: send });
  },
  async postNotificationsBatch({ call }) {
    const batch = {
      type: 'contract',
      channels: ['email'],
      recipients: [{ user_id: 'u-batch', data: { name: 'Ada' } }],
    };
    await call(202, {
      method: 'POST',
      url: '/api/notifications/batch',
      headers: t.asService,
      payload: batch,
    });
    await call(400, { method: 'POST', url: '/api/notifications/batch', headers: t.asService, payload: {} });
    await call(422, {
      method: 'POST',
      url: '/api/notifications/batch',
      headers: t.asService,
      payload: { ...batch, type: 'nope' },
    });
  },
  async getNotificationsDeadLetters({ call }) {
    await call(200, { url: '/api/notifications/dead-letters', headers: t.asAdmin });
    await call(400, { url: '/api/notifications/dead-letters?limit=0', headers: t.asAdmin });
    await call(401, { url: '/api/notifications/dead-letters', headers: t.asService });
  },
  async postNotificationsDeadLettersByIdRedrive({ call, userId }) {
    // A dead letter of a real notification: its delivery message, failed for good by a consumer
    // of its own (this app runs no notify workers).
    const sent = await t.app.inject({
      method: 'POST',
      url: '/api/notifications',
      headers: t.asService,
      payload: { user_id: userId, type: 'contract', channels: ['email'], data: { name: 'Ada' } },
    });
    const topic = topicFor('realtime', 'email');
    const notificationId = sent.json().id as string;
    await t.adapters.queue.publish(topic, {
      id: `contract-dead-${notificationId}`,
      key: userId,
      payload: { notificationId, channel: 'email' },
    });
    const failing = t.adapters.queue.consume(topic, { group: 'contract', retryDelaysMs: [] }, async () => {
      throw new PermanentError('contract: fails for good');
    });
    let letter: { deadLetterId: string } | undefined;
    for (let i = 0; i < 200 && !letter; i++) {
      letter = (await t.adapters.queue.deadLetters<{ notificationId: string }>(topic)).find(
        (l) => l.payload.notificationId === notificationId,
      );
      if (!letter) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    await failing.stop();
    assert.ok(letter, 'the message was dead-lettered');
    await call(202, {
      method: 'POST',
      url: `/api/notifications/dead-letters/${topic}:${letter.deadLetterId}/redrive`,
      headers: t.asAdmin,
    });
    await call(404, {
      method: 'POST',
      url: '/api/notifications/dead-letters/notifications.sms:1/redrive',
      headers: t.asAdmin,
    });
    await call(401, { method: 'POST', url: '/api/notifications/dead-letters/notifications.sms:1/redrive' });
  },
  async getNotificationsById({ call, user, userId }) {
    const sent = await t.app.inject({
      method: 'POST',
      url: '/api/notifications',
      headers: t.asService,
      payload: { user_id: userId, type: 'contract', channels: ['email'], data: { name: 'Ada' } },
    });
    const id = sent.json().id as string;
    await call(200, { url: `/api/notifications/${id}`, headers: t.asService });
    await call(200, { url: `/api/notifications/${id}`, headers: user });
    await call(404, { url: `/api/notifications/${id}`, headers: t.asUser('someone-else') });
    await call(404, { url: `/api/notifications/${missing}`, headers: t.asService });
  },
  async deleteNotificationsById({ call, user, userId }) {
    const later = new Date(t.clock.now().getTime() + 3_600_000).toISOString();
    await t.app.inject({
      method: 'PATCH',
      url: `/api/users/${userId}/notification-preferences`,
      headers: t.asService,
      payload: { email: 'contract@example.com' },
    });
    const sent = await t.app.inject({
      method: 'POST',
      url: '/api/notifications',
      headers: t.asService,
      payload: {
        user_id: userId,
        type: 'contract',
        channels: ['email'],
        data: { name: 'Ada' },
        send_at: later,
      },
    });
    const id = sent.json().id as string;
    await call(401, { method: 'DELETE', url: `/api/notifications/${id}`, headers: user });
    await call(403, { method: 'DELETE', url: `/api/notifications/${id}`, headers: narrow });
    await call(204, { method: 'DELETE', url: `/api/notifications/${id}`, headers: t.asService });
    await call(404, { method: 'DELETE', url: `/api/notifications/${missing}`, headers: t.asService });
    // Nothing pending: its only channel was skipped at the accept (no address).
    const skipped = await t.app.inject({
      method: 'POST',
      url: '/api/notifications',
      headers: t.asService,
      payload: { user_id: 'u-no-address', type: 'contract', channels: ['email'], data: { name: 'Ada' } },
    });
    await call(409, { method: 'DELETE', url: `/api/notifications/${skipped.json().id}`, headers: t.asAdmin });
  },
  async getNotificationTypesDigests({ call }) {
    await call(200, { url: '/api/notification-types/digests', headers: t.asAdmin });
    await call(401, { url: '/api/notification-types/digests' });
    await call(403, { url: '/api/notification-types/digests', headers: narrow });
  },
  async getNotificationTypesByTypeDigest({ call }) {
    const url = '/api/notification-types/contract_dg/digest';
    await t.app.inject({ method: 'PUT', url, headers: t.asAdmin, payload: { every: '10m' } });
    await call(200, { url, headers: t.asAdmin });
    await call(404, { url: '/api/notification-types/never_dg/digest', headers: t.asAdmin });
    await call(400, { url: '/api/notification-types/bad%20type/digest', headers: t.asAdmin });
    await call(401, { url });
    await call(403, { url, headers: narrow });
  },
  async putNotificationTypesByTypeDigest({ call }) {
    const url = '/api/notification-types/contract_dg2/digest';
    await call(200, { method: 'PUT', url, headers: t.asAdmin, payload: { daily_at: '09:00' } });
    await call(400, { method: 'PUT', url, headers: t.asAdmin, payload: { daily_at: '9' } });
    await call(422, { method: 'PUT', url, headers: t.asAdmin, payload: {} });
    await call(401, { method: 'PUT', url, headers: t.asService, payload: { every: '1h' } });
  },
  async deleteNotificationTypesByTypeDigest({ call }) {
    const url = '/api/notification-types/contract_dg3/digest';
    await t.app.inject({ method: 'PUT', url, headers: t.asAdmin, payload: { every: '1h' } });
    await call(204, { method: 'DELETE', url, headers: t.asAdmin });
    await call(404, { method: 'DELETE', url, headers: t.asAdmin });
    await call(401, { method: 'DELETE', url });
  },
  async getUsersByUserIdNotifications({ call, user, userId }) {
    await call(200, { url: `/api/users/${userId}/notifications`, headers: user });
    await call(400, { url: `/api/users/${userId}/notifications?cursor=garbage`, headers: user });
    await call(404, { url: `/api/users/${userId}/notifications`, headers: t.asUser('someone-else') });
  },
  async getUsersByUserIdNotificationPreferences({ call, user, userId }) {
    await call(200, { url: `/api/users/${userId}/notification-preferences`, headers: user });
    await call(400, { url: '/api/users/bad%20id/notification-preferences', headers: t.asService });
    await call(401, { url: `/api/users/${userId}/notification-preferences` });
  },
  async putUsersByUserIdNotificationPreferences({ call, user, userId }) {
    const url = `/api/users/${userId}/notification-preferences`;
    const prefs = { push_enabled: true, sms_enabled: true, email_enabled: true };
    await call(200, { method: 'PUT', url, headers: user, payload: prefs });
    await call(400, { method: 'PUT', url, headers: user, payload: {} });
    await call(422, { method: 'PUT', url, headers: user, payload: { ...prefs, timezone: 'Not/AZone' } });
  },
  async patchUsersByUserIdNotificationPreferences({ call, user, userId }) {
    const url = `/api/users/${userId}/notification-preferences`;
    await call(200, { method: 'PATCH', url, headers: user, payload: { sms_enabled: true } });
    await call(400, { method: 'PATCH', url, headers: user, payload: {} });
  },
  async postUsersByUserIdPushSubscriptions({ call, user, userId }) {
    const url = `/api/users/${userId}/push-subscriptions`;
    await call(201, {
      method: 'POST',
      url,
      headers: user,
      payload: { endpoint: 'https://push.example.com/contract', keys: { p256dh: 'p', auth: 'a' } },
    });
    await call(400, { method: 'POST', url, headers: user, payload: { endpoint: 'http://x' } });
  },
  async deleteUsersByUserIdPushSubscriptions({ call, user, userId }) {
    const url = `/api/users/${userId}/push-subscriptions`;
    const endpoint = 'https://push.example.com/contract-delete';
    await t.app.inject({
      method: 'POST',
      url,
      headers: user,
      payload: { endpoint, keys: { p256dh: 'p', auth: 'a' } },
    });
    await call(204, {
      method: 'DELETE',
      url: `${url}?endpoint=${encodeURIComponent(endpoint)}`,
      headers: user,
    });
    await call(404, {
      method: 'DELETE',
      url: `${url}?endpoint=${encodeURIComponent(endpoint)}`,
      headers: user,
    });
    await call(400, { method: 'DELETE', url, headers: user });
  },
  async getUsersByUserIdNotificationLimits({ call, user, userId }) {
    await call(200, { url: `/api/users/${userId}/notification-limits`, headers: user });
    await call(401, { url: `/api/users/${userId}/notification-limits` });
  },
  async getUsersByUserIdFeed({ call, user, userId }) {
    await fixtures.feedItem(userId);
    const page = await call(200, { url: `/api/users/${userId}/feed?limit=1`, headers: user });
    await call(200, { url: `/api/users/${userId}/feed?filter=archived`, headers: t.asService });
    await call(400, { url: `/api/users/${userId}/feed?cursor=garbage`, headers: user });
    await call(400, { url: `/api/users/${userId}/feed?limit=1000`, headers: user });
    await call(401, { url: `/api/users/${userId}/feed` });
    await call(404, { url: `/api/users/${userId}/feed`, headers: t.asUser('someone-else') });
    assert.equal((page.json() as { items: unknown[] }).items.length, 1);
  },
  async getUsersByUserIdFeedUnread({ call, user, userId }) {
    await call(200, { url: `/api/users/${userId}/feed/unread`, headers: user });
    await call(401, { url: `/api/users/${userId}/feed/unread` });
    await call(404, { url: `/api/users/${userId}/feed/unread`, headers: t.asUser('someone-else') });
  },
  async getUsersByUserIdFeedEvents({ call, user, userId }) {
    // An endless event stream: its success case is the SSE tests' (feed/feed.test.ts).
    await call(400, { url: `/api/users/${userId}/feed/events`, headers: { ...user, 'last-event-id': 'x' } });
    await call(401, { url: `/api/users/${userId}/feed/events` });
    await call(404, { url: `/api/users/${userId}/feed/events`, headers: t.asUser('someone-else') });
  },
  async patchUsersByUserIdFeedByItemId({ call, user, userId }) {
    const id = await fixtures.feedItem(userId);
    const url = `/api/users/${userId}/feed/${id}`;
    await call(200, { method: 'PATCH', url, headers: user, payload: { read: true } });
    await call(400, { method: 'PATCH', url, headers: user, payload: {} });
    await call(404, {
      method: 'PATCH',
      url: `/api/users/${userId}/feed/${missing}`,
      headers: user,
      payload: { seen: true },
    });
    await call(401, { method: 'PATCH', url, payload: { seen: true } });
  },
  async postUsersByUserIdFeedMark({ call, user, userId }) {
    const id = await fixtures.feedItem(userId);
    const url = `/api/users/${userId}/feed/mark`;
    await call(200, { method: 'POST', url, headers: user, payload: { up_to: id, mark: 'read' } });
    await call(400, { method: 'POST', url, headers: user, payload: { up_to: id, mark: 'gone' } });
    await call(404, { method: 'POST', url, headers: user, payload: { up_to: missing, mark: 'seen' } });
    await call(401, { method: 'POST', url, payload: { up_to: id, mark: 'seen' } });
  },
  async getNotifyUnsubscribeByToken({ call }) {
    await call(200, { url: `/notify/unsubscribe/${unsubscribeToken(t.config.secret, 'u-unsub')}` });
    await call(400, { url: '/notify/unsubscribe/short' });
  },
  async postNotifyUnsubscribeByToken({ call }) {
    await call(200, {
      method: 'POST',
      url: `/notify/unsubscribe/${unsubscribeToken(t.config.secret, 'u-unsub')}`,
    });
    await call(404, { method: 'POST', url: `/notify/unsubscribe/u-unsub.${'A'.repeat(43)}` });
  },
  async getTemplates({ call }) {
    await call(200, { url: '/api/templates', headers: t.asAdmin });
    await call(400, { url: '/api/templates?channel=fax', headers: t.asAdmin });
    await call(401, { url: '/api/templates' });
  },
  async postTemplates({ call }) {
    await call(201, { method: 'POST', url: '/api/templates', headers: t.asAdmin, payload: template });
    await call(409, { method: 'POST', url: '/api/templates', headers: t.asAdmin, payload: template });
    await call(422, {
      method: 'POST',
      url: '/api/templates',
      headers: t.asAdmin,
      payload: { id: 'contract_bad.sms', body: 'Hello {{ name ' },
    });
    await call(400, { method: 'POST', url: '/api/templates', headers: t.asAdmin, payload: { id: 'x' } });
    await call(401, { method: 'POST', url: '/api/templates', headers: t.asService, payload: template });
    await call(403, { url: '/api/templates', headers: narrow });
  },
  async getTemplatesById({ call }) {
    await t.app.inject({
      method: 'PUT',
      url: `/api/templates/${template.id}`,
      headers: t.asAdmin,
      payload: { body: template.body },
    });
    await call(200, { url: `/api/templates/${template.id}`, headers: t.asAdmin });
    await call(404, { url: '/api/templates/nothing.sms', headers: t.asAdmin });
    await call(401, { url: `/api/templates/${template.id}` });
  },
  async putTemplatesById({ call }) {
    await call(201, {
      method: 'PUT',
      url: '/api/templates/contract_put.sms',
      headers: t.asAdmin,
      payload: { body: 'A' },
    });
    await call(200, {
      method: 'PUT',
      url: '/api/templates/contract_put.sms',
      headers: t.asAdmin,
      payload: { body: 'B' },
    });
    await call(422, {
      method: 'PUT',
      url: '/api/templates/contract_put.sms',
      headers: t.asAdmin,
      payload: { body: 'B', channel: 'email' },
    });
  },
  async deleteTemplatesById({ call }) {
    await t.app.inject({
      method: 'PUT',
      url: '/api/templates/contract_del.sms',
      headers: t.asAdmin,
      payload: { body: 'A' },
    });
    await call(204, { method: 'DELETE', url: '/api/templates/contract_del.sms', headers: t.asAdmin });
    await call(404, { method: 'DELETE', url: '/api/templates/contract_del.sms', headers: t.asAdmin });
  },
  async postTemplatesByIdPreview({ call }) {
    await t.app.inject({
      method: 'PUT',
      url: `/api/templates/${template.id}`,
      headers: t.asAdmin,
      payload: { body: template.body },
    });
    const url = `/api/templates/${template.id}/preview`;
    await call(200, { method: 'POST', url, headers: t.asAdmin, payload: { data: { name: 'Ada' } } });
    await call(422, { method: 'POST', url, headers: t.asAdmin, payload: { data: {} } });
    await call(404, {
      method: 'POST',
      url: '/api/templates/nothing.sms/preview',
      headers: t.asAdmin,
      payload: { data: {} },
    });
  },
  async postNotificationsReceiptsByProvider({ call }) {
    const receipt = (type: string) => {
      const id = randomUUID();
      const body = JSON.stringify({ id, type, data: { provider_message_id: `m-${id}` } });
      return { headers: { ...json, ...signWebhook(RECEIPT_SECRET, id, t.clock.now(), body) }, payload: body };
    };
    const url = '/api/notifications/receipts/http';
    await call(200, { method: 'POST', url, ...receipt('message.failed') });
    await call(404, { method: 'POST', url, ...receipt('message.delivered') });
    await call(401, { method: 'POST', url, headers: json, payload: '{}' });
  },
  async getNotificationsPushVapidPublicKey({ call }) {
    // The test app's push goes to the dev inbox: no Web Push, so no key.
    await call(404, { url: '/api/notifications/push/vapid-public-key' });
  },
  async getNotificationsInbox({ call }) {
    await call(200, { url: '/api/notifications/inbox', headers: t.asAdmin });
    await call(400, { url: '/api/notifications/inbox?limit=0', headers: t.asAdmin });
  },
  async getNotificationsInboxById({ call }) {
    await call(404, { url: `/api/notifications/inbox/${missing}`, headers: t.asAdmin });
    await call(400, { url: '/api/notifications/inbox/nope', headers: t.asAdmin });
  },

  // Payments
  async getPaymentsByPaymentId({ call }) {
    const { paymentId } = await fixtures.payment();
    await call(200, { url: `/api/v1/payments/${paymentId}` });
    await call(404, { url: '/api/v1/payments/pay_missing' });
  },
  async postPaymentsByPaymentIdPay({ call }) {
    const declined = await fixtures.payment();
    await call(402, {
      method: 'POST',
      url: `/api/v1/payments/${declined.paymentId}/pay`,
      headers: { 'idempotency-key': randomUUID() },
      payload: { payment_details: card(DECLINED) },
    });
    const { paymentId } = await fixtures.payment();
    const url = `/api/v1/payments/${paymentId}/pay`;
    await call(422, { method: 'POST', url, payload: { payment_details: { ...card(PAID), exp_month: 13 } } });
    await call(200, {
      method: 'POST',
      url,
      headers: { 'idempotency-key': randomUUID() },
      payload: { payment_details: card(PAID) },
    });
    await call(409, { method: 'POST', url, payload: { payment_details: card(PAID) } });
    await call(400, { method: 'POST', url, payload: {} });
    const unanswered = await fixtures.payment();
    await call(202, {
      method: 'POST',
      url: `/api/v1/payments/${unanswered.paymentId}/pay`,
      payload: { payment_details: card(TEST_CARDS.noAnswer) },
    });
  },
  async postPaymentsByPaymentIdRefund({ call }) {
    const { ticketId } = await fixtures.parked();
    const { paymentId } = await fixtures.unpark(ticketId);
    const url = `/api/v1/payments/${paymentId}/refund`;
    await call(200, {
      method: 'POST',
      url,
      headers: t.asAdmin,
      payload: { reason: 'contract', amount: 0.01 },
    });
    await call(409, {
      method: 'POST',
      url,
      headers: t.asAdmin,
      payload: { reason: 'contract', amount: 1_000_000 },
    });
    await call(422, {
      method: 'POST',
      url,
      headers: t.asAdmin,
      payload: { reason: 'contract', amount: 0.001 },
    });
    await call(404, {
      method: 'POST',
      url: '/api/v1/payments/pay_missing/refund',
      headers: t.asAdmin,
      payload: { reason: 'x' },
    });
    await call(401, { method: 'POST', url, payload: { reason: 'x' } });
  },
  async postPaymentsByPaymentIdSandboxSettle({ call }) {
    const pending = await fixtures.payment();
    const paid = await t.app.inject({
      method: 'POST',
      url: `/api/v1/payments/${pending.paymentId}/pay`,
      payload: { payment_details: card(TEST_CARDS.noAnswer) },
    });
    assert.equal(paid.statusCode, 202, paid.body);
    await call(200, {
      method: 'POST',
      url: `/api/v1/payments/${pending.paymentId}/sandbox/settle`,
      headers: t.asAdmin,
      payload: { outcome: 'succeeded' },
    });
    await call(404, {
      method: 'POST',
      url: '/api/v1/payments/pay_missing/sandbox/settle',
      headers: t.asAdmin,
      payload: { outcome: 'succeeded' },
    });
    const { paymentId } = await fixtures.payment();
    await call(409, {
      method: 'POST',
      url: `/api/v1/payments/${paymentId}/sandbox/settle`,
      headers: t.asAdmin,
      payload: { outcome: 'succeeded' },
    });
    await call(400, {
      method: 'POST',
      url: `/api/v1/payments/${paymentId}/sandbox/settle`,
      headers: t.asAdmin,
      payload: {},
    });
  },
  async postPaymentsWebhook({ call }) {
    const id = `evt_${randomUUID()}`;
    const body = JSON.stringify({
      id,
      type: 'charge.succeeded',
      data: { charge_id: 'ch_none', payment_id: 'pay_none' },
    });
    const signed = signWebhook(t.config.paymentWebhookSecret, id, t.clock.now(), body);
    const answer = await t.app.inject({
      method: 'POST',
      url: '/api/v1/payments/webhook',
      headers: { ...json, ...signed },
      payload: body,
    });
    // Whatever the event names, a signed one is either taken or refused as problem+json.
    await call(answer.statusCode, {
      method: 'POST',
      url: '/api/v1/payments/webhook',
      headers: { ...json, ...signed },
      payload: body,
    });
    await call(401, { method: 'POST', url: '/api/v1/payments/webhook', headers: json, payload: body });
    await call(415, {
      method: 'POST',
      url: '/api/v1/payments/webhook',
      headers: { ...signed, 'content-type': 'application/xml' },
      payload: body,
    });
  },

  // Booking: catalogue
  async getCities({ call }) {
    await fixtures.seeded();
    await call(200, { url: '/api/v1/cities' });
  },
  async getCitiesByIdShows({ call }) {
    const { cityId } = await fixtures.seeded();
    await call(200, { url: `/api/v1/cities/${cityId}/shows` });
    await call(400, { url: `/api/v1/cities/${cityId}/shows?date=never` });
    await call(404, { url: '/api/v1/cities/Atlantis/shows' });
  },
  async getMoviesById({ call }) {
    const { movieId } = await fixtures.seeded();
    const read = await call(200, { url: `/api/v1/movies/${movieId}` });
    await call(304, {
      url: `/api/v1/movies/${movieId}`,
      headers: { 'if-none-match': String(read.headers.etag) },
    });
    await call(404, { url: `/api/v1/movies/${missing}` });
    await call(400, { url: '/api/v1/movies/nope' });
  },
  async getMoviesByIdShows({ call }) {
    const { movieId } = await fixtures.seeded();
    await call(200, { url: `/api/v1/movies/${movieId}/shows` });
    await call(404, { url: `/api/v1/movies/${missing}/shows` });
  },
  async getTheatersById({ call }) {
    const { theaterId } = await fixtures.seeded();
    await call(200, { url: `/api/v1/theaters/${theaterId}` });
    await call(404, { url: `/api/v1/theaters/${missing}` });
  },
  async getShowsById({ call }) {
    const { showId } = await fixtures.seeded();
    await call(200, { url: `/api/v1/shows/${showId}` });
    await call(404, { url: `/api/v1/shows/${missing}` });
  },
  async postAdminCities({ call }) {
    const name = `Contract City ${randomUUID()}`;
    await call(201, { method: 'POST', url: '/api/v1/admin/cities', headers: t.asAdmin, payload: { name } });
    await call(409, { method: 'POST', url: '/api/v1/admin/cities', headers: t.asAdmin, payload: { name } });
    await call(400, { method: 'POST', url: '/api/v1/admin/cities', headers: t.asAdmin, payload: {} });
    await call(401, { method: 'POST', url: '/api/v1/admin/cities', payload: { name } });
  },
  async postAdminMovies({ call }) {
    const movie = {
      title: 'Contract',
      duration_minutes: 90,
      language: 'English',
      genres: ['Drama'],
      release_date: '2025-01-01',
    };
    await call(201, { method: 'POST', url: '/api/v1/admin/movies', headers: t.asAdmin, payload: movie });
    await call(400, {
      method: 'POST',
      url: '/api/v1/admin/movies',
      headers: t.asAdmin,
      payload: { ...movie, genres: [] },
    });
  },
  async patchAdminMoviesById({ call }) {
    const { movieId } = await fixtures.seeded();
    await call(200, {
      method: 'PATCH',
      url: `/api/v1/admin/movies/${movieId}`,
      headers: t.asAdmin,
      payload: { rating: 8 },
    });
    await call(404, {
      method: 'PATCH',
      url: `/api/v1/admin/movies/${missing}`,
      headers: t.asAdmin,
      payload: { rating: 8 },
    });
  },
  async postAdminTheaters({ call }) {
    const { cityId } = await fixtures.seeded();
    await call(201, {
      method: 'POST',
      url: '/api/v1/admin/theaters',
      headers: t.asAdmin,
      payload: theaterBody(cityId),
    });
    await call(404, {
      method: 'POST',
      url: '/api/v1/admin/theaters',
      headers: t.asAdmin,
      payload: theaterBody(missing),
    });
  },
  async postAdminTheatersByIdScreens({ call }) {
    const { theaterId } = await fixtures.seeded();
    const screen = {
      screen_number: 7,
      screen_type: 'IMAX',
      rows: [{ row: 'A', seats: 2, seat_type: 'REGULAR' }],
      prices: { REGULAR: 1 },
    };
    const url = `/api/v1/admin/theaters/${theaterId}/screens`;
    await call(201, { method: 'POST', url, headers: t.asAdmin, payload: screen });
    await call(409, { method: 'POST', url, headers: t.asAdmin, payload: screen });
    await call(404, {
      method: 'POST',
      url: `/api/v1/admin/theaters/${missing}/screens`,
      headers: t.asAdmin,
      payload: screen,
    });
  },
  async postAdminShows({ call }) {
    const { movieId, screenId } = await fixtures.seeded();
    const show = {
      movie_id: movieId,
      screen_id: screenId,
      show_time: new Date(t.clock.now().getTime() + 10 * 86_400_000).toISOString(),
    };
    await call(201, { method: 'POST', url: '/api/v1/admin/shows', headers: t.asAdmin, payload: show });
    await call(409, { method: 'POST', url: '/api/v1/admin/shows', headers: t.asAdmin, payload: show });
    await call(404, {
      method: 'POST',
      url: '/api/v1/admin/shows',
      headers: t.asAdmin,
      payload: { ...show, movie_id: missing },
    });
  },
  async patchAdminShowsById({ call }) {
    const { showId } = await fixtures.seeded();
    await call(200, {
      method: 'PATCH',
      url: `/api/v1/admin/shows/${showId}`,
      headers: t.asAdmin,
      payload: { is_hot: false },
    });
    await call(404, {
      method: 'PATCH',
      url: `/api/v1/admin/shows/${missing}`,
      headers: t.asAdmin,
      payload: { is_hot: false },
    });
  },
  async getMovies({ call }) {
    await fixtures.seeded();
    await call(200, { url: '/api/v1/movies?q=test' });
    await call(400, { url: '/api/v1/movies?sort=nope' });
  },
  async getMoviesSuggest({ call }) {
    await call(200, { url: '/api/v1/movies/suggest?q=tes' });
    await call(400, { url: '/api/v1/movies/suggest' });
  },

  // Booking: seats, holds, bookings
  async getShowsByIdSeats({ call }) {
    const { showId } = await fixtures.seeded();
    const map = await call(200, { url: `/api/v1/shows/${showId}/seats` });
    await call(304, {
      url: `/api/v1/shows/${showId}/seats`,
      headers: { 'if-none-match': String(map.headers.etag) },
    });
    await call(404, { url: `/api/v1/shows/${missing}/seats` });
  },
  async postShowsByIdHold({ call, user, userId }) {
    const { showId } = await fixtures.seeded();
    const url = `/api/v1/shows/${showId}/hold`;
    await call(201, { method: 'POST', url, headers: user, payload: { seat_ids: ['A1'] } });
    await call(409, { method: 'POST', url, headers: t.asUser(randomUUID()), payload: { seat_ids: ['A1'] } });
    await call(422, { method: 'POST', url, headers: user, payload: { seat_ids: ['Z99'] } });
    await call(400, { method: 'POST', url, headers: user, payload: { seat_ids: [] } });
    await call(401, { method: 'POST', url, payload: { seat_ids: ['A2'] } });
    await call(403, {
      method: 'POST',
      url,
      headers: user,
      payload: { seat_ids: ['A2'], user_id: randomUUID() },
    });
    await call(404, {
      method: 'POST',
      url: `/api/v1/shows/${missing}/hold`,
      headers: user,
      payload: { seat_ids: ['A2'] },
    });
    assert.ok(userId);
  },
  async getShowsByIdSeatsEvents({ call }) {
    // An endless event stream: its success case is seats/live.test.ts and the seat map's browser test.
    await call(404, { url: `/api/v1/shows/${missing}/seats/events` });
  },
  async getHolds({ call }) {
    const owner = randomUUID();
    const held = await fixtures.hold(owner, ['A5']);
    const listed = await call(200, {
      url: `/api/v1/holds?show_id=${held.show_id}`,
      headers: t.asUser(owner),
    });
    assert.deepEqual(
      listed.json().holds.map((hold: { hold_id: string }) => hold.hold_id),
      [held.hold_id],
    );
    const other = await call(200, { url: '/api/v1/holds', headers: t.asUser(randomUUID()) });
    assert.deepEqual(other.json().holds, [], "another user's holds are not listed");
    await call(400, { url: '/api/v1/holds?show_id=nope', headers: t.asUser(owner) });
    await call(401, { url: '/api/v1/holds' });
  },
  async getHoldsById({ call }) {
    const owner = randomUUID();
    const held = await fixtures.hold(owner, ['A3']);
    await call(200, { url: `/api/v1/holds/${held.hold_id}`, headers: t.asUser(owner) });
    await call(404, { url: `/api/v1/holds/${held.hold_id}`, headers: t.asUser(randomUUID()) });
  },
  async deleteHoldsById({ call }) {
    const owner = randomUUID();
    const held = await fixtures.hold(owner, ['A4']);
    await call(200, { method: 'DELETE', url: `/api/v1/holds/${held.hold_id}`, headers: t.asUser(owner) });
    await call(404, { method: 'DELETE', url: `/api/v1/holds/${missing}`, headers: t.asUser(owner) });
  },
  async getAdminShowsByIdIntegrity({ call }) {
    const { showId } = await fixtures.seeded();
    await call(200, { url: `/api/v1/admin/shows/${showId}/integrity`, headers: t.asAdmin });
    await call(401, { url: `/api/v1/admin/shows/${showId}/integrity`, headers: t.asService });
  },
  async getShowsByIdQueue({ call, user }) {
    const { showId } = await fixtures.seeded();
    await call(200, { url: `/api/v1/shows/${showId}/queue`, headers: user });
    await call(401, { url: `/api/v1/shows/${showId}/queue` });
    await call(404, { url: `/api/v1/shows/${missing}/queue`, headers: user });
  },
  async getShowsByIdQueueEvents({ call, user }) {
    // A show without a waiting room: one event (NOT_REQUIRED) and the stream ends.
    const { showId } = await fixtures.seeded();
    await call(200, { url: `/api/v1/shows/${showId}/queue/events`, headers: user });
    await call(401, { url: `/api/v1/shows/${missing}/queue/events` });
    await call(404, { url: `/api/v1/shows/${missing}/queue/events`, headers: user });
  },
  async postBookings({ call }) {
    const owner = randomUUID();
    const headers = { ...t.asUser(owner), 'idempotency-key': randomUUID() };
    const held = await fixtures.hold(owner, ['B1']);
    const body = { hold_id: held.hold_id, payment_method: 'CARD', payment_details: card(PAID) };
    await call(201, { method: 'POST', url: '/api/v1/bookings', headers, payload: body });
    await call(201, { method: 'POST', url: '/api/v1/bookings', headers, payload: body });
    await call(422, {
      method: 'POST',
      url: '/api/v1/bookings',
      headers,
      payload: { ...body, hold_id: missing },
    });
    await call(409, {
      method: 'POST',
      url: '/api/v1/bookings',
      headers: { ...t.asUser(owner), 'idempotency-key': randomUUID() },
      payload: body,
    });
    const declined = await fixtures.hold(owner, ['B2']);
    await call(402, {
      method: 'POST',
      url: '/api/v1/bookings',
      headers: { ...t.asUser(owner), 'idempotency-key': randomUUID() },
      payload: { ...body, hold_id: declined.hold_id, payment_details: card(DECLINED) },
    });
    // A hold paid for after its 10 minutes (the clock moves on; nothing else here depends on it).
    const late = randomUUID();
    const lapsed = await fixtures.hold(late, ['C9']);
    t.clock.advance(11 * 60_000);
    await call(410, {
      method: 'POST',
      url: '/api/v1/bookings',
      headers: { ...t.asUser(late), 'idempotency-key': randomUUID() },
      payload: { ...body, hold_id: lapsed.hold_id },
    });
    await call(400, { method: 'POST', url: '/api/v1/bookings', headers: t.asUser(owner), payload: body });
    await call(404, {
      method: 'POST',
      url: '/api/v1/bookings',
      headers: { ...t.asUser(owner), 'idempotency-key': randomUUID() },
      payload: { ...body, hold_id: missing },
    });
    await call(401, {
      method: 'POST',
      url: '/api/v1/bookings',
      headers: { 'idempotency-key': randomUUID() },
      payload: body,
    });
  },
  async getBookingsById({ call }) {
    const owner = randomUUID();
    const booking = await fixtures.booking(owner, 'B3');
    await call(200, { url: `/api/v1/bookings/${booking.booking_id}`, headers: t.asUser(owner) });
    await call(200, { url: `/api/v1/bookings/${booking.booking_id}`, headers: t.asService });
    await call(404, { url: `/api/v1/bookings/${booking.booking_id}`, headers: t.asUser(randomUUID()) });
  },
  async getUsersByIdBookings({ call }) {
    const owner = randomUUID();
    await call(200, { url: `/api/v1/users/${owner}/bookings`, headers: t.asUser(owner) });
    await call(404, { url: `/api/v1/users/${owner}/bookings`, headers: t.asUser(randomUUID()) });
    await call(400, { url: '/api/v1/users/nope/bookings', headers: t.asService });
  },
  async postBookingsByIdCancel({ call }) {
    const owner = randomUUID();
    const booking = await fixtures.booking(owner, 'B4');
    const url = `/api/v1/bookings/${booking.booking_id}/cancel`;
    await call(403, { method: 'POST', url, headers: t.asUser(owner), payload: { user_id: randomUUID() } });
    await call(200, { method: 'POST', url, headers: t.asUser(owner), payload: {} });
    await call(409, { method: 'POST', url, headers: t.asUser(owner), payload: {} });
    await call(404, {
      method: 'POST',
      url: `/api/v1/bookings/${missing}/cancel`,
      headers: t.asUser(owner),
      payload: {},
    });
  },
  async postShowsByIdCancel({ call }) {
    const { movieId, screenId } = await fixtures.seeded();
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/admin/shows',
      headers: t.asAdmin,
      payload: {
        movie_id: movieId,
        screen_id: screenId,
        show_time: new Date(t.clock.now().getTime() + 20 * 86_400_000).toISOString(),
      },
    });
    const showId = created.json().show_id as string;
    await call(200, {
      method: 'POST',
      url: `/api/v1/shows/${showId}/cancel`,
      headers: t.asAdmin,
      payload: {},
    });
    await call(404, {
      method: 'POST',
      url: `/api/v1/shows/${missing}/cancel`,
      headers: t.asAdmin,
      payload: {},
    });
  },
  async getTicketsByToken({ call }) {
    const booking = await fixtures.booking(randomUUID(), 'B5');
    await call(200, {
      url: `/api/v1/tickets/${encodeURIComponent(booking.ticket_token)}`,
      headers: t.asOperator,
    });
    await call(401, { url: '/api/v1/tickets/anything' });
  },
  async postTicketsCheck({ call }) {
    const booking = await fixtures.booking(randomUUID(), 'B6');
    await call(200, {
      method: 'POST',
      url: '/api/v1/tickets/check',
      headers: t.asOperator,
      payload: { token: booking.ticket_token },
    });
    await call(404, {
      method: 'POST',
      url: '/api/v1/tickets/check',
      headers: t.asOperator,
      payload: { token: 'forged' },
    });
    await call(400, { method: 'POST', url: '/api/v1/tickets/check', headers: t.asOperator, payload: {} });
  },
  async postTicketsByTokenCheckIn({ call }) {
    const { showId } = await fixtures.seeded();
    const owner = randomUUID();
    const booking = await fixtures.booking(owner, 'B7');
    const url = `/api/v1/tickets/${encodeURIComponent(booking.ticket_token)}/check-in`;
    const headers = t.asOperator;
    await call(422, { method: 'POST', url, headers, payload: { show_id: missing, door: 'Main' } });
    await call(200, { method: 'POST', url, headers, payload: { show_id: showId, door: 'Main' } });
    await call(409, { method: 'POST', url, headers, payload: { show_id: showId, door: 'Side' } });
    const cancelled = await fixtures.booking(owner, 'B8');
    const cancel = await t.app.inject({
      method: 'POST',
      url: `/api/v1/bookings/${cancelled.booking_id}/cancel`,
      headers: t.asUser(owner),
      payload: { accept_no_refund: true },
    });
    assert.equal(cancel.statusCode, 200, cancel.body);
    await call(410, {
      method: 'POST',
      url: `/api/v1/tickets/${encodeURIComponent(cancelled.ticket_token)}/check-in`,
      headers,
      payload: { show_id: showId, door: 'Main' },
    });
    await call(404, {
      method: 'POST',
      url: '/api/v1/tickets/forged/check-in',
      headers,
      payload: { show_id: showId, door: 'Main' },
    });
    await call(400, { method: 'POST', url, headers, payload: { show_id: showId } });
    await call(401, { method: 'POST', url, payload: { show_id: showId, door: 'Main' } });
  },
  async postTicketsCheckIn({ call }) {
    const { showId } = await fixtures.seeded();
    const booking = await fixtures.booking(randomUUID(), 'B9');
    const url = '/api/v1/tickets/check-in';
    const headers = t.asOperator;
    const payload = { token: booking.ticket_token, show_id: showId, door: 'Main' };
    await call(422, { method: 'POST', url, headers, payload: { ...payload, show_id: missing } });
    await call(200, { method: 'POST', url, headers, payload });
    await call(409, { method: 'POST', url, headers, payload });
    await call(404, { method: 'POST', url, headers, payload: { ...payload, token: 'forged' } });
    await call(400, { method: 'POST', url, headers, payload: { token: booking.ticket_token } });
  },

  // Parking
  async postParkingEntry({ call }) {
    const plate = `E${randomUUID().slice(0, 6)}`;
    const ticket = await call(201, {
      method: 'POST',
      url: '/api/v1/parking/entry',
      headers: t.asOperator,
      payload: { licensePlate: plate, vehicleType: 'CAR' },
    });
    await call(409, {
      method: 'POST',
      url: '/api/v1/parking/entry',
      headers: t.asOperator,
      payload: { licensePlate: plate, vehicleType: 'CAR' },
    });
    await call(422, {
      method: 'POST',
      url: '/api/v1/parking/entry',
      headers: t.asOperator,
      payload: { licensePlate: 'X1', vehicleType: 'CAR', panelId: 'nowhere' },
    });
    await call(400, {
      method: 'POST',
      url: '/api/v1/parking/entry',
      headers: t.asOperator,
      payload: { licensePlate: 'X1', vehicleType: 'TANK' },
    });
    await call(401, {
      method: 'POST',
      url: '/api/v1/parking/entry',
      payload: { licensePlate: 'X1', vehicleType: 'CAR' },
    });
    await call(401, {
      method: 'POST',
      url: '/api/v1/parking/entry',
      headers: t.asService,
      payload: { licensePlate: 'X1', vehicleType: 'CAR' },
    });
    await fixtures.unpark(ticket.json().ticketId);
  },
  async postParkingExit({ call }) {
    const { ticketId } = await fixtures.parked();
    const url = '/api/v1/parking/exit';
    await call(200, { method: 'POST', url, headers: t.asOperator, payload: { ticketId } });
    await call(402, {
      method: 'POST',
      url,
      headers: { ...t.asOperator, 'idempotency-key': randomUUID() },
      payload: { ticketId, payment: card(DECLINED) },
    });
    await call(400, {
      method: 'POST',
      url,
      headers: t.asOperator,
      payload: { ticketId, payment: card(PAID) },
    });
    const key = randomUUID();
    await call(200, {
      method: 'POST',
      url,
      headers: { ...t.asOperator, 'idempotency-key': key },
      payload: { ticketId, payment: card(PAID) },
    });
    await call(200, {
      method: 'POST',
      url,
      headers: { ...t.asOperator, 'idempotency-key': key },
      payload: { ticketId, payment: card(PAID) },
    });
    await call(422, {
      method: 'POST',
      url,
      headers: { ...t.asOperator, 'idempotency-key': key },
      payload: { ticketId: missing, payment: card(PAID) },
    });
    await call(404, { method: 'POST', url, headers: t.asOperator, payload: { ticketId: missing } });
  },
  async postParkingTicketsLost({ call }) {
    const { plate } = await fixtures.parked();
    const url = '/api/v1/parking/tickets/lost';
    await call(200, { method: 'POST', url, headers: t.asOperator, payload: { licensePlate: plate } });
    await call(200, {
      method: 'POST',
      url,
      headers: { ...t.asOperator, 'idempotency-key': randomUUID() },
      payload: { licensePlate: plate, payment: card(PAID) },
    });
    await call(404, { method: 'POST', url, headers: t.asOperator, payload: { licensePlate: 'NOSUCH' } });
  },
  async getParkingTicketsByTicketId({ call }) {
    const { ticketId } = await fixtures.parked();
    const ticket = await call(200, { url: `/api/v1/parking/tickets/${ticketId}` });
    await call(200, { url: `/api/v1/parking/tickets/${ticket.json().code}` });
    await call(404, { url: `/api/v1/parking/tickets/${missing}` });
    await call(404, { url: '/api/v1/parking/tickets/nope' });
    await call(400, { url: `/api/v1/parking/tickets/${'x'.repeat(65)}` });
    await fixtures.unpark(ticketId);
  },
  async getParkingTicketsByTicketIdEvents({ call, stream }) {
    const { ticketId } = await fixtures.parked();
    await stream(200, `/api/v1/parking/tickets/${ticketId}/events`);
    await fixtures.unpark(ticketId);
    await call(404, { url: `/api/v1/parking/tickets/${missing}/events` });
    await call(404, { url: '/api/v1/parking/tickets/nope/events' });
    await call(400, { url: `/api/v1/parking/tickets/${'x'.repeat(65)}/events` });
  },
  async getParkingTicketsByTicketIdQr({ call }) {
    const { ticketId } = await fixtures.parked();
    await call(200, { url: `/api/v1/parking/tickets/${ticketId}/qr` });
    await call(404, { url: `/api/v1/parking/tickets/${missing}/qr` });
    await call(400, { url: `/api/v1/parking/tickets/${'x'.repeat(65)}/qr` });
    await fixtures.unpark(ticketId);
  },
  async getParkingTicketsByTicketIdPaymentQr({ call }) {
    const { ticketId } = await fixtures.parked();
    await call(409, { url: `/api/v1/parking/tickets/${ticketId}/payment-qr` });
    // An amount asked at the exit: now a payment is waiting (the exit's own answer is its case's).
    await t.app.inject({
      method: 'POST',
      url: '/api/v1/parking/exit',
      headers: t.asOperator,
      payload: { ticketId },
    });
    await call(200, { url: `/api/v1/parking/tickets/${ticketId}/payment-qr` });
    await call(404, { url: `/api/v1/parking/tickets/${missing}/payment-qr` });
    await call(400, { url: `/api/v1/parking/tickets/${'x'.repeat(65)}/payment-qr` });
    await fixtures.unpark(ticketId);
  },
  async getParkingTicketsByTicketIdReceipt({ call }) {
    const { ticketId } = await fixtures.parked();
    await call(409, { url: `/api/v1/parking/tickets/${ticketId}/receipt` });
    await fixtures.unpark(ticketId);
    await call(200, { url: `/api/v1/parking/tickets/${ticketId}/receipt` });
    await call(404, { url: `/api/v1/parking/tickets/${missing}/receipt` });
    await call(400, { url: `/api/v1/parking/tickets/${'x'.repeat(65)}/receipt` });
  },
  async postParkingTicketsByTicketIdRefund({ call }) {
    const { ticketId } = await fixtures.parked();
    await fixtures.unpark(ticketId);
    const url = `/api/v1/parking/tickets/${ticketId}/refund`;
    await call(200, { method: 'POST', url, headers: t.asAdmin, payload: { reason: 'contract' } });
    await call(404, {
      method: 'POST',
      url: `/api/v1/parking/tickets/${missing}/refund`,
      headers: t.asAdmin,
      payload: { reason: 'x' },
    });
  },
  async getParkingAvailability({ call }) {
    const read = await call(200, { url: '/api/v1/parking/availability' });
    await call(304, {
      url: '/api/v1/parking/availability',
      headers: { 'if-none-match': String(read.headers.etag) },
    });
  },
  async getParkingBoards({ call }) {
    await call(200, { url: '/api/v1/parking/boards' });
  },
  async getParkingBoardsStream({ stream }) {
    await stream(200, '/api/v1/parking/boards/stream');
  },
  async getParkingLot({ call }) {
    await call(200, { url: '/api/v1/parking/lot' });
  },
  async postParkingReservations({ call, user }) {
    const url = '/api/v1/parking/reservations';
    const payload = {
      ...fixtures.window(48),
      licensePlate: `R${randomUUID().slice(0, 6)}`,
      vehicleType: 'CAR',
    };
    await call(201, { method: 'POST', url, headers: user, payload });
    await call(409, { method: 'POST', url, headers: user, payload });
    await call(422, { method: 'POST', url, headers: user, payload: { ...payload, ...fixtures.window(-2) } });
    await call(400, { method: 'POST', url, headers: user, payload: { ...payload, spotType: 'TRUCK' } });
    await call(401, { method: 'POST', url, payload });
  },
  async getParkingReservations({ call, user }) {
    await fixtures.reservation(user, 72);
    await call(200, { url: '/api/v1/parking/reservations', headers: user });
    await call(401, { url: '/api/v1/parking/reservations' });
  },
  async getParkingReservationsAvailability({ call }) {
    const url = '/api/v1/parking/reservations/availability';
    const window = fixtures.window(24);
    await call(200, {
      url: `${url}?spotType=LARGE&startsAt=${window.startsAt}&endsAt=${window.endsAt}&vehicleType=BUS`,
    });
    await call(422, { url: `${url}?spotType=LARGE&startsAt=${window.endsAt}&endsAt=${window.startsAt}` });
    await call(400, { url: `${url}?startsAt=${window.startsAt}&endsAt=${window.endsAt}` });
  },
  async getParkingReservationsById({ call, user }) {
    const id = await fixtures.reservation(user, 96);
    await call(200, { url: `/api/v1/parking/reservations/${id}`, headers: user });
    await call(404, { url: `/api/v1/parking/reservations/${id}`, headers: t.asUser(randomUUID()) });
    await call(400, { url: '/api/v1/parking/reservations/nope', headers: user });
  },
  async deleteParkingReservationsById({ call, user }) {
    const id = await fixtures.reservation(user, 120);
    await call(200, { method: 'DELETE', url: `/api/v1/parking/reservations/${id}`, headers: user });
    await call(404, {
      method: 'DELETE',
      url: `/api/v1/parking/reservations/${id}`,
      headers: t.asUser(randomUUID()),
    });
    // Used: its plate entered (held at booking, starting in half an hour), no longer cancellable.
    const plate = `U${randomUUID().slice(0, 6)}`;
    const soon = await fixtures.reservation(user, 0.5, plate);
    const { ticketId } = await fixtures.parked(plate);
    await call(409, { method: 'DELETE', url: `/api/v1/parking/reservations/${soon}`, headers: user });
    await fixtures.unpark(ticketId);
  },
};

test('every operation of /openapi.json answers as it documents, success and errors', async () => {
  const operations = operationsOf(spec);
  assert.ok(operations.size > 70, 'the app has every service');
  assert.deepEqual(
    [...operations.keys()].filter((id) => !(id in CASES)),
    [],
    'operations without requests in CASES',
  );
  assert.deepEqual(
    Object.keys(CASES).filter((id) => !operations.has(id)),
    [],
    'CASES entries of no operation',
  );
  const check = contractValidator(spec);
  const wrong: string[] = [];
  let answers = 0;
  for (const [operationId, drive] of Object.entries(CASES)) {
    const located = operations.get(operationId) as LocatedOperation;
    const call: Call = async (expected, request) => {
      const response = await t.app.inject(request);
      answers++;
      const where = `${operationId} ${request.method ?? 'GET'} ${request.url}`;
      if (response.statusCode !== expected) {
        wrong.push(`${where}: ${response.statusCode}, expected ${expected}: ${response.body.slice(0, 300)}`);
      }
      for (const problem of check(located, response)) wrong.push(`${where}: ${problem}`);
      return response;
    };
    const stream = async (expected: number, url: string, headers: Record<string, string> = {}) => {
      const answer = await firstEvent(base, url, headers);
      answers++;
      const where = `${operationId} GET ${url} (stream)`;
      if (answer.statusCode !== expected) wrong.push(`${where}: ${answer.statusCode}, expected ${expected}`);
      for (const problem of check(located, answer)) wrong.push(`${where}: ${problem}`);
      if (expected === 200 && !/^(event|data|id|retry|:)/m.test(answer.body)) {
        wrong.push(`${where}: no event in ${answer.body.slice(0, 200)}`);
      }
    };
    const userId = randomUUID();
    await drive({ call, stream, user: t.asUser(userId), userId }).catch((error: Error) => {
      wrong.push(`${operationId}: ${error.stack}`);
    });
  }
  assert.deepEqual(wrong, [], `${wrong.length} of ${answers} answers differ from the document`);
});
