import { randomInt, randomUUID } from 'node:crypto';
import type { Scenario } from '../run.ts';

/**
 * The seat race under load: 1,000 concurrent clients hold random seats (1 to 3) of one hot show
 * on PostgreSQL, each a guest user with its own waiting-room admission token. Every request is a
 * full hold: user token and admission checks, seat lookup, the arbiter's conditional UPDATE (with
 * the user's hold count) in a transaction, cache drop.
 * Seats run out as the run goes on, so later requests are mostly refused (409): both answers are
 * decisions of the arbiter and both count. `verify` audits the show: no seat held twice, no hold
 * missing a seat.
 */
const ADMIN = { 'content-type': 'application/json', 'x-admin-key': 'dev-admin-key' };
const CLIENTS = 1000;
const ROWS = 120;
const SEATS_PER_ROW = 100;
/** The hot show of each app prepared (bench/ab.ts prepares two). */
const shows = new Map<string, string>();

/**
 * Limits lifted for the booking benchmarks: every request comes from this one address, and the
 * same buyers hold again and again (the per-user caps would answer a second live hold with
 * `hold_limit` instead of deciding its seats, which is what is measured).
 */
export const BOOKING_BENCH_ENV = {
  BOOKING_RATE_HOLD: '1000000000/60',
  BOOKING_RATE_QUEUE: '1000000000/60',
  BOOKING_HOLDS_PER_USER_SHOW: '1000',
  BOOKING_HOLDS_PER_USER: '1000',
};

/** A guest identity (`POST /api/v1/guests`): its user id and the Authorization header proving it. */
export async function guest(base: string): Promise<{ user: string; authorization: string }> {
  const response = await fetch(`${base}/api/v1/guests`, { method: 'POST' });
  if (response.status !== 201) throw new Error(`guest: ${response.status} ${await response.text()}`);
  const { user_id, token } = (await response.json()) as { user_id: string; token: string };
  return { user: user_id, authorization: `Bearer ${token}` };
}

export function rowLabel(index: number): string {
  const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  return index < 26 ? letters[index] : `${letters[Math.floor(index / 26) - 1]}${letters[index % 26]}`;
}

async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = ADMIN,
) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as Record<string, unknown> & { screens: { screen_id: string }[] };
}

export function randomSeats(rows = ROWS, seatsPerRow = SEATS_PER_ROW): string[] {
  const seats = new Set<string>();
  const count = randomInt(1, 4);
  while (seats.size < count) seats.add(`${rowLabel(randomInt(rows))}${randomInt(1, seatsPerRow + 1)}`);
  return [...seats];
}

/** A hot show (waiting room on) of `rows` × `seatsPerRow` regular seats, tomorrow; returns its id. */
export async function createHotShow(base: string, rows: number, seatsPerRow: number): Promise<string> {
  return (await createHotShows(base, rows, seatsPerRow, 1))[0];
}

/**
 * `count` hot shows on one screen of `rows` × `seatsPerRow` regular seats, from tomorrow on, four
 * hours apart; returns their ids.
 */
export async function createHotShows(
  base: string,
  rows: number,
  seatsPerRow: number,
  count: number,
): Promise<string[]> {
  const city = await call(base, 'POST', '/api/v1/admin/cities', { name: 'Bench City' });
  const movie = await call(base, 'POST', '/api/v1/admin/movies', {
    title: 'The Sold-Out Premiere',
    duration_minutes: 150,
    language: 'English',
    genres: ['Drama'],
    release_date: '2025-12-01',
  });
  const theater = await call(base, 'POST', '/api/v1/admin/theaters', {
    city_id: city.city_id,
    name: 'Bench Arena',
    screens: [
      {
        screen_number: 1,
        screen_type: 'Arena',
        rows: Array.from({ length: rows }, (_, i) => ({
          row: rowLabel(i),
          seats: seatsPerRow,
          seat_type: 'REGULAR',
        })),
        prices: { REGULAR: 499 },
      },
    ],
  });
  const shows: string[] = [];
  for (let i = 0; i < count; i++) {
    const show = await call(base, 'POST', '/api/v1/admin/shows', {
      movie_id: movie.movie_id,
      screen_id: theater.screens[0].screen_id,
      show_time: new Date(Date.now() + 86_400_000 + i * 4 * 3_600_000).toISOString(),
      is_hot: true,
    });
    shows.push(String(show.show_id));
  }
  return shows;
}

