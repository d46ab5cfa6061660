import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  assertProblem,
  type BookingTestApp,
  book,
  bookingTestApp,
  hold,
  seedShow,
} from '../test/support/booking.ts';
import { TEST_CARDS } from './payments/api.ts';

/**
 * A user's booking and notification history is theirs: it needs the user's signed token
 * (`POST /api/v1/guests` issues a user id with one), another user's token gets 404, none gets 401.
 */
let t: BookingTestApp;
let alice: { user_id: string; token: string };
let bob: { user_id: string; token: string };
let bookingId: string;

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ url, headers });

before(async () => {
  t = await bookingTestApp({ notify: 'real' });
  const guest = async () => {
    const response = await t.app.inject({ method: 'POST', url: '/api/v1/guests' });
    assert.equal(response.statusCode, 201, response.body);
    return response.json();
  };
  alice = await guest();
  bob = await guest();
  const { showId } = await seedShow(t);
  const held = (await hold(t, showId, ['A1'], alice.user_id)).json();
  const booked = await book(t, held, TEST_CARDS.success, undefined, {
    contact: { email: 'alice@example.com' },
  });
  assert.equal(booked.statusCode, 201, booked.body);
  bookingId = booked.json().booking_id;
});
after(() => t.close());

test('guests get distinct random user ids with tokens bound to them', () => {
  assert.match(alice.user_id, /^[0-9a-f-]{36}$/);
  assert.notEqual(alice.user_id, bob.user_id);
  assert.match(alice.token, new RegExp(`^UT1\\.${alice.user_id}\\.[\\w-]{43}$`));
});

test("booking history: the owner's token reads it, another user's gets 404, none 401", async () => {
  const mine = await get(`/api/v1/users/${alice.user_id}/bookings`, bearer(alice.token));
  assert.equal(mine.statusCode, 200, mine.body);
  assert.deepEqual(
    mine.json().bookings.map((b: { booking_id: string }) => b.booking_id),
    [bookingId],
  );
  const upper = await get(`/api/v1/users/${alice.user_id.toUpperCase()}/bookings`, bearer(alice.token));
  assert.equal(upper.statusCode, 200, 'user ids are case-insensitive UUIDs');

  assertProblem(await get(`/api/v1/users/${alice.user_id}/bookings`, bearer(bob.token)), 404, 'not_found');
  const none = await get(`/api/v1/users/${alice.user_id}/bookings`);
  assertProblem(none, 401, 'unauthorized');
  assert.equal(none.headers['www-authenticate'], 'Bearer');
});

test("notification history: the owner's token or the admin key; another user's token 404, none 401", async () => {
  const url = `/api/users/${alice.user_id}/notifications`;
  const mine = await get(url, bearer(alice.token));
  assert.equal(mine.statusCode, 200, mine.body);
  assert.ok(
    mine.json().notifications.some((n: { type: string }) => n.type === 'booking_confirmed'),
    mine.body,
  );
  assert.equal((await get(url, { 'x-admin-key': t.config.adminApiKey })).statusCode, 200);
  assertProblem(await get(url, bearer(bob.token)), 404, 'not_found');
  assertProblem(await get(url), 401, 'unauthorized');
  assertProblem(await get(url, { 'x-admin-key': 'not-the-admin-key' }), 401, 'unauthorized');
});

test('forged and altered tokens are refused with 401', async () => {
  const url = `/api/v1/users/${alice.user_id}/bookings`;
  const bobsSignature = bob.token.split('.')[2];
  const forgeries = [
    `UT1.${alice.user_id}.${bobsSignature}`,
    `UT1.${alice.user_id}.${'A'.repeat(43)}`,
    `UT1.${alice.user_id}`,
    alice.token.replace('UT1.', 'UT2.'),
    `${alice.token}x`,
  ];
  // The platform's auth hook refuses them all alike (and counts them against the address).
  for (const token of forgeries) assertProblem(await get(url, bearer(token)), 401, 'unauthorized');
  assertProblem(await get(url, { authorization: `Basic ${alice.token}` }), 401, 'unauthorized');
});
