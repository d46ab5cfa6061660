import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Behaviour } from '../../../test/support/notify.ts';
import { eventually, type NotifyTestApp, notifyTestApp } from '../../../test/support/notify.ts';
import { createNotifyRepository } from '../notifications/repository.ts';

let t: NotifyTestApp;
/** Per user: what the fake provider does on each call (shifted off; 'ok' when empty). */
const plans = new Map<string, Behaviour[]>();
const outcomes: { topic: string; outcome: string }[] = [];

before(async () => {
  // Test users subscribe push endpoints at push.example.com, which has no DNS here.
  t = await notifyTestApp({ workers: true, env: { OUTBOUND_ALLOW_HOSTS: 'push.example.com' } });
  t.provider.behaviour = (message) => plans.get(message.recipient.userId)?.shift() ?? 'ok';
  t.adapters.queue.events.on('outcome', (topic: string, outcome: string) =>
    outcomes.push({ topic, outcome }),
  );
});
after(() => t.close());

async function user(prefs: Record<string, unknown> = {}) {
  const userId = `u-${randomUUID().slice(0, 8)}`;
  await t.setPreferences(userId, { email: `${userId}@example.com`, phone: '+15551234567', ...prefs });
  return userId;
}

/** A user with quiet hours 22:00-06:30 UTC and a push subscription at `endpoint`. */
async function nightOwl(endpoint: string) {
  const userId = await user({ quiet_hours_start: '22:00', quiet_hours_end: '06:30' });
  const response = await t.inject({
    method: 'POST',
    url: `/api/users/${userId}/push-subscriptions`,
    payload: { endpoint, keys: { p256dh: 'k', auth: 'a' } },
  });
  assert.equal(response.statusCode, 201, response.body);
  return userId;
}

async function send(userId: string, channels: string[], data: Record<string, unknown> = { order_id: 'o' }) {
  const response = await t.send({ user_id: userId, type: 'order_update', channels, data });
  assert.equal(response.statusCode, 202, response.body);
  return response.json().id as string;
}

const status = async (id: string) => (await t.inject(`/api/notifications/${id}`)).json();
const channelStatus = async (id: string, channel = 'email') =>
  (await status(id)).channels.find((c: { channel: string }) => c.channel === channel);
const count = (topic: string, outcome: string) =>
  outcomes.filter((o) => o.topic === topic && o.outcome === outcome).length;
const sentTo = (userId: string) => t.provider.sent.filter((m) => m.recipient.userId === userId);

