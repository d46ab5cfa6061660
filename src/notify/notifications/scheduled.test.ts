import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually, type NotifyTestApp, notifyTestApp } from '../../../test/support/notify.ts';

/**
 * Scheduled sends (`send_at`) and cancellation (`DELETE /api/notifications/{id}`) on a moved
 * clock, with the app's workers and the outbox sweep (`notify.publish_due`) as the scheduler runs it.
 */
let t: NotifyTestApp;
before(async () => {
  t = await notifyTestApp({ workers: true });
});
after(() => t.close());

const HOUR = 3600_000;
const DAY = 24 * HOUR;

async function user() {
  const userId = `s-${randomUUID().slice(0, 8)}`;
  await t.setPreferences(userId, { email: `${userId}@example.com` });
  return userId;
}

const at = (offsetMs: number) => new Date(t.clock.now().getTime() + offsetMs).toISOString();
const order = (userId: string, extra: Record<string, unknown> = {}) => ({
  user_id: userId,
  type: 'order_update',
  channels: ['email'],
  data: { order_id: 'o-1' },
  ...extra,
});
const emailOf = async (id: string) => {
  const view = (await t.inject(`/api/notifications/${id}`)).json();
  return view.channels.find((c: { channel: string }) => c.channel === 'email');
};
const sentTo = (userId: string) => t.provider.sent.filter((m) => m.recipient.userId === userId);
const cancel = (id: string, headers: Record<string, string> = t.asService) =>
  t.app.inject({ method: 'DELETE', url: `/api/notifications/${id}`, headers });
const storedFor = async (userId: string) =>
  (await t.inject(`/api/users/${userId}/notifications`)).json().notifications.length;

describe('send_at', () => {
  test('the notification waits scheduled until send_at, then goes once, whichever sweeps run', async () => {
    const userId = await user();
    const sendAt = at(2 * HOUR);
    const response = await t.send(order(userId, { send_at: sendAt }));
    assert.equal(response.statusCode, 202, response.body);
    assert.deepEqual(response.json().channels, [
      { channel: 'email', status: 'scheduled', reason: 'send_at' },
    ]);
    const id = response.json().id;
    assert.equal((await emailOf(id)).scheduled_for, sendAt);

    t.clock.advance(2 * HOUR - 60_000);
    await t.publishDue();
    await sleep(200);
    assert.equal(sentTo(userId).length, 0, 'a minute before send_at nothing goes');
    assert.equal((await emailOf(id)).status, 'scheduled');

    t.clock.advance(60_000);
    // Two sweeps at once, as two scheduler instances would run them if the tick's lock failed:
    // the queue's message id and the worker's claim keep it to one send.
    await Promise.all([t.publishDue(), t.publishDue()]);
    await eventually(async () => (await emailOf(id)).status === 'sent');
    await t.publishDue();
    await sleep(200);
    assert.equal(sentTo(userId).length, 1);
    assert.equal(sentTo(userId)[0].deliveryId, `${id}:email`);
  });

  test('a send_at in the past (beyond a minute), beyond 30 days or not RFC 3339 is refused; nothing stored', async () => {
    const userId = await user();
    const past = await t.send(order(userId, { send_at: at(-5 * 60_000) }));
    assert.equal(past.statusCode, 422, past.body);
    assert.equal(past.json().code, 'invalid_send_at');
    const far = await t.send(order(userId, { send_at: at(30 * DAY + 60_000) }));
    assert.equal(far.statusCode, 422, far.body);
    assert.equal(far.json().code, 'invalid_send_at');
    assert.ok(far.json().latest);
    for (const sendAt of ['tomorrow', '2030-01-01', '2030-01-01 10:00']) {
      const bad = await t.send(order(userId, { send_at: sendAt }));
      assert.equal(bad.statusCode, 400, `${sendAt}: ${bad.body}`);
    }
    const batch = await t.inject({
      method: 'POST',
      url: '/api/notifications/batch',
      payload: {
        type: 'order_update',
        channels: ['email'],
        data: { order_id: 'b' },
        user_ids: [userId],
        send_at: at(-HOUR),
      },
    });
    assert.equal(batch.statusCode, 422, batch.body);
    assert.equal(await storedFor(userId), 0);
    const limits = (await t.inject(`/api/users/${userId}/notification-limits`)).json();
    const email = limits.limits.find((l: { channel: string }) => l.channel === 'email');
    assert.equal(email.remaining, email.limit, 'nothing spent');

    // Within the minute of skew it means now; 30 days ahead exactly is allowed.
    const skewed = await t.send(order(userId, { send_at: at(-30_000) }));
    assert.equal(skewed.json().channels[0].status, 'queued', skewed.body);
    const latest = await t.send(order(userId, { send_at: at(30 * DAY) }));
    assert.equal(latest.json().channels[0].status, 'scheduled', latest.body);
  });

  test('a replay of a scheduled request answers as the first, also after send_at has passed', async () => {
    const userId = await user();
    const body = order(userId, { id: 'sched-1', send_at: at(HOUR) });
    const first = await t.send(body);
    assert.equal(first.statusCode, 202, first.body);
    t.clock.advance(2 * HOUR);
    const again = await t.send(body);
    assert.equal(again.statusCode, 202, again.body);
    assert.equal(again.json().id, first.json().id);
  });
});

