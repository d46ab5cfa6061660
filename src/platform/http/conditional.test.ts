import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  type BookingTestApp,
  bookingTestApp,
  hold,
  type Seeded,
  seedShow,
} from '../../../test/support/booking.ts';
import { lotEnv } from '../../../test/support/parking.ts';
import { createTestApp, type TestApp } from '../../../test/support/platform.ts';
import { matchesEtag, weakEtag } from './conditional.ts';

/**
 * Conditional GETs on the public reads that declare `config.cache: 'revalidate'`: a weak ETag of
 * the body, `Cache-Control: public, no-cache`, a 304 without a body for a client that holds this
 * version, and a new validator once the data changes.
 */
test('If-None-Match: weak comparison over a list, or *', () => {
  const etag = weakEtag('{"a":1}');
  assert.match(etag, /^W\/"[A-Za-z0-9_-]{27}"$/);
  assert.equal(weakEtag('{"a":1}'), etag);
  assert.notEqual(weakEtag('{"a":2}'), etag);
  assert.ok(matchesEtag(etag, etag));
  assert.ok(matchesEtag(etag.slice(2), etag), 'the strong form of the same tag');
  assert.ok(matchesEtag(`"x", ${etag}`, etag));
  assert.ok(matchesEtag('*', etag));
  assert.ok(!matchesEtag('"x"', etag));
  assert.ok(!matchesEtag(undefined, etag));
});

describe('booking reads', () => {
  let t: BookingTestApp;
  let seeded: Seeded;
  before(async () => {
    t = await bookingTestApp();
    seeded = await seedShow(t);
  });
  after(() => t.close());

  test('the catalogue, search and a show answer with a validator and 304 on a match', async () => {
    for (const url of [
      '/api/v1/cities',
      `/api/v1/cities/${seeded.cityId}/shows`,
      `/api/v1/movies/${seeded.movieId}`,
      `/api/v1/movies/${seeded.movieId}/shows`,
      `/api/v1/theaters/${seeded.theaterId}`,
      `/api/v1/shows/${seeded.showId}`,
      '/api/v1/movies?q=test',
      '/api/v1/movies/suggest?q=tes',
    ]) {
      const first = await t.app.inject({ url });
      assert.equal(first.statusCode, 200, `${url}: ${first.body}`);
      assert.equal(first.headers['cache-control'], 'public, no-cache', url);
      const etag = String(first.headers.etag);
      assert.match(etag, /^W\//, url);
      const again = await t.app.inject({ url, headers: { 'if-none-match': etag } });
      assert.equal(again.statusCode, 304, url);
      assert.equal(again.body, '', url);
      assert.equal(again.headers.etag, etag, url);
    }
  });

  test('a seat map: 304 while nothing changed, a new validator once a seat is held', async () => {
    const url = `/api/v1/shows/${seeded.showId}/seats`;
    const first = await t.app.inject({ url });
    const etag = String(first.headers.etag);
    assert.equal((await t.app.inject({ url, headers: { 'if-none-match': etag } })).statusCode, 304);
    const seatId = first.json().seats[0].seat_id;
    assert.equal((await hold(t, seeded.showId, [seatId])).statusCode, 201);
    const changed = await t.app.inject({ url, headers: { 'if-none-match': etag } });
    assert.equal(changed.statusCode, 200);
    assert.notEqual(changed.headers.etag, etag);
  });

  test('errors and private reads carry no validator', async () => {
    const missing = await t.app.inject({ url: '/api/v1/shows/00000000-0000-0000-0000-000000000000' });
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.headers.etag, undefined);
  });
});

describe('parking reads', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ services: ['parking'], env: lotEnv() });
  });
  after(() => t.close());

  test('availability and the boards answer with a validator and 304 on a match', async () => {
    for (const url of ['/api/v1/parking/availability', '/api/v1/parking/boards']) {
      const first = await t.app.inject({ url });
      assert.equal(first.statusCode, 200, first.body);
      assert.equal(first.headers['cache-control'], 'public, no-cache');
      const again = await t.app.inject({ url, headers: { 'if-none-match': String(first.headers.etag) } });
      assert.equal(again.statusCode, 304);
    }
  });
});
