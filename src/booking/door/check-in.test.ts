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
  seedShow,
} from '../../../test/support/booking.ts';
import { TEST_CARDS } from '../../payments/api.ts';

let t: BookingTestApp;
let showId: string;
let otherShowId: string;
let seat = 0;

before(async () => {
  t = await bookingTestApp();
  showId = (await seedShow(t, { inMs: 2 * 3_600_000 })).showId;
  otherShowId = (await seedShow(t, { inMs: 2 * 3_600_000 })).showId;
});
after(() => t.close());

/** A new user books the next free seat of `show`; its ticket token and booking. */
async function ticket(show = showId, contact?: { email?: string; phone?: string }) {
  const label = `${'ABC'[seat % 3]}${Math.floor(seat++ / 3) + 1}`;
  const held = await hold(t, show, [label]);
  assert.equal(held.statusCode, 201, held.body);
  const booked = await book(t, held.json(), TEST_CARDS.success, randomUUID(), contact ? { contact } : {});
  assert.equal(booked.statusCode, 201, booked.body);
  return booked.json() as { booking_id: string; ticket_token: string; seats: string[]; user_id: string };
}

function checkIn(token: string, body: object, headers: object = t.asOperator) {
  return t.app.inject({
    method: 'POST',
    url: `/api/v1/tickets/${encodeURIComponent(token)}/check-in`,
    headers: headers as Record<string, string>,
    payload: body,
  });
}

function checkInBody(body: object, headers: object = t.asOperator) {
  return t.app.inject({
    method: 'POST',
    url: '/api/v1/tickets/check-in',
    headers: headers as Record<string, string>,
    payload: body,
  });
}

