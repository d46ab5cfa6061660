import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { type NotifyTestApp, notifyTestApp } from '../../../test/support/notify.ts';
import { createNotifyRepository } from './repository.ts';

// No workers: the queue keeps what is published, as when the workers are down or behind.
let t: NotifyTestApp;
before(async () => {
  t = await notifyTestApp();
});
after(() => t.close());

async function accept() {
  const userId = `o-${randomUUID().slice(0, 8)}`;
  await t.setPreferences(userId, { email: `${userId}@example.com` });
  const response = await t.send({
    user_id: userId,
    type: 'order_update',
    channels: ['email'],
    data: { order_id: 'o' },
  });
  assert.equal(response.statusCode, 202, response.body);
  return response.json().id as string;
}

async function publishedAt(id: string) {
  const { rows } = await sql<{ published_at: Date | null }>`select published_at from notification_deliveries
    where notification_id = ${id}::uuid and channel = 'email'`.execute(t.adapters.database.db);
  return rows[0].published_at;
}

/** Counts the sweep's publishes and whether the queue dropped them as copies. */
function watchPublishes() {
  const queue = t.adapters.queue;
  const publish = queue.publish.bind(queue);
  const seen: { id: string; duplicate: boolean }[] = [];
  queue.publish = async (topic, message) => {
    const result = await publish(topic, message);
    seen.push({ id: message.id, duplicate: result.duplicate });
    return result;
  };
  return { seen, stop: () => (queue.publish = publish) };
}

describe('outbox', () => {
  test('the accept publishes without writing again; the worker claim marks the delivery published', async () => {
    const id = await accept();
    assert.equal(await publishedAt(id), null, 'the accept stores nothing after its insert');
    assert.equal(await t.adapters.queue.depth('notifications.email'), 1);
    const repo = createNotifyRepository(t.adapters.database.db);
    const claimed = await repo.claim(id, 'email', t.clock.now());
    assert.equal(claimed?.claimed, true);
    assert.deepEqual(await publishedAt(id), t.clock.now());
  });

  test('a delivery still unclaimed after 30 s is published once more by the sweep, then marked', async () => {
    const id = await accept();
    const publishes = watchPublishes();
    try {
      await t.publishDue();
      assert.deepEqual(publishes.seen, [], 'not within 30 s: it is on its way to a worker');
      t.clock.advance(31_000);
      await t.publishDue();
      assert.deepEqual(publishes.seen, [{ id: `${id}:email`, duplicate: true }], 'the queue drops the copy');
      assert.ok(await publishedAt(id));
      t.clock.advance(31_000);
      await t.publishDue();
      assert.equal(publishes.seen.length, 1, 'marked by the sweep: not published again');
    } finally {
      publishes.stop();
    }
  });
});
