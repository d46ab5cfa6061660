import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'kysely';
import { Counter, Registry } from 'prom-client';
import { createTestApp, type TestApp } from '../../../test/support/platform.ts';
import { createMetrics } from '../../platform/observability/metrics.ts';
import { type Delivery, PermanentError, type QueueMessage, RetryLater } from '../../platform/queue/index.ts';
import { type DeliveryMessage, SNAPSHOT_MAX_REQUEST_CHARS } from '../notifications/outbox.ts';
import { createNotifyRepository, type NotifyRepository } from '../notifications/repository.ts';
import { createChannelSenders } from '../providers/index.ts';
import { createTemplateRenderer } from '../templates/service.ts';
import { createDeliveryHandler } from './handler.ts';

/**
 * The dev inbox is a local provider: the worker stores its messages together with their status
 * (delivered) in one statement per batch. Driven through the delivery handler directly, with the
 * real templates, the real inbox senders and its breaker, so each batch is exactly the calls made
 * at once. (delivery.test.ts covers the rules with a recording provider; this is the local path.)
 */
let t: TestApp;
before(async () => {
  t = await createTestApp({
    services: ['notify'],
    // A test user subscribes a push endpoint at push.example.com, which has no DNS here.
    env: { NOTIFY_LIMIT_EMAIL_PER_DAY: '1000', OUTBOUND_ALLOW_HOSTS: 'push.example.com' },
  });
});
after(() => t.close());

const silent = { warn() {}, info() {}, error() {} };

function handler(options: { repo?: NotifyRepository; env?: Record<string, string> } = {}) {
  const db = t.adapters.database.db;
  const senders = createChannelSenders({
    env: { NOTIFY_INBOX_RECEIPT_DELAY_MS: '0', ...options.env },
    db,
    clock: t.clock,
    metrics: createMetrics(
      async () => 0,
      () => ({ total: 0, idle: 0, waiting: 0, acquired: 0, waitSeconds: 0, timeouts: 0 }),
      false,
    ),
    log: silent,
  });
  const counter = new Counter({
    name: 'test_deliveries_total',
    help: 'test',
    labelNames: ['channel', 'status'] as const,
    registers: [new Registry()],
  });
  const handle = createDeliveryHandler({
    repo: options.repo ?? createNotifyRepository(db),
    templates: createTemplateRenderer(db),
    senders,
    clock: t.clock,
    log: silent as unknown as FastifyBaseLogger,
    retryDelaysMs: [60_000, 300_000, 1_800_000, 7_200_000],
    counter,
  });
  return { handle, senders, counter };
}

async function reminders(count: number): Promise<string[]> {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const userId = `l-${randomUUID().slice(0, 8)}`;
      const prefs = await t.app.inject({
        method: 'PATCH',
        url: `/api/users/${userId}/notification-preferences`,
        headers: t.asService,
        payload: { email: `${userId}@example.com` },
      });
      assert.equal(prefs.statusCode, 200, prefs.body);
      const response = await t.app.inject({
        method: 'POST',
        url: '/api/notifications',
        headers: t.asService,
        payload: {
          user_id: userId,
          type: 'booking_reminder',
          channels: ['email'],
          data: {
            booking_id: 'BK-1',
            movie_title: 'Local Premiere',
            theater_name: 'Arena',
            show_time: '2026-11-24T19:30:00Z',
            hours_before: 3,
          },
        },
      });
      assert.equal(response.statusCode, 202, response.body);
      return response.json().id as string;
    }),
  );
}

const message = (notificationId: string, attempt = 1): Delivery<DeliveryMessage> => ({
  id: `${notificationId}:email`,
  key: 'k',
  topic: 'notifications.email',
  payload: { notificationId, channel: 'email' },
  attempt,
  signal: new AbortController().signal,
});

async function inboxRows(ids: string[]) {
  const { rows } = await sql<{ notification_id: string; subject: string; address: string }>`
    select notification_id, subject, address from notify_inbox where notification_id = any(${ids}::text[])`.execute(
    t.adapters.database.db,
  );
  return rows;
}

/** Transactions that last wrote these deliveries (rows written by one share its `xmin`). */
async function writers(ids: string[]) {
  const { rows } = await sql<{ n: number }>`select count(distinct xmin::text)::int as n
    from notification_deliveries where notification_id = any(${ids}::uuid[])`.execute(t.adapters.database.db);
  return rows[0].n;
}

const status = async (id: string) =>
  (await t.app.inject({ url: `/api/notifications/${id}`, headers: t.asService })).json();

