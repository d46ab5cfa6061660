import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import type { App } from '../../src/app.ts';
import { type BookingTestSeams, bookingModule } from '../../src/booking/module.ts';
import type { ClaimResult, NewHold, SeatsRepository } from '../../src/booking/seats/repository.ts';
import type { BookingTables } from '../../src/booking/tables.ts';
import type { NotificationAccepted, NotificationRequest, NotifyApi } from '../../src/notify/api.ts';
import type { TestClock } from '../../src/platform/clock.ts';
import type { PlatformDeps } from '../../src/platform/module.ts';
import { createTestApp, type TestApp } from './platform.ts';

/** Helpers for the booking tests: an app on fresh adapters, a catalogue made through the admin API. */

export interface RecordingNotify extends NotifyApi {
  /** Accepted requests (a repeated id is dropped, as notify does). */
  sent: NotificationRequest[];
  /** Every call, repeats included. */
  calls: NotificationRequest[];
  contacts: { userId: string; email?: string; phone?: string }[];
  /** Every cancel asked for: `{user_id, id}` (the client id). */
  cancels: { user_id: string; id: string }[];
  ofType(type: string): NotificationRequest[];
}

/** A NotifyApi that records what booking sends (and drops repeated ids, like notify does). */
export function recordingNotify(): RecordingNotify {
  const sent: NotificationRequest[] = [];
  const calls: NotificationRequest[] = [];
  const contacts: RecordingNotify['contacts'] = [];
  const cancels: RecordingNotify['cancels'] = [];
  return {
    sent,
    calls,
    contacts,
    cancels,
    ofType: (type) => sent.filter((request) => request.type === type),
    async send(request): Promise<NotificationAccepted> {
      calls.push(request);
      if (!request.id || !sent.some((earlier) => earlier.id === request.id)) sent.push(request);
      return {
        id: request.id ?? randomUUID(),
        status: 'accepted',
        channels: request.channels.map((channel) => ({ channel, status: 'queued' })),
      };
    },
    async setContact(userId, contact) {
      contacts.push({ userId, ...contact });
    },
    async cancel(request) {
      cancels.push(request);
      return sent.some((earlier) => earlier.id === request.id && earlier.user_id === request.user_id)
        ? 'cancelled'
        : 'not_found';
    },
  };
}

export interface BookingTestApp extends TestApp {
  notify: RecordingNotify;
}

export async function bookingTestApp(
  options: {
    env?: Record<string, string>;
    clock?: TestClock;
    notify?: 'recording' | 'real';
    /** Start the app's queue consumers (with `notify: 'real'`: notify's workers deliver). */
    workers?: boolean;
    /** Test seams of the booking module, e.g. `{ seatsRepository: withoutArbiter }`. */
    seams?: BookingTestSeams;
  } = {},
): Promise<BookingTestApp> {
  const { seams } = options;
  const notify = recordingNotify();
  const test = await createTestApp({
    services: ['booking'],
    clock: options.clock,
    workers: options.workers,
    env: {
      BOOKING_DEMO: 'false',
      BOOKING_PAYMENT_WAIT_MS: '300',
      // Every request of a test comes from one address: the per-address limits have their own tests.
      BOOKING_RATE_HOLD: '1000000/60',
      BOOKING_RATE_QUEUE: '1000000/60',
      ...options.env,
    },
    stubs: options.notify === 'real' ? undefined : { notify },
    replace: seams ? [{ ...bookingModule, create: (deps) => bookingModule.create(deps, seams) }] : undefined,
  });
  return { ...test, notify };
}

/**
 * The seats repository with the naive check-then-write in place of the arbiter (single and batched
 * claims alike), with a pause between check and write: the race test's negative control shows with
 * it that the race's checks catch a seat sold twice.
 */
export function withoutArbiter(repo: SeatsRepository, deps: PlatformDeps): SeatsRepository {
  const db = deps.database.db.withTables<BookingTables>();
  async function claimSeats(hold: NewHold, now: Date): Promise<ClaimResult> {
    const rows = await db
      .selectFrom('booking_show_seats')
      .select(sql<string>`seat_id::text`.as('seat_id'))
      .where('show_id', '=', hold.show_id)
      .where('seat_id', 'in', hold.seat_ids)
      .where((eb) =>
        eb.or([
          eb('status', '=', 'AVAILABLE'),
          eb.and([eb('status', '=', 'HELD'), eb('held_until', '<=', now)]),
        ]),
      )
      .execute();
    const free = new Set(rows.map((row) => row.seat_id));
    const taken = hold.seat_ids.filter((id) => !free.has(id));
    if (taken.length > 0) return { taken: taken.map((id) => ({ id, until: 0 })), closed: false };
    await sleep(20);
    await db
      .updateTable('booking_show_seats')
      .set({ status: 'HELD', hold_id: hold.id, held_until: hold.expires_at })
      .where('show_id', '=', hold.show_id)
      .where('seat_id', 'in', hold.seat_ids)
      .execute();
    await db
      .insertInto('booking_holds')
      .values({ ...hold, status: 'HELD', released_at: null, release_reason: null })
      .execute();
    return { taken: [], closed: false };
  }
  return {
    ...repo,
    claimSeats,
    claimMany: (holds, now) => Promise.all(holds.map((hold) => claimSeats(hold, now))),
  };
}

export const LAYOUT = {
  screen_number: 1,
  screen_type: 'Standard',
  rows: [
    { row: 'A', seats: 10, seat_type: 'REGULAR' },
    { row: 'B', seats: 10, seat_type: 'REGULAR' },
    { row: 'C', seats: 10, seat_type: 'REGULAR' },
    { row: 'D', seats: 8, seat_type: 'PREMIUM' },
    { row: 'E', seats: 4, seat_type: 'RECLINER' },
  ],
  prices: { REGULAR: 200, PREMIUM: 300.5, RECLINER: 500 },
};

