import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'kysely';
import { type NotifyTestApp, notifyTestApp } from '../../../test/support/notify.ts';
import { systemClock } from '../../platform/clock.ts';
import type { Queue } from '../../platform/queue/index.ts';
import { inboxRepository } from '../providers/index.ts';
import { createOutbox } from './outbox.ts';
import { createNotifyRepository, type NotifyRepository } from './repository.ts';

let t: NotifyTestApp;
before(async () => {
  t = await notifyTestApp({ env: { NOTIFY_LIMIT_EMAIL_PER_DAY: '1000' } });
});
after(() => t.close());

async function userWithEmail() {
  const userId = `g-${randomUUID().slice(0, 8)}`;
  await t.setPreferences(userId, { email: `${userId}@example.com` });
  return userId;
}

const order = (userId: string, data: Record<string, unknown> = {}) => ({
  id: randomUUID(),
  user_id: userId,
  type: 'order_update',
  channels: ['email'],
  data: { order_id: 'o-1', ...data },
});

/** Rows written by one transaction share its id (`xmin`): how many transactions stored these. */
async function transactions(ids: string[]) {
  const { rows } = await sql<{ n: number }>`select count(distinct xmin::text)::int as n from notifications
    where id = any(${ids}::uuid[])`.execute(t.adapters.database.db);
  return rows[0].n;
}