describe('local provider (dev inbox)', () => {
  test('a batch is stored and recorded delivered in one statement, each message once', async () => {
    const { handle, senders } = handler();
    const ids = await reminders(12);
    await Promise.all(ids.map((id) => handle(message(id))));
    assert.equal(await writers(ids), 1, 'one statement recorded the whole batch');
    const rows = await inboxRows(ids);
    assert.equal(rows.length, ids.length);
    assert.ok(rows.every((row) => row.subject === 'Reminder: Local Premiere in 3 hours'));
    const view = await status(ids[0]);
    const email = view.channels[0];
    assert.deepEqual([email.status, email.provider, email.attempts], ['delivered', 'inbox', 1]);
    assert.equal(email.sent_at, t.clock.now().toISOString());
    assert.equal(email.delivered_at, email.sent_at);
    // The successful try is listed though not logged as a row.
    assert.deepEqual(
      view.attempts.map((a: { attempt: number; error: null; provider: string }) => [
        a.attempt,
        a.error,
        a.provider,
      ]),
      [[1, null, 'inbox']],
    );
    for (const sender of Object.values(senders)) await sender.close();
  });

  test('a redelivered message, even two copies at once, stores nothing more', async () => {
    const { handle, senders } = handler();
    const [id] = await reminders(1);
    await handle(message(id));
    const first = (await status(id)).channels[0];
    t.clock.advance(60_000);
    await Promise.all([handle(message(id)), handle(message(id)), handle(message(id, 2))]);
    assert.equal((await inboxRows([id])).length, 1);
    const again = (await status(id)).channels[0];
    assert.deepEqual([again.delivered_at, again.attempts], [first.delivered_at, 1]);
    for (const sender of Object.values(senders)) await sender.close();
  });

  test('a failing store is a failed try; once the circuit opens the messages wait without spending one', async () => {
    const real = createNotifyRepository(t.adapters.database.db);
    const broken: NotifyRepository = {
      ...real,
      deliverLocally: async () => {
        throw new Error('disk full');
      },
    };
    const { handle, senders } = handler({
      repo: broken,
      env: { NOTIFY_BREAKER_VOLUME: '2', NOTIFY_BREAKER_ERROR_PERCENT: '50' },
    });
    const ids = await reminders(3);
    await assert.rejects(handle(message(ids[0])), /disk full/);
    await assert.rejects(handle(message(ids[1])), /disk full/);
    const failed = await status(ids[0]);
    assert.equal(failed.channels[0].status, 'queued');
    assert.deepEqual(
      failed.attempts.map((a: { error: string }) => a.error),
      ['Error: disk full'],
    );
    assert.deepEqual(senders.email.states(), [{ provider: 'inbox', channel: 'email', state: 'open' }]);
    // Open: the local path is not taken, `send` fails fast, and no attempt is spent.
    const waiting = await handle(message(ids[2])).catch((error) => error);
    assert.ok(waiting instanceof RetryLater, String(waiting));
    const view = await status(ids[2]);
    assert.deepEqual([view.channels[0].status, view.channels[0].reason], ['queued', 'provider_unavailable']);
    assert.equal(view.attempts.length, 0);
    assert.equal((await inboxRows(ids)).length, 0);
    for (const sender of Object.values(senders)) await sender.close();
  });

  test('a template that no longer renders is a permanent failure, alone in its batch', async () => {
    const { handle, senders } = handler();
    const ids = await reminders(2);
    await sql`update notifications set data = data - 'movie_title' where id = ${ids[0]}::uuid`.execute(
      t.adapters.database.db,
    );
    const [broken, fine] = await Promise.allSettled(ids.map((id) => handle(message(id))));
    assert.equal(broken.status, 'rejected');
    assert.ok((broken as PromiseRejectedResult).reason instanceof PermanentError);
    assert.equal(fine.status, 'fulfilled');
    assert.equal((await status(ids[0])).channels[0].status, 'failed');
    assert.equal((await status(ids[1])).channels[0].status, 'delivered');
    for (const sender of Object.values(senders)) await sender.close();
  });
});

/** What the accept publishes, as the worker would get it (the embedded app has no workers). */
function capturePublished(): { messages: Delivery<DeliveryMessage>[]; stop(): void } {
  const queue = t.adapters.queue;
  const original = queue.publishUnconfirmed.bind(queue);
  const messages: Delivery<DeliveryMessage>[] = [];
  queue.publishUnconfirmed = async <T>(topic: string, published: QueueMessage<T>) => {
    // As a copy, the way a queue hands it over.
    const copy = JSON.parse(JSON.stringify(published)) as QueueMessage<DeliveryMessage>;
    messages.push({ ...copy, topic, attempt: 1, signal: new AbortController().signal });
    return original(topic, published);
  };
  const stop = () => {
    queue.publishUnconfirmed = original;
  };
  return { messages, stop };
}

