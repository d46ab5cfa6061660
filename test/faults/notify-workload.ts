import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEV_KEYS } from '../../src/platform/auth/keys.ts';
import { type RunningServer, startServer } from '../support/browser.ts';
import { type Answer, withPg } from './harness.ts';

/**
 * Notification sends against a real server process (API, workers and scheduler) on PostgreSQL,
 * Redis and NATS JetStream, delivered by the dev inbox provider, which records each delivery.
 */
const USERS = Array.from({ length: 20 }, (_, i) => `fault-user-${i}`);

export async function startNotifyServer() {
  const server = await startServer({
    SERVICES: 'notify',
    NOTIFY_LIMIT_EMAIL_PER_DAY: '1000000',
    // Publishes that failed while NATS was away go out again quickly (the outbox sweep).
    NOTIFY_REPUBLISH_AFTER_SECONDS: '2',
    NOTIFY_RETRY_DELAYS_MS: '500,500,500,500',
  });
  for (const user of USERS) {
    const response = await fetch(`${server.url}/api/users/${user}/notification-preferences`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', 'x-api-key': DEV_KEYS.service },
      body: JSON.stringify({ email: `${user}@example.test` }),
    });
    assert.equal(response.status, 200);
  }
  return { server, schema: server.schema!, stop: () => server.stop() };
}

export const sendNotification = (server: RunningServer) => (sent: string) =>
  fetch(`${server.url}/api/notifications`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': DEV_KEYS.service },
    body: JSON.stringify({
      id: randomUUID(),
      user_id: USERS[Math.floor(Math.random() * USERS.length)],
      type: 'booking_reminder',
      channels: ['email'],
      data: {
        booking_id: sent.slice(0, 60),
        movie_title: 'Fault Lines',
        theater_name: 'Test Hall',
        show_time: '2026-12-24T18:00:00Z',
        hours_before: 24,
      },
    }),
  });

/** Every notification answered 202 reaches the provider exactly once (waits for the workers). */
export async function assertNotificationsDelivered(schema: string, answers: Answer[], withinMs = 90_000) {
  const accepted = answers
    .filter((answer) => answer.status === 202)
    .map((answer) => (JSON.parse(answer.body) as { id: string }).id);
  assert.ok(accepted.length > 0, 'the load sent nothing');
  const deadline = Date.now() + withinMs;
  let delivered: Set<string> = new Set();
  while (Date.now() < deadline) {
    const { rows } = await withPg((client) =>
      client.query(`select distinct notification_id::text as id from "${schema}".notify_inbox`),
    );
    delivered = new Set(rows.map((row) => row.id as string));
    if (accepted.every((id) => delivered.has(id))) break;
    await sleep(500);
  }
  const missing = accepted.filter((id) => !delivered.has(id));
  assert.deepEqual(
    missing.slice(0, 5),
    [],
    `${missing.length} of ${accepted.length} accepted notifications never arrived`,
  );
  const { rows: twice } = await withPg((client) =>
    client.query(`select notification_id from "${schema}".notify_inbox group by 1 having count(*) > 1`),
  );
  assert.equal(twice.length, 0, 'a notification reached the provider twice');
  return { accepted: accepted.length, delivered: delivered.size };
}
