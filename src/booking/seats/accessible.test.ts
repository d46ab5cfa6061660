import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import {
  assertProblem,
  type BookingTestApp,
  bookingTestApp,
  hold,
  post,
  seatStatus,
} from '../../../test/support/booking.ts';

/**
 * Wheelchair spaces and companion seats in holds: a companion seat is sold with a wheelchair space
 * (one per space, in the same hold); a wheelchair space may be held alone.
 */
let t: BookingTestApp;
let showId: string;

before(async () => {
  t = await bookingTestApp();
  const admin = t.asAdmin;
  const city = await post(
    t.app,
    '/api/v1/admin/cities',
    { name: 'Access City', timezone: 'Asia/Kolkata' },
    admin,
  );
  const movie = await post(
    t.app,
    '/api/v1/admin/movies',
    {
      title: 'Step Free',
      duration_minutes: 100,
      language: 'English',
      genres: ['Drama'],
      release_date: '2025-12-01',
    },
    admin,
  );
  const theater = await post(
    t.app,
    '/api/v1/admin/theaters',
    {
      city_id: city.city_id,
      name: 'Access Theater',
      screens: [
        {
          screen_number: 1,
          screen_type: 'Standard',
          rows: [
            { row: 'A', seats: 8, seat_type: 'REGULAR', wheelchair: [1, 4, 7], companion: [2, 5, 8] },
            { row: 'B', seats: 8, seat_type: 'REGULAR', wheelchair: [8] },
          ],
          prices: { REGULAR: 200 },
        },
      ],
    },
    admin,
  );
  const show = await post(
    t.app,
    '/api/v1/admin/shows',
    {
      movie_id: movie.movie_id,
      screen_id: theater.screens[0].screen_id,
      show_time: new Date(t.clock.now().getTime() + 86_400_000).toISOString(),
    },
    admin,
  );
  showId = show.show_id;
});
after(() => t.close());

test('a companion seat alone is refused (422), and nothing is held', async () => {
  const problem = assertProblem(await hold(t, showId, ['A2']), 422, 'companion_needs_wheelchair');
  assert.deepEqual(problem.seats, ['A2']);
  assertProblem(await hold(t, showId, ['A5', 'B1']), 422, 'companion_needs_wheelchair');
  const seats = await seatStatus(t.app, showId);
  const map = (await t.app.inject(`/api/v1/shows/${showId}/seats`)).json() as {
    seats: { seat_id: string; status: string }[];
  };
  assert.ok(
    map.seats.every((seat) => seat.status === 'AVAILABLE'),
    JSON.stringify(seats),
  );
});

test('two companion seats need two wheelchair spaces in the same hold', async () => {
  assertProblem(await hold(t, showId, ['A1', 'A2', 'A5']), 422, 'companion_needs_wheelchair');
  const both = await hold(t, showId, ['A4', 'A5', 'A7', 'A8']);
  assert.equal(both.statusCode, 201, both.body);
});

test('a wheelchair space with its companion seat, or alone, is held', async () => {
  const pair = await hold(t, showId, ['A1', 'A2']);
  assert.equal(pair.statusCode, 201, pair.body);
  assert.deepEqual(pair.json().seats, ['A1', 'A2']);
  const user = randomUUID();
  const alone = await hold(t, showId, ['B8'], user);
  assert.equal(alone.statusCode, 201, alone.body);
});