describe('DELETE /api/notifications/{id}', () => {
  test('a scheduled notification is cancelled: 204, status cancelled, never sent when due; again 204', async () => {
    const userId = await user();
    const kept = (await t.send(order(userId, { send_at: at(HOUR) }))).json().id;
    const id = (await t.send(order(userId, { send_at: at(HOUR), data: { order_id: 'o-2' } }))).json().id;
    const response = await cancel(id);
    assert.equal(response.statusCode, 204, response.body);
    assert.equal(response.body, '');
    assert.deepEqual(
      { status: (await emailOf(id)).status, reason: (await emailOf(id)).reason },
      { status: 'cancelled', reason: 'cancelled' },
    );
    assert.equal((await cancel(id, t.asAdmin)).statusCode, 204, 'a repeated cancel');

    t.clock.advance(HOUR);
    await t.publishDue();
    await eventually(async () => (await emailOf(kept)).status === 'sent');
    await sleep(200);
    assert.deepEqual(
      sentTo(userId).map((m) => m.notificationId),
      [kept],
      'the other one went; the cancelled one did not',
    );
    assert.equal((await emailOf(id)).status, 'cancelled');
  });

  test('409 once sent, 404 for an unknown or malformed id, 401/403 for callers who may not send', async () => {
    const userId = await user();
    const id = (await t.send(order(userId))).json().id;
    await eventually(async () => (await emailOf(id)).status === 'sent');
    const sent = await cancel(id);
    assert.equal(sent.statusCode, 409, sent.body);
    assert.equal(sent.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.equal(sent.json().code, 'notification_not_cancellable');
    assert.deepEqual(sent.json().channels, [{ channel: 'email', status: 'sent' }]);
    assert.equal((await cancel(randomUUID())).json().code, 'notification_not_found');
    assert.equal((await cancel(randomUUID())).statusCode, 404);
    assert.equal((await cancel('not-a-uuid')).statusCode, 404);

    const scheduled = (await t.send(order(userId, { send_at: at(HOUR) }))).json().id;
    assert.equal((await cancel(scheduled, {})).statusCode, 401);
    assert.equal((await cancel(scheduled, t.asUser(userId))).statusCode, 401, "a user's token cannot cancel");
    assert.equal((await emailOf(scheduled)).status, 'scheduled', 'refused cancels change nothing');
  });

  test('only pending channels are cancelled: one being sent or sent stays, the scheduled one goes', async () => {
    const userId = `s-${randomUUID().slice(0, 8)}`;
    await t.setPreferences(userId, {
      email: `${userId}@example.com`,
      phone: '+15551234567',
      timezone: 'UTC',
      // Quiet all day but this minute's hour: SMS waits, e-mail (never held) goes.
      quiet_hours_start: new Date(t.clock.now().getTime() - HOUR).toISOString().slice(11, 16),
      quiet_hours_end: new Date(t.clock.now().getTime() + HOUR).toISOString().slice(11, 16),
    });
    const response = await t.send(order(userId, { channels: ['email', 'sms'] }));
    const id = response.json().id;
    assert.deepEqual(
      response.json().channels.map((c: { status: string }) => c.status),
      ['queued', 'scheduled'],
    );
    await eventually(async () => (await emailOf(id)).status === 'sent');
    assert.equal((await cancel(id)).statusCode, 204);
    const view = (await t.inject(`/api/notifications/${id}`)).json();
    assert.deepEqual(
      view.channels.map((c: { channel: string; status: string }) => [c.channel, c.status]),
      [
        ['sms', 'cancelled'],
        ['email', 'sent'],
      ],
    );
    t.clock.advance(2 * HOUR);
    await t.publishDue();
    await sleep(200);
    assert.deepEqual(
      sentTo(userId).map((m) => m.channel),
      ['email'],
    );
  });
});

describe('a queued message whose delivery was cancelled before a worker took it', () => {
  let idle: NotifyTestApp;
  before(async () => {
    idle = await notifyTestApp();
  });
  after(() => idle.close());

  test('is acknowledged without sending; the one not cancelled is sent', async () => {
    const userId = `q-${randomUUID().slice(0, 8)}`;
    await idle.setPreferences(userId, { email: `${userId}@example.com` });
    const cancelled = (await idle.send(order(userId))).json();
    const kept = (await idle.send(order(userId, { data: { order_id: 'o-2' } }))).json();
    assert.equal(cancelled.channels[0].status, 'queued');
    const response = await idle.app.inject({
      method: 'DELETE',
      url: `/api/notifications/${cancelled.id}`,
      headers: idle.asService,
    });
    assert.equal(response.statusCode, 204, response.body);
    await idle.app.platform.startWorkers();
    const statusOf = async (id: string) =>
      (await idle.inject(`/api/notifications/${id}`)).json().channels[0].status;
    await eventually(async () => (await statusOf(kept.id)) === 'sent');
    // The kept one is behind the cancelled one on the user's ordering key: its message was done first.
    assert.deepEqual(
      idle.provider.sent.map((m) => m.notificationId),
      [kept.id],
    );
    assert.equal(await statusOf(cancelled.id), 'cancelled');
  });
});