async function checkInRows(bookingId: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from booking_check_ins
    where booking_id = ${bookingId}`.execute(t.adapters.database.db);
  return rows[0].n;
}

describe('door check-in', () => {
  test('the first scan admits with the seats and who booked; the second says when and where', async () => {
    const booking = await ticket(showId, { email: 'alice@example.com' });
    const first = await checkIn(booking.ticket_token, { show_id: showId, door: 'North door' });
    assert.equal(first.statusCode, 200, first.body);
    const admitted = first.json();
    assert.equal(admitted.admitted, true);
    assert.equal(admitted.booking_id, booking.booking_id);
    assert.deepEqual(admitted.seats, booking.seats);
    assert.equal(admitted.holder, 'a•••e@example.com');
    assert.equal(admitted.door, 'North door');
    assert.equal(admitted.checked_in_at, t.clock.now().toISOString());

    t.clock.advance(60_000);
    const again = await checkIn(booking.ticket_token, { show_id: showId, door: 'South door' });
    const problem = assertProblem(again, 409, 'already_checked_in');
    assert.equal(problem.door, 'North door');
    assert.equal(problem.checked_in_at, admitted.checked_in_at);
    assert.deepEqual(problem.seats, booking.seats);
    // The body form is the same check: the ticket stays admitted once.
    const viaBody = await checkInBody({ token: booking.ticket_token, show_id: showId, door: 'South door' });
    assert.equal(assertProblem(viaBody, 409, 'already_checked_in').door, 'North door');
    assert.equal(await checkInRows(booking.booking_id), 1);
  });

  test('the body form admits too, and a booking without contact details is a guest', async () => {
    const booking = await ticket();
    const response = await checkInBody({ token: booking.ticket_token, show_id: showId, door: 'Gate 2' });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.json().holder, 'Guest');
    assert.equal(response.json().door, 'Gate 2');
  });

  test('50 concurrent scans of one ticket admit it exactly once', async () => {
    const booking = await ticket(showId, { phone: '+919876543210' });
    const scans = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        i % 2
          ? checkIn(booking.ticket_token, { show_id: showId, door: `Door ${i}` })
          : checkInBody({ token: booking.ticket_token, show_id: showId, door: `Door ${i}` }),
      ),
    );
    const admitted = scans.filter((scan) => scan.statusCode === 200);
    const refused = scans.filter((scan) => scan.statusCode === 409);
    assert.equal(admitted.length, 1, scans.map((scan) => scan.statusCode).join(' '));
    assert.equal(refused.length, 49);
    assert.equal(admitted[0].json().holder, '+91•••••3210');
    const winner = admitted[0].json().door;
    for (const scan of refused) {
      assert.equal(scan.json().code, 'already_checked_in');
      assert.equal(scan.json().door, winner, 'every refusal names the door that admitted');
    }
    assert.equal(await checkInRows(booking.booking_id), 1);
  });

  test('a ticket for another show is 422 and admits nothing', async () => {
    const booking = await ticket(otherShowId);
    const response = await checkIn(booking.ticket_token, { show_id: showId, door: 'North door' });
    const problem = assertProblem(response, 422, 'wrong_show');
    assert.equal(problem.ticket_show_id, otherShowId);
    assert.equal(await checkInRows(booking.booking_id), 0);
    // At its own show it is still good.
    const right = await checkIn(booking.ticket_token, { show_id: otherShowId, door: 'North door' });
    assert.equal(right.statusCode, 200, right.body);
  });

  test('a cancelled booking is 410 ticket_cancelled', async () => {
    const booking = await ticket();
    const cancelled = await t.app.inject({
      method: 'POST',
      url: `/api/v1/bookings/${booking.booking_id}/cancel`,
      headers: t.asUser(booking.user_id),
      payload: { accept_no_refund: true },
    });
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    const response = await checkIn(booking.ticket_token, { show_id: showId, door: 'North door' });
    assertProblem(response, 410, 'ticket_cancelled');
    assert.equal(await checkInRows(booking.booking_id), 0);
  });

  test('a forged or unknown token is 404; bad bodies are 400; nothing is written', async () => {
    const booking = await ticket();
    const forged = `${booking.ticket_token.slice(0, -4)}AAAA`;
    assertProblem(await checkIn(forged, { show_id: showId, door: 'North door' }), 404, 'booking_not_found');
    assertProblem(await checkIn(booking.ticket_token, { show_id: showId }), 400, 'validation_failed');
    assertProblem(
      await checkIn(booking.ticket_token, { show_id: 'not-a-uuid', door: 'North door' }),
      400,
      'validation_failed',
    );
    assertProblem(await checkInBody({ show_id: showId, door: 'X' }), 400, 'validation_failed');
    assert.equal(await checkInRows(booking.booking_id), 0);
  });

  test('only door staff (booking:door) and the admin may check in', async () => {
    const booking = await ticket();
    const body = { show_id: showId, door: 'North door' };
    assertProblem(await checkIn(booking.ticket_token, body, {}), 401, 'unauthorized');
    assertProblem(await checkIn(booking.ticket_token, body, t.asUser(booking.user_id)), 401, 'unauthorized');
    assertProblem(await checkIn(booking.ticket_token, body, t.asService), 401, 'unauthorized');
    assert.equal(await checkInRows(booking.booking_id), 0);
    const byAdmin = await checkIn(booking.ticket_token, body, t.asAdmin);
    assert.equal(byAdmin.statusCode, 200, byAdmin.body);
    const { rows } = await sql<{ by: string }>`select checked_in_by as by from booking_check_ins
      where booking_id = ${booking.booking_id}`.execute(t.adapters.database.db);
    assert.match(rows[0].by, /^admin:/);
  });

  // Last: it moves the clock past the shows' end.
  test('after the show has ended a ticket is 422 show_ended', async () => {
    const booking = await ticket();
    t.clock.advance(5 * 3_600_000);
    const response = await checkIn(booking.ticket_token, { show_id: showId, door: 'North door' });
    assert.ok(assertProblem(response, 422, 'show_ended').end_time);
    assert.equal(await checkInRows(booking.booking_id), 0);
  });
});