export interface Seeded {
  cityId: string;
  movieId: string;
  theaterId: string;
  screenId: string;
  showId: string;
}

let seedCounter = 0;

/** A city, a movie, a theater with one screen (LAYOUT, 42 seats) and one show `inMs` from now. */
export async function seedShow(
  test: BookingTestApp,
  options: { inMs?: number; hot?: boolean; multiplier?: number; title?: string; city?: string } = {},
): Promise<Seeded> {
  const { app, asAdmin: admin } = test;
  const n = ++seedCounter;
  const city = await post(
    app,
    '/api/v1/admin/cities',
    { name: options.city ?? `Testville ${n}`, timezone: 'Asia/Kolkata' },
    admin,
  );
  const movie = await post(
    app,
    '/api/v1/admin/movies',
    {
      title: options.title ?? `The Test Movie ${n}`,
      duration_minutes: 120,
      language: 'English',
      genres: ['Drama'],
      release_date: '2025-12-01',
      rating: 7.5,
    },
    admin,
  );
  const theater = await post(
    app,
    '/api/v1/admin/theaters',
    { city_id: city.city_id, name: `Test Theater ${n}`, address: 'Main Street 1', screens: [LAYOUT] },
    admin,
  );
  const show = await post(
    app,
    '/api/v1/admin/shows',
    {
      movie_id: movie.movie_id,
      screen_id: theater.screens[0].screen_id,
      show_time: new Date(test.clock.now().getTime() + (options.inMs ?? 3 * 86_400_000)).toISOString(),
      price_multiplier: options.multiplier ?? 1.5,
      is_hot: options.hot ?? false,
    },
    admin,
  );
  return {
    cityId: city.city_id,
    movieId: movie.movie_id,
    theaterId: theater.theater_id,
    screenId: theater.screens[0].screen_id,
    showId: show.show_id,
  };
}

export async function post(app: App, url: string, payload: unknown, headers: Record<string, string> = {}) {
  const response = await app.inject({ method: 'POST', url, payload: payload as object, headers });
  assert.equal(response.statusCode, 201, `${url}: ${response.body}`);
  return response.json();
}

/** `userId` (a new user by default) holds seats, with that user's token. */
export function hold(
  test: TestApp,
  showId: string,
  seats: string[],
  userId: string = randomUUID(),
  admissionToken?: string,
) {
  return test.app.inject({
    method: 'POST',
    url: `/api/v1/shows/${showId}/hold`,
    headers: test.asUser(userId),
    payload: { seat_ids: seats, ...(admissionToken ? { admission_token: admissionToken } : {}) },
  });
}

/** The hold's user pays for it, with their token. */
export function book(
  test: TestApp,
  held: { hold_id: string; user_id: string },
  cardNumber: string,
  key: string = randomUUID(),
  extra: object = {},
) {
  return test.app.inject({
    method: 'POST',
    url: '/api/v1/bookings',
    headers: { ...test.asUser(held.user_id), 'idempotency-key': key },
    payload: {
      hold_id: held.hold_id,
      payment_method: 'CARD',
      payment_details: { card_number: cardNumber, exp_month: 12, exp_year: 2030, cvc: '123' },
      ...extra,
    },
  });
}

export async function seatStatus(app: App, showId: string): Promise<Record<string, string>> {
  const response = await app.inject(`/api/v1/shows/${showId}/seats`);
  assert.equal(response.statusCode, 200, response.body);
  return Object.fromEntries(
    response.json().seats.map((seat: { seat_id: string; status: string }) => [seat.seat_id, seat.status]),
  );
}

export function assertProblem(response: Awaited<ReturnType<App['inject']>>, status: number, code: string) {
  assert.equal(response.statusCode, status, response.body);
  assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
  const body = response.json();
  assert.equal(body.code, code, response.body);
  return body;
}

/** The demo catalogue's hot show (waiting room on) in Mumbai, through the public API of a running app. */
export async function demoHotShow(baseUrl: string): Promise<string> {
  const get = async <T>(path: string) => (await (await fetch(`${baseUrl}${path}`)).json()) as T;
  const listing = await get<{ items: { movie_id: string }[] }>('/api/v1/movies?city=Mumbai');
  for (const movie of listing.items) {
    const shows = await get<{ theaters: { shows: { show_id: string; is_hot: boolean }[] }[] }>(
      `/api/v1/movies/${movie.movie_id}/shows?city=Mumbai`,
    );
    for (const theater of shows.theaters) {
      const hot = theater.shows.find((show) => show.is_hot);
      if (hot) return hot.show_id;
    }
  }
  throw new Error('the demo catalogue has no hot show');
}

/**
 * Through the public API of a running app: an admitted guest holds one seat of a hot show and
 * books it with the success card, which frees their waiting-room slot. The booking's status.
 */
export async function holdAndBook(
  baseUrl: string,
  showId: string,
  guest: { authorization: string; admissionToken: string },
  seat = 'A1',
): Promise<string> {
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: guest.authorization, ...headers },
      body: JSON.stringify(body),
    });
    return (await response.json()) as Record<string, string>;
  };
  const held = await post(`/api/v1/shows/${showId}/hold`, {
    seat_ids: [seat],
    admission_token: guest.admissionToken,
  });
  const booked = await post(
    '/api/v1/bookings',
    {
      hold_id: held.hold_id,
      payment_method: 'CARD',
      payment_details: { card_number: '4242424242424242', exp_month: 12, exp_year: 2030, cvc: '123' },
    },
    { 'idempotency-key': randomUUID() },
  );
  return booked.status;
}
