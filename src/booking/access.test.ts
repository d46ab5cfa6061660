import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import {
  assertProblem,
  type BookingTestApp,
  book,
  bookingTestApp,
  hold,
  seatStatus,
  seedShow,
} from '../../test/support/booking.ts';
import { TEST_CARDS } from '../payments/api.ts';

/**
 * Who may call what on the booking API: holds, bookings and cancels are the token's user's (none
 * → 401, another user's → 404, a body naming another user → 403); the ticket is shown only to its
 * user; the door check needs an operator (or the admin).
 */
let t: BookingTestApp;
let showId: string;
const alice = randomUUID();
const mallory = randomUUID();
let aliceHold: { hold_id: string; user_id: string };
let aliceBooking: { booking_id: string; ticket_token: string; qr_code: string; user_id: string };

before(async () => {
  t = await bookingTestApp({
    // The development operator (every scope) and a parking panel's key, which has no door scope.
    env: { OPERATOR_KEYS: 'demo * dev-operator-key; gate parking:panel gate-key-0123456789' },
  });
  showId = (await seedShow(t)).showId;
  const held = await hold(t, showId, ['A1', 'A2'], alice);
  assert.equal(held.statusCode, 201, held.body);
  const booked = await book(t, held.json(), TEST_CARDS.success);
  assert.equal(booked.statusCode, 201, booked.body);
  aliceBooking = booked.json();
  const second = await hold(t, showId, ['B1'], alice);
  assert.equal(second.statusCode, 201, second.body);
  aliceHold = second.json();
});
after(() => t.close());

const request = (method: 'GET' | 'POST' | 'DELETE', url: string, headers = {}, payload?: object) =>
  t.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });

const card = { card_number: TEST_CARDS.success, exp_month: 12, exp_year: 2030, cvc: '123' };

describe('without credentials', () => {
  test('holds, bookings, cancels, the waiting room and the door check answer 401 problem+json', async () => {
    const calls: [string, () => ReturnType<typeof request>][] = [
      [
        'hold',
        () => request('POST', `/api/v1/shows/${showId}/hold`, {}, { seat_ids: ['C1'], user_id: alice }),
      ],
      ['read a hold', () => request('GET', `/api/v1/holds/${aliceHold.hold_id}`)],
      ['release a hold', () => request('DELETE', `/api/v1/holds/${aliceHold.hold_id}`)],
      [
        'book',
        () =>
          request(
            'POST',
            '/api/v1/bookings',
            { 'idempotency-key': randomUUID() },
            { hold_id: aliceHold.hold_id, payment_method: 'CARD', payment_details: card },
          ),
      ],
      ['read a booking', () => request('GET', `/api/v1/bookings/${aliceBooking.booking_id}`)],
      ['list bookings', () => request('GET', `/api/v1/users/${alice}/bookings`)],
      [
        'cancel',
        () => request('POST', `/api/v1/bookings/${aliceBooking.booking_id}/cancel`, {}, { user_id: alice }),
      ],
      ['join the queue', () => request('GET', `/api/v1/shows/${showId}/queue?user_id=${alice}`)],
      ['door check', () => request('GET', `/api/v1/tickets/${aliceBooking.ticket_token}`)],
    ];
    for (const [what, call] of calls) {
      const body = assertProblem(await call(), 401, 'unauthorized');
      assert.ok(body.detail, what);
    }
    // Nothing changed: the hold holds, the booking stands, no seat was taken.
    const seats = await seatStatus(t.app, showId);
    assert.deepEqual([seats.B1, seats.C1], ['BOOKED', 'AVAILABLE']);
    assert.equal((await owned(`/api/v1/holds/${aliceHold.hold_id}`)).status, 'HELD');
    assert.equal((await owned(`/api/v1/bookings/${aliceBooking.booking_id}`)).status, 'CONFIRMED');
  });
});

/** What Alice herself reads. */
async function owned(url: string) {
  const response = await request('GET', url, t.asUser(alice));
  assert.equal(response.statusCode, 200, response.body);
  return response.json();
}

