import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { type RunningServer, startServer } from '../../../test/support/browser.ts';
import { eventually } from '../../../test/support/notify.ts';
import { dropNamespace, realServices, uniqueName } from '../../../test/support/platform.ts';

/**
 * The contacts cache across processes: two API processes on one schema and one pub/sub namespace
 * (Redis). A preference changed through one is seen by the other's next accepts well within the
 * cache's 10 s TTL, so through the change message, not by expiry.
 */
const skip =
  realServices.databaseUrl && realServices.redisUrl
    ? false
    : 'needs TEST_DATABASE_URL and REDIS_URL (two processes sharing PostgreSQL and pub/sub)';

let servers: RunningServer[] = [];
const schema = uniqueName('contacts');
const namespace = uniqueName('c');

before(async () => {
  if (skip) return;
  const shared = { SERVICES: 'notify', ROLE: 'api', DATABASE_SCHEMA: schema, NAMESPACE: namespace };
  const first = await startServer(shared); // migrates first
  servers = [first, await startServer(shared)];
});
after(async () => {
  if (skip) return;
  await Promise.all(servers.map((server) => server.stop()));
  await dropNamespace({ ...realServices, namespace }, schema);
});

/** The development service key (every scope): sends need `notify:send`, contacts `notify:contacts`. */
const AS_SERVICE = { 'x-api-key': 'dev-service-key' };

async function call(server: RunningServer, method: string, path: string, body: unknown) {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...AS_SERVICE },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

test('a preference changed through one process is seen by the other within a second', { skip }, async () => {
  const [one, two] = servers;
  const userId = `x-${randomUUID().slice(0, 8)}`;
  const prefs = `/api/users/${userId}/notification-preferences`;
  assert.equal((await call(one, 'PATCH', prefs, { email: `${userId}@example.com` })).status, 200);
  const emailOutcome = async () => {
    const answer = await call(two, 'POST', '/api/notifications', {
      user_id: userId,
      type: 'booking_reminder',
      channels: ['email'],
      data: {
        booking_id: 'b-1',
        movie_title: 'Cache',
        theater_name: 'Hall',
        show_time: '2026-12-24T18:00:00Z',
        hours_before: 24,
      },
    });
    assert.equal(answer.status, 202, JSON.stringify(answer.body));
    return (answer.body.channels as { status: string; reason?: string }[])[0];
  };
  assert.equal((await emailOutcome()).status, 'queued');
  assert.equal((await emailOutcome()).status, 'queued'); // now from the second process's cache
  const changedAt = Date.now();
  assert.equal((await call(one, 'PATCH', prefs, { email_enabled: false })).status, 200);
  await eventually(async () => (await emailOutcome()).reason === 'channel_disabled', 8000);
  assert.ok(Date.now() - changedAt < 10_000, 'seen before the TTL could have expired the entry');
});