describe('workers', () => {
  test('a queued e-mail is rendered in the user zone and sent once with its delivery id', async () => {
    const userId = await user({ timezone: 'Europe/Berlin' });
    const id = await send(userId, ['email', 'sms']);
    await eventually(
      async () =>
        (await channelStatus(id, 'sms')).status === 'sent' && (await channelStatus(id)).status === 'sent',
    );
    const view = await status(id);
    assert.equal(view.channels[0].provider, 'fake-sms');
    assert.ok(view.sent_at);
    assert.deepEqual(
      view.attempts.map((a: { channel: string; attempt: number; error: null }) => [a.attempt, a.error]),
      [
        [1, null],
        [1, null],
      ],
    );
    const [email] = sentTo(userId).filter((m) => m.channel === 'email');
    assert.equal(email.deliveryId, `${id}:email`);
    assert.equal(email.recipient.email, `${userId}@example.com`);
    assert.match(email.message.text, /@Europe\/Berlin$/);
    // A delivery receipt (the providers' webhook calls this) moves `sent` to `delivered`, once.
    const repo = createNotifyRepository(t.adapters.database.db);
    const receipt = view.channels.find((c: { channel: string }) => c.channel === 'email');
    const providerMessageId = (await repo.delivery(id, 'email'))?.provider_message_id ?? '';
    assert.equal(await repo.markDelivered(receipt.provider, providerMessageId, t.clock.now()), true);
    assert.equal(await repo.markDelivered(receipt.provider, providerMessageId, t.clock.now()), false);
    const delivered = await status(id);
    assert.equal(delivered.channels[1].status, 'delivered');
    assert.equal(delivered.delivered_at, t.clock.now().toISOString());
    const history = (
      await t.inject({ url: `/api/users/${userId}/notifications?limit=1`, headers: t.asUser(userId) })
    ).json();
    assert.equal(history.notifications[0].id, id);
    assert.equal(history.notifications[0].channels.length, 2);
  });

  test('retry schedule: immediate, +1 min, +5 min, +30 min, +2 h, then the dead-letter queue; redrive delivers', async () => {
    const userId = await user();
    plans.set(userId, ['transient', 'transient', 'transient', 'transient', 'transient']);
    const retriedBefore = count('notifications.email', 'retried');
    const id = await send(userId, ['email']);
    for (const [i, delay] of [60_000, 300_000, 1_800_000, 7_200_000].entries()) {
      await eventually(async () => count('notifications.email', 'retried') === retriedBefore + i + 1);
      assert.equal((await channelStatus(id)).status, 'queued');
      t.clock.advance(delay - 1000);
      await new Promise((resolve) => setTimeout(resolve, 150));
      assert.equal((await status(id)).attempts.length, i + 1, 'not before its time');
      t.clock.advance(1000);
    }
    await eventually(async () => (await channelStatus(id)).status === 'dead_lettered');
    const view = await status(id);
    const times = view.attempts.map((a: { at: string }) => Date.parse(a.at));
    assert.deepEqual(
      times.slice(1).map((at: number, i: number) => (at - times[i]) / 1000),
      [60, 300, 1800, 7200],
    );
    assert.equal(view.channels[0].attempts, 5);
    assert.equal(sentTo(userId).length, 0);

    assert.equal((await t.app.inject('/api/notifications/dead-letters')).statusCode, 401);
    assert.equal(
      (await t.app.inject({ url: '/api/notifications/dead-letters', headers: t.asService })).statusCode,
      401,
      'dead letters are for admins, not services',
    );
    const letters = (await t.inject({ url: '/api/notifications/dead-letters', headers: t.admin })).json();
    const letter = letters.dead_letters.find((l: { notification_id: string }) => l.notification_id === id);
    assert.ok(letter, JSON.stringify(letters));
    assert.deepEqual([letter.channel, letter.user_id, letter.attempts], ['email', userId, 5]);
    assert.match(letter.error, /timed out/);
    const redrive = await t.inject({
      method: 'POST',
      url: `/api/notifications/dead-letters/${encodeURIComponent(letter.id)}/redrive`,
      headers: t.admin,
    });
    assert.equal(redrive.statusCode, 202, redrive.body);
    await eventually(async () => (await channelStatus(id)).status === 'sent');
    assert.equal(sentTo(userId).length, 1);
    const unknown = await t.inject({
      method: 'POST',
      url: '/api/notifications/dead-letters/notifications.email:999999/redrive',
      headers: t.admin,
    });
    assert.equal(unknown.statusCode, 404);
  });

  test("a retry taken over mid-schedule goes on from the row's count; a redrive starts a fresh one", async () => {
    const userId = await user();
    plans.set(userId, ['transient', 'transient', 'transient', 'transient']);
    const retriedBefore = count('notifications.email', 'retried');
    const deferredBefore = count('notifications.email', 'deferred');
    const id = await send(userId, ['email']);
    await eventually(async () => count('notifications.email', 'retried') === retriedBefore + 1);
    // Two tries by a worker that held the message before (a partition handed over mid-retry: the
    // new owner's queue counts from 1 again, the delivery's row does not).
    const repo = createNotifyRepository(t.adapters.database.db);
    for (let i = 0; i < 2; i++) {
      await repo.recordAttempt(id, 'email', { at: t.clock.now(), error: 'earlier owner', provider: null });
    }
    t.clock.advance(60_000);
    // The queue's attempt 2 is the delivery's 4th try: the next comes after the 4th delay (2 h).
    await eventually(async () => count('notifications.email', 'deferred') === deferredBefore + 1);
    assert.equal((await channelStatus(id)).status, 'queued');
    t.clock.advance(300_000); // the queue's own delay after its attempt 2
    await new Promise((resolve) => setTimeout(resolve, 150));
    assert.equal((await status(id)).attempts.length, 4, 'not before the schedule of the 5th try');
    t.clock.advance(7_200_000 - 300_000);
    await eventually(async () => (await channelStatus(id)).status === 'dead_lettered');
    assert.equal((await channelStatus(id)).attempts, 5, 'five tries in all, not five more');

    const letters = (await t.inject({ url: '/api/notifications/dead-letters', headers: t.admin })).json();
    const letter = letters.dead_letters.find((l: { notification_id: string }) => l.notification_id === id);
    assert.ok(letter, JSON.stringify(letters));
    const retried = count('notifications.email', 'retried');
    const redrive = await t.inject({
      method: 'POST',
      url: `/api/notifications/dead-letters/${encodeURIComponent(letter.id)}/redrive`,
      headers: t.admin,
    });
    assert.equal(redrive.statusCode, 202, redrive.body);
    // The redriven delivery fails once more: the first try of a fresh schedule, retried in 1 min.
    await eventually(async () => count('notifications.email', 'retried') === retried + 1);
    assert.equal((await channelStatus(id)).status, 'queued');
    t.clock.advance(60_000);
    await eventually(async () => (await channelStatus(id)).status === 'sent');
    assert.equal((await channelStatus(id)).attempts, 7);
  });

  test('a permanent provider error dead-letters at once: failed after one attempt', async () => {
    const userId = await user();
    plans.set(userId, ['permanent']);
    const id = await send(userId, ['email']);
    await eventually(async () => (await channelStatus(id)).status === 'failed');
    const view = await status(id);
    assert.equal(view.attempts.length, 1);
    assert.match(view.channels[0].reason, /invalid_address/);
    const letters = (await t.inject({ url: '/api/notifications/dead-letters', headers: t.admin })).json();
    assert.ok(letters.dead_letters.some((l: { notification_id: string }) => l.notification_id === id));
  });

  test('an open circuit (ProviderUnavailable) re-schedules without spending an attempt', async () => {
    const userId = await user();
    plans.set(userId, ['unavailable', 'unavailable']);
    const deferredBefore = count('notifications.sms', 'deferred');
    const id = await send(userId, ['sms']);
    for (let i = 1; i <= 2; i++) {
      await eventually(async () => count('notifications.sms', 'deferred') === deferredBefore + i);
      assert.equal((await channelStatus(id, 'sms')).reason, 'provider_unavailable');
      t.clock.advance(30_000);
    }
    await eventually(async () => (await channelStatus(id, 'sms')).status === 'sent');
    const view = await status(id);
    assert.equal(view.attempts.length, 1, 'only the real try counts');
    assert.equal(view.channels[0].attempts, 1);
  });

  test('a redelivered queue message does not send twice', async () => {
    const userId = await user();
    const id = await send(userId, ['email']);
    await eventually(async () => (await channelStatus(id)).status === 'sent');
    // What the queue does after a worker died before its ack: the same payload once more.
    await t.adapters.queue.publish('notifications.email', {
      id: `${id}:email:redelivered`,
      key: userId,
      payload: { notificationId: id, channel: 'email' },
    });
    const acked = count('notifications.email', 'acked');
    await eventually(async () => count('notifications.email', 'acked') > acked);
    assert.equal(sentTo(userId).length, 1);
    const republished = await t.adapters.queue.publish('notifications.email', {
      id: `${id}:email`,
      key: userId,
      payload: { notificationId: id, channel: 'email' },
    });
    assert.equal(republished.duplicate, true, 'the queue drops the same id within 24 h');
  });

  test("per user order: a user's failing message holds back only that user's next one", async () => {
    const slow = await user();
    const other = await user();
    plans.set(slow, ['transient']);
    const first = await send(slow, ['email'], { order_id: 'first' });
    const second = await send(slow, ['email'], { order_id: 'second' });
    const others = [await send(other, ['email']), await send(other, ['email'])];
    for (const id of others) await eventually(async () => (await channelStatus(id)).status === 'sent');
    assert.equal((await channelStatus(second)).status, 'queued', 'waits behind the first');
    assert.equal(sentTo(slow).length, 0);
    t.clock.advance(60_000);
    await eventually(async () => (await channelStatus(second)).status === 'sent');
    assert.deepEqual(
      sentTo(slow).map((m) => m.notificationId),
      [first, second],
    );
  });

  test('quiet hours: a scheduled push goes out when the quiet period ends', async () => {
    t.clock.set('2026-02-01T23:00:00Z');
    const userId = await nightOwl('https://push.example.com/x');
    const id = await send(userId, ['push']);
    await t.publishDue();
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal((await channelStatus(id, 'push')).status, 'scheduled');
    t.clock.set('2026-02-02T06:30:00Z');
    await t.publishDue();
    await eventually(async () => (await channelStatus(id, 'push')).status === 'sent');
    assert.equal(sentTo(userId)[0].recipient.pushSubscriptions?.[0].endpoint, 'https://push.example.com/x');
  });

  test('a channel switched off or an address removed after the accept is skipped at send time', async () => {
    t.clock.set('2026-02-03T23:00:00Z');
    const userId = await nightOwl('https://push.example.com/y');
    const id = await send(userId, ['push', 'sms']);
    assert.equal((await channelStatus(id, 'sms')).status, 'scheduled');
    const patch = await t.inject({
      method: 'PATCH',
      url: `/api/users/${userId}/notification-preferences`,
      payload: { push_enabled: false, phone: null },
    });
    assert.equal(patch.statusCode, 200, patch.body);
    t.clock.set('2026-02-04T06:30:00Z');
    await t.publishDue();
    await eventually(async () => (await channelStatus(id, 'push')).status === 'skipped');
    await eventually(async () => (await channelStatus(id, 'sms')).status === 'skipped');
    assert.equal((await channelStatus(id, 'push')).reason, 'channel_disabled');
    assert.equal((await channelStatus(id, 'sms')).reason, 'no_address');
    assert.equal(sentTo(userId).length, 0);
  });

  test('batch lane: its own topics, per-recipient counts, send_at schedules', async () => {
    const users = [await user(), await user(), await user({ email_enabled: false })];
    const response = await t.inject({
      method: 'POST',
      url: '/api/notifications/batch',
      payload: { type: 'digest', channels: ['email'], data: { items: 3 }, user_ids: users },
    });
    assert.equal(response.statusCode, 202, response.body);
    assert.deepEqual(response.json().counts, {
      accepted: 3,
      rate_limited: 0,
      queued: 2,
      scheduled: 0,
      skipped: 1,
      channel_rate_limited: 0,
    });
    await eventually(async () => sentTo(users[0]).length + sentTo(users[1]).length === 2);
    await eventually(async () => count('notifications.batch.email', 'acked') >= 2);
    const later = await t.inject({
      method: 'POST',
      url: '/api/notifications/batch',
      payload: {
        type: 'digest',
        channels: ['email'],
        recipients: [{ user_id: users[0], data: { items: 1 } }],
        send_at: new Date(t.clock.now().getTime() + 3600_000).toISOString(),
      },
    });
    assert.equal(later.json().counts.scheduled, 1);
    const beforeDue = sentTo(users[0]).length;
    t.clock.advance(3600_000);
    await t.publishDue();
    await eventually(async () => sentTo(users[0]).length === beforeDue + 1);
    const bad = await t.inject({
      method: 'POST',
      url: '/api/notifications/batch',
      payload: { type: 'digest', channels: ['email'], recipients: [{ user_id: users[0] }] },
    });
    assert.equal(bad.statusCode, 422, 'a recipient without the variables refuses the batch');
  });

  test('a publish lost after the commit is published by the sweep; the history pages newest first', async () => {
    const userId = await user();
    const queue = t.adapters.queue;
    const { publish, publishUnconfirmed } = queue;
    const unreachable = async (): Promise<never> => {
      throw new Error('queue unreachable');
    };
    queue.publish = unreachable;
    queue.publishUnconfirmed = unreachable;
    const lost = await send(userId, ['email'], { order_id: 'lost' }).finally(() => {
      queue.publish = publish;
      queue.publishUnconfirmed = publishUnconfirmed;
    });
    await t.publishDue();
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal((await channelStatus(lost)).status, 'queued', 'not yet: it may still be on its way');
    t.clock.advance(31_000);
    await t.publishDue();
    await eventually(async () => (await channelStatus(lost)).status === 'sent');
    const later = [await send(userId, ['email']), await send(userId, ['email'])];
    const page1 = (
      await t.inject({ url: `/api/users/${userId}/notifications?limit=2`, headers: t.asUser(userId) })
    ).json();
    assert.deepEqual(
      page1.notifications.map((n: { id: string }) => n.id),
      [later[1], later[0]],
    );
    const page2 = (
      await t.inject({
        url: `/api/users/${userId}/notifications?limit=2&cursor=${encodeURIComponent(page1.next_cursor)}`,
        headers: t.asUser(userId),
      })
    ).json();
    assert.deepEqual(
      page2.notifications.map((n: { id: string }) => n.id),
      [lost],
    );
    assert.equal(page2.next_cursor, null);
    assert.equal(
      (
        await t.inject({
          url: `/api/users/${userId}/notifications?cursor=bogus`,
          headers: t.asUser(userId),
        })
      ).statusCode,
      400,
    );
  });

  test('health shows the breakers; metrics count deliveries by channel and status', async () => {
    const ready = (await t.inject('/health/ready')).json();
    assert.ok(JSON.stringify(ready).includes('fake-email'), JSON.stringify(ready));
    const metrics = (await t.inject('/metrics')).body;
    assert.match(metrics, /notify_deliveries_total\{channel="email",status="sent"\} [1-9]/);
  });
});
