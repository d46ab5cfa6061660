import { randomInt, randomUUID } from 'node:crypto';
import { BENCH_SERVICES } from './harness.ts';

/**
 * What the notification benchmarks send: a `booking_reminder` over e-mail (a default template)
 * to one of `USERS` users who all have an e-mail address, with a fresh client `id` each time so
 * no request is a replay.
 */
export const USERS = 1000;
/**
 * The development service key (every scope): sending needs `notify:send`, setting contacts
 * `notify:contacts`. The bench apps run without NODE_ENV=production, so it is accepted.
 */
export const AS_SERVICE = { 'x-api-key': 'dev-service-key' };
export const JSON_AS_SERVICE = { 'content-type': 'application/json', ...AS_SERVICE };
export const userId = (index: number) => `bench-user-${index}`;

/** Limits lifted for the run: nothing is rate limited. */
export const NOTIFY_BENCH_ENV = {
  NOTIFY_LIMIT_EMAIL_PER_DAY: '1000000',
  NOTIFY_LIMIT_PUSH_PER_HOUR: '1000000',
  NOTIFY_LIMIT_SMS_PER_DAY: '1000000',
};

/** A notify process of a bench: its role, on its own database and NATS namespace, the local Redis and NATS. */
export function notifyProcessEnv(role: string, namespace: string, databaseUrl: string) {
  return {
    ROLE: role,
    SERVICES: 'notify',
    NAMESPACE: namespace,
    DATABASE_URL: databaseUrl,
    REDIS_URL: BENCH_SERVICES.redis,
    NATS_URL: BENCH_SERVICES.nats,
    ...NOTIFY_BENCH_ENV,
  };
}

export function notificationBody(user = userId(randomInt(USERS)), id = randomUUID()): string {
  return JSON.stringify(notificationRequest(user, id));
}

export function notificationRequest(user = userId(randomInt(USERS)), id = randomUUID()) {
  return {
    id,
    user_id: user,
    type: 'booking_reminder',
    channels: ['email'],
    data: {
      booking_id: 'BK-7F3A9C21',
      movie_title: 'The Sold-Out Premiere',
      theater_name: 'Bench Arena',
      show_time: '2026-11-24T19:30:00Z',
      hours_before: 3,
    },
  };
}

/** Gives the `USERS` bench users an e-mail address (PATCH preferences), 50 at a time. */
export async function createUsers(base: string, count = USERS): Promise<void> {
  for (let i = 0; i < count; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, count - i) }, async (_, j) => {
        const user = userId(i + j);
        const response = await fetch(`${base}/api/users/${user}/notification-preferences`, {
          method: 'PATCH',
          headers: JSON_AS_SERVICE,
          body: JSON.stringify({ email: `${user}@bench.example` }),
        });
        if (!response.ok)
          throw new Error(`preferences of ${user}: ${response.status} ${await response.text()}`);
      }),
    );
  }
}
