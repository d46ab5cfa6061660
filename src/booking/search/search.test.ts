import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  assertProblem,
  type BookingTestApp,
  bookingTestApp,
  LAYOUT,
  post,
} from '../../../test/support/booking.ts';

let t: BookingTestApp;
const ids: Record<string, string> = {};
const screenIds: Record<'mumbai' | 'chennai', string> = { mumbai: '', chennai: '' };

const MOVIES = [
  {
    title: 'The Dark Knight Rises',
    genres: ['Action', 'Drama'],
    language: 'English',
    release_date: '2024-07-20',
    rating: 8.4,
  },
  {
    title: 'Interstellar Voyage',
    genres: ['Sci-Fi'],
    language: 'English',
    release_date: '2025-11-07',
    rating: 8.7,
  },
  {
    title: 'Monsoon Wedding Bells',
    genres: ['Romance', 'Comedy'],
    language: 'Hindi',
    release_date: '2025-03-01',
    rating: 7.4,
  },
  {
    title: 'Knights of the Deccan',
    genres: ['Action'],
    language: 'Telugu',
    release_date: '2025-09-12',
    rating: 6.9,
  },
  { title: 'Quiet Harbour', genres: ['Drama'], language: 'Tamil', release_date: '2023-01-15', rating: null },
];

before(async () => {
  t = await bookingTestApp();
  const mumbai = await post(t.app, '/api/v1/admin/cities', { name: 'Search Mumbai' }, t.asAdmin);
  const chennai = await post(t.app, '/api/v1/admin/cities', { name: 'Search Chennai' }, t.asAdmin);
  for (const movie of MOVIES) {
    const created = await post(
      t.app,
      '/api/v1/admin/movies',
      { ...movie, rating: movie.rating ?? undefined, duration_minutes: 100 },
      t.asAdmin,
    );
    ids[movie.title] = created.movie_id;
  }
  const screens = async (cityId: string) =>
    (
      await post(
        t.app,
        '/api/v1/admin/theaters',
        { city_id: cityId, name: `T ${cityId}`, screens: [LAYOUT] },
        t.asAdmin,
      )
    ).screens[0].screen_id;
  const mumbaiScreen = await screens(mumbai.city_id);
  const chennaiScreen = await screens(chennai.city_id);
  Object.assign(screenIds, { mumbai: mumbaiScreen, chennai: chennaiScreen });
  // Clock: 2026-01-05T12:00Z. Shows on 2026-01-06 (Mumbai) and 2026-01-07 (Chennai), local time.
  await post(
    t.app,
    '/api/v1/admin/shows',
    { movie_id: ids['The Dark Knight Rises'], screen_id: mumbaiScreen, show_time: '2026-01-06T13:30:00Z' },
    t.asAdmin,
  );
  await post(
    t.app,
    '/api/v1/admin/shows',
    { movie_id: ids['Interstellar Voyage'], screen_id: mumbaiScreen, show_time: '2026-01-06T18:00:00Z' },
    t.asAdmin,
  );
  await post(
    t.app,
    '/api/v1/admin/shows',
    { movie_id: ids['Knights of the Deccan'], screen_id: chennaiScreen, show_time: '2026-01-07T05:00:00Z' },
    t.asAdmin,
  );
});
after(() => t.close());

async function titles(query: string): Promise<string[]> {
  const response = await t.app.inject(`/api/v1/movies?${query}`);
  assert.equal(response.statusCode, 200, response.body);
  return response.json().items.map((movie: { title: string }) => movie.title);
}

