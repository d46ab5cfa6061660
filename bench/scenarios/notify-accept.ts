import { createUsers, JSON_AS_SERVICE, NOTIFY_BENCH_ENV, notificationBody, USERS } from '../notify-common.ts';
import type { Scenario } from '../run.ts';

/**
 * Accepting notifications on PostgreSQL + Redis + NATS JetStream: `POST /api/notifications`
 * (a `booking_reminder` e-mail) for a random one of 1,000 users with an e-mail address, each
 * with a new client `id` (no replays): validation, template check, preferences, the per-user
 * limit in Redis (lifted so nothing is refused), one insert of the notification and its
 * delivery, the JetStream publish (not waiting for its ack: outbox.ts). The app runs with
 * ROLE=api, so no worker competes for the CPU. Baseline: a bare Fastify POST parsing the same JSON.
 */
// The baseline gets the same headers (and ignores them), so both parse requests of one size.
const headers = JSON_AS_SERVICE;

const scenario: Scenario = {
  description: `POST /api/notifications (booking_reminder e-mail, ${USERS} users), PostgreSQL + Redis + NATS, ROLE=api`,
  services: 'notify',
  backends: { postgres: true, redis: true, nats: true },
  env: { ROLE: 'api', ...NOTIFY_BENCH_ENV },
  baseline: { kind: 'post' },
  target: 0.25,
  async prepare(base) {
    await createUsers(base);
    return {
      requests: [
        {
          method: 'POST',
          path: '/api/notifications',
          headers,
          setupRequest: (request) => ({ ...request, body: notificationBody() }),
        },
      ],
    };
  },
  baselineRequest: () => ({
    requests: [
      { method: 'POST', headers, setupRequest: (request) => ({ ...request, body: notificationBody() }) },
    ],
  }),
  async verify(base) {
    // History needs the user's token or the admin key; the app inherits this environment.
    const response = await fetch(`${base}/api/users/bench-user-0/notifications?limit=1`, {
      headers: { 'x-admin-key': process.env.ADMIN_API_KEY ?? 'dev-admin-key' },
    });
    if (!response.ok) throw new Error(`history: ${response.status}`);
    return [`history of bench-user-0 answers ${response.status}`];
  },
};
export default scenario;