/** The repository with its claims counted: a snapshot delivered as it is needs none. */
function countingClaims() {
  const real = createNotifyRepository(t.adapters.database.db);
  const claimed: string[] = [];
  const repo: NotifyRepository = {
    ...real,
    claimMany: (inputs) => {
      claimed.push(...inputs.map((i) => i.notificationId));
      return real.claimMany(inputs);
    },
  };
  return { repo, claimed };
}

describe("the accept's snapshot", () => {
  test('a queued e-mail carries the notification and preferences; delivered from it without a read', async () => {
    const published = capturePublished();
    const ids = await reminders(6).finally(published.stop);
    assert.equal(published.messages.length, 6);
    const snapshot = published.messages[0].payload.accepted;
    assert.equal(snapshot?.type, 'booking_reminder');
    assert.equal(snapshot?.data.movie_title, 'Local Premiere');
    assert.match(snapshot?.email ?? '', /^l-.*@example\.com$/);
    assert.equal(snapshot?.timezone, 'UTC');
    const { repo, claimed } = countingClaims();
    const { handle, senders } = handler({ repo });
    await Promise.all(published.messages.map(handle));
    assert.deepEqual(claimed, [], 'no claim: the snapshot was enough');
    assert.equal(await writers(ids), 1, 'one statement stored the batch');
    const rows = await inboxRows(ids);
    assert.equal(rows.length, 6);
    for (const row of rows) assert.match(row.address, /^l-.*@example\.com$/);
    const first = published.messages[0].payload.notificationId;
    const view = (await status(first)).channels[0];
    assert.deepEqual([view.status, view.attempts], ['delivered', 1]);
    // A copy delivered again finds the delivery settled: the read path, nothing stored.
    await handle(published.messages[0]);
    assert.deepEqual(claimed, [first]);
    assert.equal((await inboxRows([first])).length, 1);
    for (const sender of Object.values(senders)) await sender.close();
  });

  test('preferences written after the accept: the read path decides with the new ones', async () => {
    const published = capturePublished();
    const ids = await reminders(2).finally(published.stop);
    const [moved, off] = published.messages;
    const [movedId, offId] = [moved, off].map((m) => m.payload.notificationId);
    const userOf = (m: Delivery<DeliveryMessage>) => m.key;
    const patch = (userId: string, payload: Record<string, unknown>) =>
      t.app.inject({
        method: 'PATCH',
        url: `/api/users/${userId}/notification-preferences`,
        headers: t.asService,
        payload,
      });
    assert.equal((await patch(userOf(moved), { email: 'moved@example.com' })).statusCode, 200);
    assert.equal((await patch(userOf(off), { email_enabled: false })).statusCode, 200);
    const { repo, claimed } = countingClaims();
    const { handle, senders } = handler({ repo });
    await Promise.all([handle(moved), handle(off)]);
    assert.deepEqual(claimed.sort(), [...ids].sort(), 'both fell back to the read');
    assert.deepEqual(
      (await inboxRows([movedId])).map((row) => row.address),
      ['moved@example.com'],
    );
    const skipped = (await status(offId)).channels[0];
    assert.deepEqual([skipped.status, skipped.reason], ['skipped', 'channel_disabled']);
    assert.equal((await inboxRows([offId])).length, 0);
    for (const sender of Object.values(senders)) await sender.close();
  });

  test('no snapshot for push (its subscriptions are read at send time) or for a large request', async () => {
    const published = capturePublished();
    try {
      const userId = `l-${randomUUID().slice(0, 8)}`;
      await t.app.inject({
        method: 'PATCH',
        url: `/api/users/${userId}/notification-preferences`,
        headers: t.asService,
        payload: { email: `${userId}@example.com` },
      });
      const subscribed = await t.app.inject({
        method: 'POST',
        url: `/api/users/${userId}/push-subscriptions`,
        headers: t.asService,
        payload: { endpoint: 'https://push.example.com/x', keys: { p256dh: 'k', auth: 'a' } },
      });
      assert.equal(subscribed.statusCode, 201, subscribed.body);
      const data = {
        booking_id: 'BK-1',
        movie_title: 'x'.repeat(SNAPSHOT_MAX_REQUEST_CHARS),
        theater_name: 'Arena',
        show_time: '2026-11-24T19:30:00Z',
        hours_before: 3,
      };
      for (const [channels, payload] of [
        [['push'], { ...data, movie_title: 'Small' }],
        [['email'], data],
      ] as const) {
        const response = await t.app.inject({
          method: 'POST',
          url: '/api/notifications',
          headers: t.asService,
          payload: { user_id: userId, type: 'booking_reminder', channels, data: payload },
        });
        assert.equal(response.statusCode, 202, response.body);
      }
      assert.deepEqual(
        published.messages.map((m) => [m.payload.channel, m.payload.accepted === undefined]),
        [
          ['push', true],
          ['email', true],
        ],
      );
    } finally {
      published.stop();
    }
  });
});