describe("another user's token", () => {
  test("reads, releases, pays for and cancels nothing of Alice's: 404 as if it did not exist", async () => {
    const as = t.asUser(mallory);
    assertProblem(await request('GET', `/api/v1/holds/${aliceHold.hold_id}`, as), 404, 'hold_not_found');
    assertProblem(await request('DELETE', `/api/v1/holds/${aliceHold.hold_id}`, as), 404, 'hold_not_found');
    assertProblem(
      await book(t, { ...aliceHold, user_id: mallory }, TEST_CARDS.success),
      404,
      'hold_not_found',
    );
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from booking_bookings
      where hold_id = ${aliceHold.hold_id}`.execute(t.adapters.database.db);
    assert.equal(rows[0].n, 0, 'no booking was started on her hold');
    assertProblem(
      await request('GET', `/api/v1/bookings/${aliceBooking.booking_id}`, as),
      404,
      'booking_not_found',
    );
    assertProblem(
      await request('POST', `/api/v1/bookings/${aliceBooking.booking_id}/cancel`, as, {}),
      404,
      'booking_not_found',
    );
    assertProblem(await request('GET', `/api/v1/users/${alice}/bookings`, as), 404, 'not_found');
    assert.equal((await owned(`/api/v1/holds/${aliceHold.hold_id}`)).status, 'HELD');
    assert.equal((await owned(`/api/v1/bookings/${aliceBooking.booking_id}`)).status, 'CONFIRMED');
  });

  test("a body or query naming another user than the token's is 403 and holds nothing", async () => {
    const as = t.asUser(mallory);
    const refused = await request('POST', `/api/v1/shows/${showId}/hold`, as, {
      seat_ids: ['C2'],
      user_id: alice,
    });
    assertProblem(refused, 403, 'forbidden');
    assert.equal((await seatStatus(t.app, showId)).C2, 'AVAILABLE');
    assertProblem(
      await request('POST', `/api/v1/bookings/${aliceBooking.booking_id}/cancel`, t.asUser(alice), {
        user_id: mallory,
      }),
      403,
      'forbidden',
    );
    assertProblem(
      await request('GET', `/api/v1/shows/${showId}/queue?user_id=${alice}`, as),
      403,
      'forbidden',
    );
    // Naming oneself is still fine, and the token alone is enough.
    const own = await request('POST', `/api/v1/shows/${showId}/hold`, as, {
      seat_ids: ['C2'],
      user_id: mallory,
    });
    assert.equal(own.statusCode, 201, own.body);
    assert.equal(own.json().user_id, mallory);
  });
});

describe('the ticket', () => {
  test('its user sees the ticket token and QR code; the admin and services read the booking without them', async () => {
    const mine = await owned(`/api/v1/bookings/${aliceBooking.booking_id}`);
    assert.equal(mine.ticket_token, aliceBooking.ticket_token);
    assert.match(mine.qr_code, /^data:image\/png;base64,/);
    for (const staff of [t.asAdmin, t.asService]) {
      const response = await request('GET', `/api/v1/bookings/${aliceBooking.booking_id}`, staff);
      assert.equal(response.statusCode, 200, response.body);
      const seen = response.json();
      assert.equal(seen.status, 'CONFIRMED');
      assert.equal(seen.user_id, alice);
      assert.equal(seen.ticket_token, null);
      assert.equal(seen.qr_code, null);
      assert.ok(!response.body.includes(aliceBooking.ticket_token));
    }
    const listed = await request('GET', `/api/v1/users/${alice}/bookings`, t.asService);
    assert.equal(listed.statusCode, 200, listed.body);
    assert.deepEqual(
      listed
        .json()
        .bookings.map((b: { booking_id: string; ticket_token: null }) => [b.booking_id, b.ticket_token]),
      [[aliceBooking.booking_id, null]],
    );
    const own = (await owned(`/api/v1/users/${alice}/bookings`)).bookings;
    assert.equal(own[0].ticket_token, aliceBooking.ticket_token);
  });

  test('the door check needs an operator with booking:door (or the admin)', async () => {
    const url = `/api/v1/tickets/${aliceBooking.ticket_token}`;
    assertProblem(await request('GET', url), 401, 'unauthorized');
    assertProblem(await request('GET', url, t.asUser(alice)), 401, 'unauthorized');
    assertProblem(await request('GET', url, t.asService), 401, 'unauthorized');
    assertProblem(await request('GET', url, { 'x-operator-key': 'gate-key-0123456789' }), 403, 'forbidden');
    for (const door of [t.asOperator, t.asAdmin]) {
      const response = await request('GET', url, door);
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.json().valid, true);
      assert.equal(response.json().booking_id, aliceBooking.booking_id);
    }
  });
});

test('the admin reads and releases any hold', async () => {
  const held = (await hold(t, showId, ['D1'])).json();
  assert.equal((await request('GET', `/api/v1/holds/${held.hold_id}`, t.asAdmin)).json().status, 'HELD');
  const released = await request('DELETE', `/api/v1/holds/${held.hold_id}`, t.asAdmin);
  assert.equal(released.statusCode, 200, released.body);
  assert.equal(released.json().status, 'RELEASED');
  assert.equal((await seatStatus(t.app, showId)).D1, 'AVAILABLE');
});
