import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import {
  assertProblem,
  type BookingTestApp,
  bookingTestApp,
  LAYOUT,
  post,
  type Seeded,
  seedShow,
} from '../../../test/support/booking.ts';

let test_: BookingTestApp;
let seeded: Seeded;

before(async () => {
  test_ = await bookingTestApp();
  seeded = await seedShow(test_, { title: 'Catalogue Premiere', city: 'Pune', inMs: 26 * 3_600_000 });
});
after(() => test_.close());

describe('admin endpoints', () => {
  test('need the admin key: none or a wrong one is 401 and creates nothing', async () => {
    for (const headers of [{}, { 'x-admin-key': 'wrong-key-123' }]) {
      const response = await test_.app.inject({
        method: 'POST',
        url: '/api/v1/admin/cities',
        headers,
        payload: { name: 'Nowhere' },
      });
      assertProblem(response, 401, 'unauthorized');
    }
    // The key is checked before the body is even read.
    const invalid = await test_.app.inject({
      method: 'POST',
      url: '/api/v1/admin/cities',
      payload: { name: '' },
    });
    assertProblem(invalid, 401, 'unauthorized');
    const cities = (await test_.app.inject('/api/v1/cities')).json().cities;
    assert.ok(!cities.some((city: { name: string }) => city.name === 'Nowhere'));
  });

  test('a city: 201, listed; the same name again is 409; a bad time zone is 400', async () => {
    const city = await post(
      test_.app,
      '/api/v1/admin/cities',
      { name: 'Kochi', state: 'Kerala' },
      test_.asAdmin,
    );
    assert.equal(city.timezone, 'Asia/Kolkata');
    const again = await test_.app.inject({
      method: 'POST',
      url: '/api/v1/admin/cities',
      headers: test_.asAdmin,
      payload: { name: 'kochi' },
    });
    assertProblem(again, 409, 'city_exists');
    const badZone = await test_.app.inject({
      method: 'POST',
      url: '/api/v1/admin/cities',
      headers: test_.asAdmin,
      payload: { name: 'Atlantis', timezone: 'Mars/Olympus' },
    });
    const body = assertProblem(badZone, 400, 'validation_failed');
    assert.equal(body.errors[0].field, 'body.timezone');
    const cities = (await test_.app.inject('/api/v1/cities')).json().cities;
    assert.ok(cities.some((c: { name: string }) => c.name === 'Kochi'));
    assert.ok(!cities.some((c: { name: string }) => c.name === 'Atlantis'));
  });

  test('a movie with bad fields lists each field and is not created', async () => {
    const response = await test_.app.inject({
      method: 'POST',
      url: '/api/v1/admin/movies',
      headers: test_.asAdmin,
      payload: { title: '', duration_minutes: 0, language: 'English', genres: [], release_date: 'soon' },
    });
    const body = assertProblem(response, 400, 'validation_failed');
    const fields = body.errors.map((error: { field: string }) => error.field).sort();
    assert.deepEqual(fields, ['body.duration_minutes', 'body.genres', 'body.release_date', 'body.title']);
  });

  test('a theater with screens and seat layouts; a layout without a price for its seat type is 400', async () => {
    const theater = await post(
      test_.app,
      '/api/v1/admin/theaters',
      {
        city_id: seeded.cityId,
        name: 'Layout House',
        screens: [LAYOUT, { ...LAYOUT, screen_number: 2, screen_type: 'IMAX' }],
      },
      test_.asAdmin,
    );
    assert.equal(theater.total_screens, 2);
    assert.deepEqual(
      theater.screens.map((screen: { total_seats: number }) => screen.total_seats),
      [42, 42],
    );
    const got = await test_.app.inject(`/api/v1/theaters/${theater.theater_id}`);
    assert.equal(got.json().screens.length, 2);
    const unpriced = await test_.app.inject({
      method: 'POST',
      url: `/api/v1/admin/theaters/${theater.theater_id}/screens`,
      headers: test_.asAdmin,
      payload: { ...LAYOUT, screen_number: 3, prices: { REGULAR: 100 } },
    });
    assertProblem(unpriced, 400, 'validation_failed');
    const duplicate = await test_.app.inject({
      method: 'POST',
      url: `/api/v1/admin/theaters/${theater.theater_id}/screens`,
      headers: test_.asAdmin,
      payload: { ...LAYOUT, screen_number: 2 },
    });
    assertProblem(duplicate, 409, 'screen_exists');
    const added = await test_.app.inject({
      method: 'POST',
      url: `/api/v1/admin/theaters/${theater.theater_id}/screens`,
      headers: test_.asAdmin,
      payload: { ...LAYOUT, screen_number: 3 },
    });
    assert.equal(added.statusCode, 201, added.body);
    assert.equal((await test_.app.inject(`/api/v1/theaters/${theater.theater_id}`)).json().total_screens, 3);
    const unknownCity = await test_.app.inject({
      method: 'POST',
      url: '/api/v1/admin/theaters',
      headers: test_.asAdmin,
      payload: { city_id: '01900000-0000-7000-8000-000000000000', name: 'Ghost' },
    });
    assertProblem(unknownCity, 404, 'city_not_found');
  });

  test('a show: its seat inventory is created with it; an overlapping show on the screen is 409', async () => {
    const show = (await test_.app.inject(`/api/v1/shows/${seeded.showId}`)).json();
    assert.equal(show.status, 'SCHEDULED');
    assert.equal(show.price_multiplier, 1.5);
    assert.equal(new Date(show.end_time).getTime() - new Date(show.show_time).getTime(), 120 * 60_000);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from booking_show_seats
      where show_id = ${seeded.showId} and status = 'AVAILABLE'`.execute(test_.adapters.database.db);
    assert.equal(rows[0].n, 42);
    const overlap = await test_.app.inject({
      method: 'POST',
      url: '/api/v1/admin/shows',
      headers: test_.asAdmin,
      payload: {
        movie_id: seeded.movieId,
        screen_id: seeded.screenId,
        show_time: new Date(new Date(show.show_time).getTime() + 3_600_000).toISOString(),
      },
    });
    const body = assertProblem(overlap, 409, 'show_overlaps');
    assert.equal(body.conflicting_show_id, seeded.showId);
    const past = await test_.app.inject({
      method: 'POST',
      url: '/api/v1/admin/shows',
      headers: test_.asAdmin,
      payload: { movie_id: seeded.movieId, screen_id: seeded.screenId, show_time: '2020-01-01T10:00:00Z' },
    });
    assertProblem(past, 400, 'validation_failed');
    const unknown = await test_.app.inject({
      method: 'POST',
      url: '/api/v1/admin/shows',
      headers: test_.asAdmin,
      payload: {
        movie_id: seeded.movieId,
        screen_id: '01900000-0000-7000-8000-000000000000',
        show_time: '2030-01-01T10:00:00Z',
      },
    });
    assertProblem(unknown, 404, 'screen_not_found');
  });

  test('a seat priced past 2^31 minor units shows on the seat map (the price is read as bigint)', async () => {
    const screen = await post(
      test_.app,
      `/api/v1/admin/theaters/${seeded.theaterId}/screens`,
      {
        screen_number: 7,
        screen_type: 'Gold',
        rows: [{ row: 'A', seats: 2, seat_type: 'RECLINER' }],
        prices: { RECLINER: 99_999_999.99 },
      },
      test_.asAdmin,
    );
    const show = await post(
      test_.app,
      '/api/v1/admin/shows',
      { movie_id: seeded.movieId, screen_id: screen.screen_id, show_time: '2030-01-01T10:00:00Z' },
      test_.asAdmin,
    );
    const seats = await test_.app.inject(`/api/v1/shows/${show.show_id}/seats`);
    assert.equal(seats.statusCode, 200);
    assert.deepEqual(
      seats.json().seats.map((seat: { price: number }) => seat.price),
      [99_999_999.99, 99_999_999.99],
    );
  });
  test('a row may have aisles, wheelchair spaces and companion seats: the seat map places and names them', async () => {
    const screen = await post(
      test_.app,
      `/api/v1/admin/theaters/${seeded.theaterId}/screens`,
      {
        screen_number: 8,
        screen_type: 'Accessible',
        rows: [
          { row: 'A', seats: 6, seat_type: 'REGULAR', aisles_after: [2, 4], wheelchair: [1], companion: [2] },
          { row: 'B', seats: 2, seat_type: 'PREMIUM' },
        ],
        prices: { REGULAR: 10, PREMIUM: 15 },
      },
      test_.asAdmin,
    );
    const show = await post(
      test_.app,
      '/api/v1/admin/shows',
      { movie_id: seeded.movieId, screen_id: screen.screen_id, show_time: '2030-02-01T10:00:00Z' },
      test_.asAdmin,
    );
    const seats = (await test_.app.inject(`/api/v1/shows/${show.show_id}/seats`)).json().seats;
    assert.deepEqual(
      seats.map((seat: { seat_id: string; column?: number; seat_type: string; price: number }) => [
        seat.seat_id,
        seat.column ?? null,
        seat.seat_type,
        seat.price,
      ]),
      [
        ['A1', null, 'WHEELCHAIR', 10],
        ['A2', null, 'COMPANION', 10],
        ['A3', 4, 'REGULAR', 10],
        ['A4', 5, 'REGULAR', 10],
        ['A5', 7, 'REGULAR', 10],
        ['A6', 8, 'REGULAR', 10],
        ['B1', null, 'PREMIUM', 15],
        ['B2', null, 'PREMIUM', 15],
      ],
    );
    for (const [rows, detail] of [
      [[{ row: 'A', seats: 2, seat_type: 'REGULAR', wheelchair: [3] }], /rows\.A\.wheelchair has no seat 3/],
      [
        [{ row: 'A', seats: 2, seat_type: 'REGULAR', wheelchair: [1], companion: [1] }],
        /seat 1 is also a wheelchair space/,
      ],
      [[{ row: 'A', seats: 2, seat_type: 'WHEELCHAIR' }], /seat_type/],
    ] as const) {
      const refused = await test_.app.inject({
        method: 'POST',
        url: `/api/v1/admin/theaters/${seeded.theaterId}/screens`,
        headers: test_.asAdmin,
        payload: { screen_number: 9, screen_type: 'Bad', rows, prices: { REGULAR: 10 } },
      });
      assertProblem(refused, 400, 'validation_failed');
      assert.match(refused.json().detail, detail);
    }
  });
});

describe('reading the catalogue', () => {
  test('unknown ids are 404, malformed ids 400', async () => {
    assertProblem(
      await test_.app.inject('/api/v1/movies/01900000-0000-7000-8000-000000000000'),
      404,
      'movie_not_found',
    );
    assertProblem(
      await test_.app.inject('/api/v1/shows/01900000-0000-7000-8000-000000000000'),
      404,
      'show_not_found',
    );
    assertProblem(await test_.app.inject('/api/v1/cities/Atlantis/shows'), 404, 'city_not_found');
    assertProblem(await test_.app.inject('/api/v1/shows/not-a-uuid'), 400, 'validation_failed');
    assertProblem(
      await test_.app.inject(`/api/v1/cities/${seeded.cityId}/shows?date=tomorrow`),
      400,
      'validation_failed',
    );
  });

  test("a city's shows on a local date, by id or name, grouped by movie and theater", async () => {
    const show = (await test_.app.inject(`/api/v1/shows/${seeded.showId}`)).json();
    // 26 h after 2026-01-05T12:00Z is 2026-01-06T14:00Z, 19:30 in Asia/Kolkata.
    assert.equal(show.local_time, '19:30');
    const listing = (await test_.app.inject(`/api/v1/cities/Pune/shows?date=2026-01-06`)).json();
    assert.equal(listing.city.city_id, seeded.cityId);
    assert.equal(listing.movies.length, 1);
    assert.equal(listing.movies[0].title, 'Catalogue Premiere');
    assert.equal(listing.movies[0].theaters[0].shows[0].show_id, seeded.showId);
    const otherDay = (await test_.app.inject(`/api/v1/cities/${seeded.cityId}/shows?date=2026-01-07`)).json();
    assert.equal(otherDay.movies.length, 0);
  });

  test("a movie's shows in a city, and the cities where it shows", async () => {
    const movie = (await test_.app.inject(`/api/v1/movies/${seeded.movieId}`)).json();
    assert.equal(movie.title, 'Catalogue Premiere');
    assert.equal(movie.genre, 'Drama');
    assert.deepEqual(movie.cities, ['Pune']);
    const shows = (
      await test_.app.inject(`/api/v1/movies/${seeded.movieId}/shows?city=${seeded.cityId}`)
    ).json();
    assert.equal(shows.theaters[0].shows[0].show_id, seeded.showId);
  });

  test('movie details are cached for an hour and a change through the admin API drops the entry', async () => {
    await test_.app.inject(`/api/v1/movies/${seeded.movieId}`);
    const ttl = await test_.adapters.cache.ttl(`booking:movie:${seeded.movieId}`);
    assert.ok(ttl !== undefined && ttl > 3_500_000 && ttl <= 3_600_000, `ttl ${ttl}`);
    // A change behind the API's back is not seen while cached…
    await sql`update booking_movies set description = 'changed directly' where id = ${seeded.movieId}`.execute(
      test_.adapters.database.db,
    );
    assert.notEqual(
      (await test_.app.inject(`/api/v1/movies/${seeded.movieId}`)).json().description,
      'changed directly',
    );
    // …a change through the admin API is seen at once.
    const patched = await test_.app.inject({
      method: 'PATCH',
      url: `/api/v1/admin/movies/${seeded.movieId}`,
      headers: test_.asAdmin,
      payload: { rating: 9.1 },
    });
    assert.equal(patched.statusCode, 200, patched.body);
    const movie = (await test_.app.inject(`/api/v1/movies/${seeded.movieId}`)).json();
    assert.equal(movie.rating, 9.1);
    assert.equal(movie.description, 'changed directly');
  });

  test('listings by city are cached for 5 minutes and a new show drops the day', async () => {
    const url = `/api/v1/cities/${seeded.cityId}/shows?date=2026-01-06`;
    await test_.app.inject(url);
    const ttl = await test_.adapters.cache.ttl(`booking:city-shows:${seeded.cityId}:2026-01-06`);
    assert.ok(ttl !== undefined && ttl > 290_000 && ttl <= 300_000, `ttl ${ttl}`);
    const before = (await test_.app.inject(url)).json().movies[0].theaters[0].shows.length;
    const show = (await test_.app.inject(`/api/v1/shows/${seeded.showId}`)).json();
    await post(
      test_.app,
      '/api/v1/admin/shows',
      {
        movie_id: seeded.movieId,
        screen_id: seeded.screenId,
        show_time: new Date(new Date(show.end_time).getTime() + 30 * 60_000).toISOString(),
      },
      test_.asAdmin,
    );
    const afterCount = (await test_.app.inject(url)).json().movies[0].theaters[0].shows.length;
    assert.equal(afterCount, before + 1);
  });
});

test('the demo catalogue loads once into an empty database, and a second start does not load it again', async () => {
  const demo = await bookingTestApp({ env: { BOOKING_DEMO: 'true' } });
  try {
    const cities = (await demo.app.inject('/api/v1/cities')).json().cities;
    assert.ok(cities.length >= 5);
    const count = async () => {
      const { rows } = await sql<{ shows: number; movies: number }>`select
        (select count(*)::int from booking_shows) as shows, (select count(*)::int from booking_movies) as movies`.execute(
        demo.adapters.database.db,
      );
      return rows[0];
    };
    const first = await count();
    assert.ok(first.shows > 300, `${first.shows} shows`);
    const { loadDemoCatalogue } = await import('./demo.ts');
    const { createCatalogueRepository } = await import('./repository.ts');
    const loaded = await loadDemoCatalogue(createCatalogueRepository(demo.adapters.database.db), demo.clock);
    assert.equal(loaded, false);
    assert.deepEqual(await count(), first);
    // Every show is in the coming week of the clock, and the seat map of one is complete.
    const listing = (await demo.app.inject(`/api/v1/cities/Mumbai/shows`)).json();
    const showId = listing.movies[0].theaters[0].shows[0].show_id;
    const seats = (await demo.app.inject(`/api/v1/shows/${showId}/seats`)).json();
    assert.equal(seats.available, seats.total);
    // Screens the size of real ones, with aisles, wheelchair spaces and companion seats.
    const screens = (
      await sql<{ seats: number; aisles: number; wheelchair: number; companion: number }>`select
        count(*)::int as seats, count(column_number)::int as aisles,
        count(*) filter (where seat_type = 'WHEELCHAIR')::int as wheelchair,
        count(*) filter (where seat_type = 'COMPANION')::int as companion
        from booking_seats group by screen_id`.execute(demo.adapters.database.db)
    ).rows;
    for (const screen of screens) {
      assert.ok(screen.seats >= 96 && screen.seats <= 400, `${screen.seats} seats`);
      assert.ok(screen.aisles > 0 && screen.wheelchair >= 2 && screen.companion >= 2, JSON.stringify(screen));
    }
    assert.ok(
      screens.some((screen) => screen.seats >= 300),
      'a large screen',
    );
  } finally {
    await demo.close();
  }
});