describe('group commit of accepts', () => {
  test('concurrent accepts are stored in a few shared transactions, each answered as alone', async () => {
    const userId = await userWithEmail();
    const requests = Array.from({ length: 20 }, () => order(userId));
    const responses = await Promise.all(requests.map((body) => t.send(body)));
    for (const response of responses) assert.equal(response.statusCode, 202, response.body);
    const ids = responses.map((response) => response.json().id as string);
    assert.equal(new Set(ids).size, 20);
    // One transaction per request before group commit.
    const count = await transactions(ids);
    assert.ok(count <= 4, `20 accepts took ${count} transactions`);
    // Each still replays its own answer.
    const replay = await t.send(requests[7]);
    assert.equal(replay.statusCode, 202);
    assert.deepEqual(replay.json(), responses[7].json());
  });

  test('a member whose row PostgreSQL rejects fails alone; the others of its group are stored', async () => {
    const userId = await userWithEmail();
    // A constraint only this test's row breaks: its insert fails and takes a shared statement with it.
    const db = t.adapters.database.db;
    await sql`alter table notifications add constraint test_refused
      check (data->>'note' is distinct from 'refused') not valid`.execute(db);
    try {
      const bad = order(userId, { note: 'refused' });
      const good = Array.from({ length: 9 }, () => order(userId));
      const [badResponse, ...goodResponses] = await Promise.all([bad, ...good].map((body) => t.send(body)));
      assert.notEqual(badResponse.statusCode, 202, badResponse.body);
      for (const response of goodResponses) assert.equal(response.statusCode, 202, response.body);
    } finally {
      await sql`alter table notifications drop constraint test_refused`.execute(db);
    }
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from notifications
      where user_id = ${userId}`.execute(db);
    assert.equal(rows[0].n, 9);
  });

  test('a request whose data cannot be written fails alone and spends nothing; the others are stored', async () => {
    const userId = await userWithEmail();
    const api = t.app.platform.modules.get('notify')?.api as import('../api.ts').NotifyApi;
    // The in-process API takes any object: a BigInt has no JSON, so the request hash cannot be made.
    const bad = order(userId, { amount: 10n });
    const good = Array.from({ length: 9 }, () => order(userId));
    const [badResult, ...goodResults] = await Promise.allSettled(
      [bad, ...good].map((body) => api.send(body as import('../api.ts').NotificationRequest)),
    );
    assert.equal(badResult.status, 'rejected');
    for (const result of goodResults) assert.equal(result.status, 'fulfilled');
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from notifications
      where user_id = ${userId}`.execute(t.adapters.database.db);
    assert.equal(rows[0].n, 9);
    const limits = await t.inject({ method: 'GET', url: `/api/users/${userId}/notification-limits` });
    const email = limits.json().limits.find((l: { channel: string }) => l.channel === 'email');
    assert.equal(email.remaining, email.limit - 9, 'the refused request gave its send back');
  });

  test('the same client id sent twice at once is stored once; both answer with it', async () => {
    const userId = await userWithEmail();
    const body = order(userId);
    const [a, b] = await Promise.all([t.send(body), t.send(body)]);
    assert.equal(a.statusCode, 202, a.body);
    assert.equal(b.statusCode, 202, b.body);
    assert.equal(a.json().id, b.json().id);
  });

  test('a replay in a shared statement is the one row not stored; the new ones of its group are', async () => {
    const userId = await userWithEmail();
    const earlier = order(userId);
    const first = await t.send(earlier);
    assert.equal(first.statusCode, 202, first.body);
    // The user's contacts are cached now, so the replay is not looked up: it reaches the insert,
    // meets its stored client id there, and must come back as the one row the statement skipped.
    const fresh = Array.from({ length: 6 }, () => order(userId));
    const responses = await Promise.all([...fresh, earlier].map((body) => t.send(body)));
    for (const response of responses) assert.equal(response.statusCode, 202, response.body);
    const ids = responses.map((response) => response.json().id as string);
    assert.equal(ids[6], first.json().id);
    assert.equal(new Set(ids.slice(0, 6)).size, 6);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from notifications
      where id = any(${ids.slice(0, 6)}::uuid[])`.execute(t.adapters.database.db);
    assert.equal(rows[0].n, 6);
    // The statement that met the taken client id went again skipping it, rather than each of its
    // rows going alone.
    const count = await transactions(ids.slice(0, 6));
    assert.ok(count <= 3, `6 new accepts took ${count} transactions`);
  });
});

/** Distinct transactions (`xmin`) that last wrote these rows of `table`. */
async function writers(
  table: 'notification_deliveries' | 'notification_attempts' | 'notify_inbox',
  ids: string[],
) {
  const { rows } = await sql<{
    n: number;
  }>`select count(distinct xmin::text)::int as n from ${sql.table(table)}
    where notification_id::text = any(${ids}::text[])`.execute(t.adapters.database.db);
  return rows[0].n;
}

describe('group commit in the worker', () => {
  test('claims, sends recorded, inbox rows and receipts of concurrent deliveries share statements', async () => {
    const repo = createNotifyRepository(t.adapters.database.db);
    const inbox = inboxRepository(t.adapters.database.db);
    const users = await Promise.all(Array.from({ length: 12 }, () => userWithEmail()));
    const responses = await Promise.all(users.map((userId) => t.send(order(userId))));
    const ids = responses.map((response) => response.json().id as string);
    const now = t.clock.now();

    const claims = await Promise.all(ids.map((id) => repo.claim(id, 'email', now)));
    for (const [i, claim] of claims.entries()) {
      assert.equal(claim?.claimed, true);
      assert.equal(claim?.delivery.status, 'queued'); // as it was before the claim
      assert.equal(claim?.prefs?.email, `${users[i]}@example.com`);
    }
    assert.ok((await writers('notification_deliveries', ids)) <= 3, 'claims share statements');
    // A second claim of a delivery already `sending` (a redelivered message) still claims it.
    assert.equal((await repo.claim(ids[0], 'email', now))?.delivery.status, 'sending');
    assert.equal(await repo.claim(randomUUID(), 'email', now), undefined);

    const stored = await Promise.all(
      ids.map((id, i) =>
        inbox.store({
          id: randomUUID(),
          delivery_id: `${id}:email`,
          notification_id: id,
          channel: 'email',
          type: 'order_update',
          user_id: users[i],
          address: null,
          subject: null,
          text: `text ${i}`,
          html: null,
          provider_message_id: `pm-${id}`,
          created_at: now,
        }),
      ),
    );
    assert.deepEqual(
      stored.map((row) => row.text),
      ids.map((_, i) => `text ${i}`),
    );
    assert.ok((await writers('notify_inbox', ids)) <= 3, 'inbox rows share statements');
    // A repeat of a stored delivery answers the first row (the shared insert skips it, alone it is read back).
    const repeats = await Promise.all(
      [0, 1].map((i) => inbox.store({ ...stored[i], id: randomUUID(), text: 'again' })),
    );
    assert.deepEqual(
      repeats.map((row) => row.text),
      ['text 0', 'text 1'],
    );

    await Promise.all(
      ids.map((id) =>
        repo.recordSent(id, 'email', {
          provider: 'inbox',
          providerMessageId: `pm-${id}`,
          content: 'c',
          sentAt: now,
        }),
      ),
    );
    assert.ok((await writers('notification_deliveries', ids)) <= 3, 'sends recorded share statements');
    // A success is counted on the delivery, not logged as an attempt row (the status view lists it).
    const recorded = await Promise.all(ids.map((id) => repo.delivery(id, 'email')));
    assert.deepEqual(
      recorded.map((d) => [d?.status, d?.attempts]),
      ids.map(() => ['sent', 1]),
    );
    assert.deepEqual(
      await Promise.all(ids.map((id) => repo.attemptsOf(id))),
      ids.map(() => []),
    );

    const receipts = await Promise.all(ids.map((id) => repo.markDelivered(null, `pm-${id}`, now)));
    assert.deepEqual(
      receipts,
      ids.map(() => true),
    );
    assert.ok((await writers('notification_deliveries', ids)) <= 3, 'receipts share statements');
    assert.deepEqual(
      await Promise.all([
        repo.markDelivered(null, `pm-${ids[0]}`, now),
        repo.markDelivered(null, 'pm-unknown', now),
      ]),
      [false, false],
    );
  });
});

const outboxOn = (queue: Queue, repo: NotifyRepository) =>
  createOutbox({
    repo,
    queue,
    clock: systemClock,
    log: { warn() {} } as unknown as FastifyBaseLogger,
    republishAfterMs: 30_000,
  });

describe('outbox', () => {
  test('publishes the channels of one notification at once, not one after another', async () => {
    let pending = 0;
    let release: () => void = () => {};
    const allThree = new Promise<void>((resolve) => {
      release = resolve;
    });
    const queue = {
      async publishUnconfirmed() {
        // Answers only once all three channels are waiting: a loop that awaits each publish hangs.
        if (++pending === 3) release();
        await allThree;
      },
    } as unknown as Queue;
    const repo = { markManyPublished: async () => {} } as unknown as NotifyRepository;
    const outbox = outboxOn(queue, repo);
    const channels = ['push', 'sms', 'email'] as const;
    const done = outbox.publishNow(
      channels.map((channel) => ({ notificationId: 'n-1', channel, userId: 'u', lane: 'realtime' as const })),
    );
    const timeout = new Promise((_, reject) =>
      setTimeout(() => reject(new Error('publishes ran serially')), 2000),
    );
    await Promise.race([done, timeout]);
    assert.equal(pending, 3);
  });

  test('the sweep publishes a backlog in one go: each user in order, a failure stops only that user', async () => {
    const due = Array.from({ length: 1200 }, (_, i) => ({
      notification_id: `n-${i}`,
      channel: 'email' as const,
      user_id: `u-${i % 3}`,
      lane: 'realtime' as const,
    }));
    const sent = new Map<string, string[]>();
    const queue = {
      async publish(_topic: string, message: { key: string; payload: { notificationId: string } }) {
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 2));
        if (message.payload.notificationId === 'n-300') throw new Error('queue unreachable');
        sent.set(message.key, [...(sent.get(message.key) ?? []), message.payload.notificationId]);
        return { duplicate: false };
      },
    } as unknown as Queue;
    const marked: string[] = [];
    const repo = {
      unpublished: async (_now: Date, _before: Date, limit: number) => due.slice(0, limit),
      markManyPublished: async (deliveries: { notificationId: string }[]) => {
        marked.push(...deliveries.map((d) => d.notificationId));
      },
    } as unknown as NotifyRepository;
    const outbox = outboxOn(queue, repo);
    await assert.rejects(outbox.publishDue(), /queue unreachable/);
    const inOrder = (user: number) =>
      due.filter((d) => d.user_id === `u-${user}`).map((d) => d.notification_id);
    assert.deepEqual(sent.get('u-1'), inOrder(1));
    assert.deepEqual(sent.get('u-2'), inOrder(2));
    assert.deepEqual(
      sent.get('u-0'),
      inOrder(0).slice(0, inOrder(0).indexOf('n-300')),
      'u-0 stops at its failure',
    );
    assert.equal(marked.length, 800 + 100);
    assert.ok(!marked.includes('n-300'));
  });
});
