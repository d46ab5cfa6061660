import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { createFourServicesClient, type FourServicesClient } from '../clients/typescript/index.ts';
import { createTestApp, type TestApp } from './support/platform.ts';

/**
 * The generated client (clients/typescript) against a listening app: the paste, booking and
 * parking flows a client author would write, over real HTTP, typed by /openapi.json alone.
 * Nothing here casts: if a route's document changes, `tsc` or these assertions notice.
 */
let t: TestApp;
let api: FourServicesClient;

before(async () => {
  t = await createTestApp({ env: { BOOKING_DEMO: 'false' } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = t.app.server.address() as AddressInfo;
  api = createFourServicesClient({ baseUrl: `http://127.0.0.1:${port}` });
});
after(() => t.close());

const card = { card_number: '4242424242424242', exp_month: 12, exp_year: 2030, cvc: '123' };

test('paste: create, then read it back', async () => {
  const created = await api.POST('/api/v1/paste', { body: { content: 'print("hi")', syntax: 'python' } });
  assert.equal(created.response.status, 201, JSON.stringify(created.error));
  assert.ok(created.data);
  // One 201 type: JSON, not `string | {…}`.
  const { short_url, delete_token } = created.data;
  assert.match(delete_token, /^dt_/);

  const read = await api.GET('/api/v1/paste/{short_url}', { params: { path: { short_url } } });
  assert.equal(read.data?.content, 'print("hi")');
  assert.equal(read.data?.syntax, 'python');

  const gone = await api.GET('/api/v1/paste/{short_url}', { params: { path: { short_url: 'nopaste' } } });
  assert.equal(gone.response.status, 404);
  assert.equal(gone.error?.code, 'paste_not_found');
});

test('booking: search, seat map, hold, book', async () => {
  const admin = { headers: t.asAdmin };
  const city = await api.POST('/api/v1/admin/cities', { body: { name: 'Clientville' }, ...admin });
  const movie = await api.POST('/api/v1/admin/movies', {
    body: {
      title: 'The Generated Client',
      duration_minutes: 100,
      language: 'English',
      genres: ['Drama'],
      release_date: '2025-06-01',
    },
    ...admin,
  });
  assert.ok(city.data && movie.data, JSON.stringify(city.error ?? movie.error));
  const theater = await api.POST('/api/v1/admin/theaters', {
    body: {
      city_id: city.data.city_id,
      name: 'Client Cinema',
      screens: [
        {
          screen_number: 1,
          screen_type: 'Standard',
          rows: [{ row: 'A', seats: 6, seat_type: 'REGULAR' }],
          prices: { REGULAR: 200 },
        },
      ],
    },
    ...admin,
  });
  assert.ok(theater.data, JSON.stringify(theater.error));
  const show = await api.POST('/api/v1/admin/shows', {
    body: {
      movie_id: movie.data.movie_id,
      screen_id: theater.data.screens[0].screen_id,
      show_time: new Date(t.clock.now().getTime() + 3 * 86_400_000).toISOString(),
    },
    ...admin,
  });
  assert.ok(show.data, JSON.stringify(show.error));
  const showId = show.data.show_id;

  const found = await api.GET('/api/v1/movies', { params: { query: { q: 'generated' } } });
  assert.ok(found.data?.items.some((item) => item.movie_id === movie.data?.movie_id));

  const map = await api.GET('/api/v1/shows/{id}/seats', { params: { path: { id: showId } } });
  assert.ok(map.data);
  const free = map.data.seats.filter((seat) => seat.status === 'AVAILABLE').map((seat) => seat.seat_id);
  assert.ok(free.length >= 2);

  const guest = await api.POST('/api/v1/guests');
  assert.ok(guest.data);
  const user = { headers: { authorization: `Bearer ${guest.data.token}` } };
  const held = await api.POST('/api/v1/shows/{id}/hold', {
    params: { path: { id: showId } },
    body: { seat_ids: free.slice(0, 2) },
    ...user,
  });
  assert.equal(held.response.status, 201, JSON.stringify(held.error));
  assert.ok(held.data);
  assert.equal(held.response.headers.get('location'), `/api/v1/holds/${held.data.hold_id}`);

  const booked = await api.POST('/api/v1/bookings', {
    params: { header: { 'idempotency-key': randomUUID() } },
    body: { hold_id: held.data.hold_id, payment_method: 'CARD', payment_details: card },
    ...user,
  });
  assert.equal(booked.response.status, 201, JSON.stringify(booked.error));
  assert.equal(booked.data?.status, 'CONFIRMED');

  const taken = await api.POST('/api/v1/shows/{id}/hold', {
    params: { path: { id: showId } },
    body: { seat_ids: free.slice(0, 1) },
    headers: { authorization: `Bearer ${(await api.POST('/api/v1/guests')).data?.token}` },
  });
  assert.equal(taken.response.status, 409);
  assert.equal(taken.error?.code, 'seats_unavailable');
});

test('parking: entry, then exit paying by card', async () => {
  const panel = { headers: t.asOperator };
  const plate = `CL${randomUUID().slice(0, 5)}`;
  const entered = await api.POST('/api/v1/parking/entry', {
    body: { licensePlate: plate, vehicleType: 'CAR' },
    ...panel,
  });
  assert.equal(entered.response.status, 201, JSON.stringify(entered.error));
  assert.ok(entered.data);

  const left = await api.POST('/api/v1/parking/exit', {
    params: { header: { 'idempotency-key': randomUUID() } },
    body: { ticketId: entered.data.ticketId, payment: card },
    ...panel,
  });
  assert.equal(left.response.status, 200, JSON.stringify(left.error));
  assert.equal(left.data?.status, 'COMPLETED');
  assert.equal(left.data?.ticketStatus, 'PAID');
});