/** A guest's admission token for a hot show's waiting room (its capacity must let them in at once). */
export async function admit(base: string, show: string, guest: { user: string; authorization: string }) {
  // The user id again in the query: the token decides it here, and older versions of the code
  // (compared with bench/ab.ts) took it from there.
  const status = await call(base, 'GET', `/api/v1/shows/${show}/queue?user_id=${guest.user}`, undefined, {
    authorization: guest.authorization,
  });
  if (!status.admission_token) throw new Error(`not admitted: ${JSON.stringify(status)}`);
  return String(status.admission_token);
}

/** `count` things made 50 at a time, in order. */
export async function inBatches<T>(count: number, make: (index: number) => Promise<T>): Promise<T[]> {
  const made: T[] = [];
  for (let i = 0; i < count; i += 50) {
    made.push(...(await Promise.all(Array.from({ length: Math.min(50, count - i) }, (_, j) => make(i + j)))));
  }
  return made;
}

/**
 * `count` guests through the show's waiting room (its capacity must allow them all at once): each
 * one's user id, admission token and Authorization header.
 */
export async function admitUsers(base: string, show: string, count: number) {
  return inBatches(count, async () => {
    const who = await guest(base);
    return { ...who, token: await admit(base, show, who) };
  });
}

/** The show's audit: seats held twice and holds missing a seat must both be 0. */
export async function auditShow(base: string, show: string) {
  return call(base, 'GET', `/api/v1/admin/shows/${show}/integrity`);
}

/** What the hold scenarios share: the app, its limits lifted, the clients and the target. */
export const HOLD_LOAD = {
  services: 'booking',
  backends: { postgres: true },
  env: { BOOKING_DEMO: 'false', BOOKING_QUEUE_CAPACITY: String(CLIENTS), ...BOOKING_BENCH_ENV },
  baseline: { kind: 'post' },
  target: 0.2,
  connections: CLIENTS,
} satisfies Partial<Scenario>;

const scenario: Scenario = {
  description: `POST /api/v1/shows/{id}/hold: ${CLIENTS} clients, random seats of one hot show (${ROWS * SEATS_PER_ROW} seats), PostgreSQL`,
  ...HOLD_LOAD,
  async prepare(base) {
    const showId = await createHotShow(base, ROWS, SEATS_PER_ROW);
    shows.set(base, showId);
    const admitted = await admitUsers(base, showId, CLIENTS);
    return {
      requests: [
        {
          method: 'POST',
          path: `/api/v1/shows/${showId}/hold`,
          headers: { 'content-type': 'application/json' },
          setupRequest: (request) => {
            const { user, token, authorization } = admitted[randomInt(admitted.length)];
            return {
              ...request,
              headers: { ...request.headers, authorization },
              // user_id as well, for older versions of the code (bench/ab.ts); it names the token's user.
              body: JSON.stringify({ seat_ids: randomSeats(), user_id: user, admission_token: token }),
            };
          },
        },
      ],
    };
  },
  // The same request shape: a user token of the same length, the same body.
  baselineRequest: () => ({
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer UT1.${randomUUID()}.${'x'.repeat(43)}`,
    },
    body: JSON.stringify({
      seat_ids: ['C7', 'C8'],
      user_id: randomUUID(),
      admission_token: `${Date.now()}.${'x'.repeat(43)}`,
    }),
  }),
  async verify(base) {
    const audit = await auditShow(base, shows.get(base)!);
    const lines = [
      `audit of the show: ${audit.live_holds} holds stored, ${audit.held_seats} of ${ROWS * SEATS_PER_ROW} seats held`,
      `double bookings: ${audit.double_booked_seats} (seats claimed by two live holds), incomplete holds: ${audit.incomplete_holds}`,
    ];
    if (audit.double_booked_seats !== 0 || audit.incomplete_holds !== 0) {
      throw new Error(`the arbiter failed: ${lines.join('; ')}`);
    }
    return lines;
  },
};
export default scenario;