describe('GET /api/v1/movies', () => {
  test('full-text on the title: stemmed words, prefixes as you type, words in any order', async () => {
    assert.deepEqual((await titles('q=knight')).sort(), ['Knights of the Deccan', 'The Dark Knight Rises']);
    assert.deepEqual(await titles('q=interst'), ['Interstellar Voyage']);
    assert.deepEqual(await titles('q=rises%20dark'), ['The Dark Knight Rises']);
    assert.deepEqual(
      (await titles('q=the')).sort(),
      ['Knights of the Deccan', 'The Dark Knight Rises'],
      'stop words still match',
    );
    assert.deepEqual(await titles('q=zzzz'), []);
  });

  test('query syntax cannot break the search (no tsquery operators pass through)', async () => {
    for (const q of ["knight's & | !(", ':*', '%_\\', "'; drop table booking_movies; --"]) {
      const response = await t.app.inject(`/api/v1/movies?q=${encodeURIComponent(q)}`);
      assert.equal(response.statusCode, 200, `${q}: ${response.body}`);
    }
  });

  test('filters: city (id or name), local date, genre, language', async () => {
    assert.deepEqual(await titles('city=Search%20Mumbai&sort=rating'), [
      'Interstellar Voyage',
      'The Dark Knight Rises',
    ]);
    assert.deepEqual(await titles('city=search%20chennai'), ['Knights of the Deccan']);
    assert.deepEqual(await titles('date=2026-01-07'), ['Knights of the Deccan']);
    assert.deepEqual(await titles('city=Search%20Mumbai&date=2026-01-07'), []);
    assert.deepEqual((await titles('genre=action')).sort(), [
      'Knights of the Deccan',
      'The Dark Knight Rises',
    ]);
    assert.deepEqual(await titles('language=Hindi'), ['Monsoon Wedding Bells']);
    assert.deepEqual(await titles('q=knight&language=Telugu'), ['Knights of the Deccan']);
  });

  test('each result carries the cities where it shows', async () => {
    const response = (await t.app.inject('/api/v1/movies?q=deccan')).json();
    assert.deepEqual(response.items[0].cities, ['Search Chennai']);
    assert.equal(response.items[0].genre, 'Action');
  });

  test('sort by rating (unrated last) or by release date, newest first', async () => {
    assert.deepEqual(await titles('sort=rating'), [
      'Interstellar Voyage',
      'The Dark Knight Rises',
      'Monsoon Wedding Bells',
      'Knights of the Deccan',
      'Quiet Harbour',
    ]);
    assert.deepEqual(await titles('sort=release_date'), [
      'Interstellar Voyage',
      'Knights of the Deccan',
      'Monsoon Wedding Bells',
      'The Dark Knight Rises',
      'Quiet Harbour',
    ]);
    // Without words to rank by, relevance falls back to the rating order (it was a 500).
    assert.deepEqual(await titles('sort=relevance'), await titles('sort=rating'));
  });

  test('pages: page_size, page, total; past the end is empty with the total', async () => {
    const first = (await t.app.inject('/api/v1/movies?sort=rating&page_size=2')).json();
    assert.equal(first.total, 5);
    assert.deepEqual(
      first.items.map((m: { title: string }) => m.title),
      ['Interstellar Voyage', 'The Dark Knight Rises'],
    );
    const third = (await t.app.inject('/api/v1/movies?sort=rating&page_size=2&page=3')).json();
    assert.deepEqual(
      third.items.map((m: { title: string }) => m.title),
      ['Quiet Harbour'],
    );
    const beyond = (await t.app.inject('/api/v1/movies?sort=rating&page_size=2&page=9')).json();
    assert.deepEqual(beyond.items, []);
    assert.equal(beyond.total, 5);
  });

  test('bad parameters are 400 listing each; an unknown city is 404', async () => {
    const body = assertProblem(
      await t.app.inject('/api/v1/movies?sort=popularity&page=0&page_size=500&date=friday'),
      400,
      'validation_failed',
    );
    const fields = body.errors.map((error: { field: string }) => error.field).sort();
    assert.deepEqual(fields, [
      'querystring.date',
      'querystring.page',
      'querystring.page_size',
      'querystring.sort',
    ]);
    assertProblem(await t.app.inject('/api/v1/movies?city=Atlantis'), 404, 'city_not_found');
  });
});

describe('GET /api/v1/movies/suggest', () => {
  async function suggest(q: string): Promise<string[]> {
    const response = await t.app.inject(`/api/v1/movies/suggest?q=${encodeURIComponent(q)}`);
    assert.equal(response.statusCode, 200, response.body);
    return response.json().suggestions.map((s: { title: string }) => s.title);
  }

  test('completes a prefix of the title or of any word in it', async () => {
    assert.equal((await suggest('inter'))[0], 'Interstellar Voyage');
    assert.equal((await suggest('Deccan'))[0], 'Knights of the Deccan');
    assert.equal((await suggest('mon'))[0], 'Monsoon Wedding Bells');
  });

  test('tolerates typos', async () => {
    assert.equal((await suggest('intersteler'))[0], 'Interstellar Voyage');
    assert.equal((await suggest('monsun weding'))[0], 'Monsoon Wedding Bells');
    assert.equal((await suggest('dark nite'))[0], 'The Dark Knight Rises');
    assert.equal((await suggest('harbor'))[0], 'Quiet Harbour');
  });

  test('nothing alike gives no suggestions; a missing q is 400', async () => {
    assert.deepEqual(await suggest('xqzvw'), []);
    assertProblem(await t.app.inject('/api/v1/movies/suggest'), 400, 'validation_failed');
    assertProblem(await t.app.inject('/api/v1/movies/suggest?q=a&limit=100'), 400, 'validation_failed');
  });
});

describe("a movie's cities follow its shows", () => {
  const cities = async () => (await t.app.inject('/api/v1/movies?q=harbour')).json().items[0].cities;
  const show = async (city: 'mumbai' | 'chennai', at: string) =>
    (
      await post(
        t.app,
        '/api/v1/admin/shows',
        { movie_id: ids['Quiet Harbour'], screen_id: screenIds[city], show_time: at },
        t.asAdmin,
      )
    ).show_id as string;
  const cancel = async (showId: string) => {
    const response = await t.app.inject({
      method: 'POST',
      url: `/api/v1/shows/${showId}/cancel`,
      headers: t.asAdmin,
      payload: {},
    });
    assert.equal(response.statusCode, 200, response.body);
  };

  test('a new show adds its city; cancelling the last one there takes it away, an earlier one keeps it; a started show no longer counts', async () => {
    assert.deepEqual(await cities(), []);
    const chennai = await show('chennai', '2026-01-08T05:00:00Z');
    const mumbaiEarly = await show('mumbai', '2026-01-08T13:30:00Z');
    const mumbaiLate = await show('mumbai', '2026-01-09T13:30:00Z');
    assert.deepEqual(await cities(), ['Search Chennai', 'Search Mumbai']);
    await cancel(chennai);
    assert.deepEqual(await cities(), ['Search Mumbai']);
    await cancel(mumbaiLate);
    assert.deepEqual(await cities(), ['Search Mumbai'], 'the 8 January show is still on');
    t.clock.set('2026-01-08T14:00:00Z');
    assert.deepEqual(await cities(), [], 'its last show has started');
    await cancel(mumbaiEarly);
    assert.deepEqual(await cities(), []);
  });
});
