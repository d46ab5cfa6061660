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
  type Seeded,
  seatStatus,
  seedShow,
} from '../../../test/support/booking.ts';

let t: BookingTestApp;
let seeded: Seeded;

before(async () => {
  t = await bookingTestApp();
  seeded = await seedShow(t, { multiplier: 1.5 });
});
after(() => t.close());

async function heldRows(showId: string) {
  const { rows } = await sql<{
    n: number;
  }>`select count(*)::int as n from booking_holds where show_id = ${showId}`.execute(t.adapters.database.db);
  return rows[0].n;
}

describe('GET /api/v1/shows/{id}/seats', () => {
  test("the spec's shape plus row, number and type; price = base price × the show's multiplier", async () => {
    const response = await t.app.inject(`/api/v1/shows/${seeded.showId}/seats`);
    assert.equal(response.statusCode, 200);
    const body = response.json();
    assert.equal(body.show_id, seeded.showId);
    assert.equal(body.total, 42);
    assert.equal(body.available, 42);
    assert.deepEqual(body.seats[0], {
      seat_id: 'A1',
      status: 'AVAILABLE',
      price: 300,
      row: 'A',
      number: 1,
      seat_type: 'REGULAR',
    });
    const premium = body.seats.find((seat: { seat_id: string }) => seat.seat_id === 'D8');
    // 300.50 × 1.5 = 450.75
    assert.deepEqual([premium.price, premium.seat_type], [450.75, 'PREMIUM']);
    const recliner = body.seats.find((seat: { seat_id: string }) => seat.seat_id === 'E4');
    assert.deepEqual([recliner.price, recliner.seat_type], [750, 'RECLINER']);
  });

  test('an unknown show is 404', async () => {
    assertProblem(await t.app.inject(`/api/v1/shows/${randomUUID()}/seats`), 404, 'show_not_found');
  });
});

describe('POST /api/v1/shows/{id}/hold', () => {
  test('holds every seat, 201 with hold_id, seats, expires_at (10 minutes) and total_amount; held seats show BOOKED', async () => {
    const user = randomUUID();
    const response = await hold(t, seeded.showId, ['B1', 'b2', 'D1'], user);
    assert.equal(response.statusCode, 201, response.body);
    const body = response.json();
    assert.deepEqual(body.seats, ['B1', 'B2', 'D1']);
    assert.equal(body.user_id, user);
    assert.equal(body.status, 'HELD');
    assert.equal(body.expires_at, new Date(t.clock.now().getTime() + 600_000).toISOString());
    assert.equal(body.total_amount, 300 + 300 + 450.75);
    assert.equal(response.headers.location, `/api/v1/holds/${body.hold_id}`);
    const seats = await seatStatus(t.app, seeded.showId);
    assert.deepEqual([seats.B1, seats.B2, seats.D1, seats.B3], ['BOOKED', 'BOOKED', 'BOOKED', 'AVAILABLE']);
    const got = await t.app.inject({ url: `/api/v1/holds/${body.hold_id}`, headers: t.asUser(user) });
    assert.equal(got.json().status, 'HELD');
  });

  test('all or nothing: one taken seat → 409 seats_unavailable naming it, and none of the others is held', async () => {
    assert.equal((await hold(t, seeded.showId, ['C5'])).statusCode, 201);
    const before = await heldRows(seeded.showId);
    const response = await hold(t, seeded.showId, ['C4', 'C5', 'C6']);
    const body = assertProblem(response, 409, 'seats_unavailable');
    assert.deepEqual(body.seats, ['C5']);
    assert.match(body.detail, /C5/);
    const seats = await seatStatus(t.app, seeded.showId);
    assert.deepEqual([seats.C4, seats.C6], ['AVAILABLE', 'AVAILABLE']);
    assert.equal(await heldRows(seeded.showId), before);
  });

  test('at most 10 seats, no seat twice, seats that exist, a UUID user: bad requests change nothing', async () => {
    const asUser = (userId: unknown) =>
      t.app.inject({
        method: 'POST',
        url: `/api/v1/shows/${seeded.showId}/hold`,
        headers: t.asUser(randomUUID()),
        payload: { seat_ids: ['A1'], user_id: userId },
      });
    const before = await heldRows(seeded.showId);
    const eleven = ['A1', 'A2', 'A3', 'A4', 'A5', 'A6', 'A7', 'A8', 'A9', 'A10', 'E1'];
    assertProblem(await hold(t, seeded.showId, eleven), 400, 'validation_failed');
    assertProblem(await hold(t, seeded.showId, ['A1', 'A1']), 400, 'validation_failed');
    assertProblem(await hold(t, seeded.showId, ['A1', 'a1']), 400, 'validation_failed');
    assertProblem(await hold(t, seeded.showId, []), 400, 'validation_failed');
    assertProblem(await asUser('not-a-uuid'), 400, 'validation_failed');
    // A token an identity provider issued for an id of another shape cannot hold here.
    assertProblem(await hold(t, seeded.showId, ['A1'], 'not-a-uuid'), 403, 'forbidden');
    const unknown = assertProblem(await hold(t, seeded.showId, ['A1', 'Z9', 'E5']), 422, 'unknown_seats');
    assert.deepEqual(unknown.seats, ['Z9', 'E5']);
    assertProblem(await hold(t, randomUUID(), ['A1']), 404, 'show_not_found');
    assert.equal(await heldRows(seeded.showId), before);
    assert.equal((await seatStatus(t.app, seeded.showId)).A1, 'AVAILABLE');
  });

  test('exactly 10 seats is fine', async () => {
    const ten = Array.from({ length: 10 }, (_, i) => `A${i + 1}`);
    assert.equal((await hold(t, seeded.showId, ten)).statusCode, 201);
  });

  test('a hold can be released before paying; its seats are free at once; releasing again changes nothing', async () => {
    const held = (await hold(t, seeded.showId, ['E1', 'E2'])).json();
    const release = (id: string) =>
      t.app.inject({ method: 'DELETE', url: `/api/v1/holds/${id}`, headers: t.asUser(held.user_id) });
    const released = await release(held.hold_id);
    assert.equal(released.statusCode, 200, released.body);
    assert.equal(released.json().status, 'RELEASED');
    assert.equal((await seatStatus(t.app, seeded.showId)).E1, 'AVAILABLE');
    const again = await release(held.hold_id);
    assert.equal(again.json().status, 'RELEASED');
    assertProblem(await release(randomUUID()), 404, 'hold_not_found');
    assert.equal((await hold(t, seeded.showId, ['E1'])).statusCode, 201);
  });

  test('a show that has started takes no holds (409)', async () => {
    const soon = await seedShow(t, { inMs: 60_000 });
    t.clock.advance(61_000);
    try {
      assertProblem(await hold(t, soon.showId, ['A1']), 409, 'show_started');
    } finally {
      t.clock.advance(-61_000);
    }
  });
});

describe('expiry (clock)', () => {
  test('after 10 minutes a hold has expired: its seats show AVAILABLE and another user can hold and book them at once', async () => {
    const show = await seedShow(t);
    const first = (await hold(t, show.showId, ['C1', 'C2'])).json();
    t.clock.advance(9 * 60_000 + 59_000);
    assertProblem(await hold(t, show.showId, ['C2', 'C3']), 409, 'seats_unavailable');
    t.clock.advance(1000);
    // Not swept yet: expired holds count as free anyway.
    assert.equal((await seatStatus(t.app, show.showId)).C1, 'AVAILABLE');
    const expired = await t.app.inject({
      url: `/api/v1/holds/${first.hold_id}`,
      headers: t.asUser(first.user_id),
    });
    assert.equal(expired.json().status, 'EXPIRED');
    const second = await hold(t, show.showId, ['C2', 'C3']);
    assert.equal(second.statusCode, 201, second.body);
    const booked = await book(t, second.json(), '4242424242424242');
    assert.equal(booked.statusCode, 201, booked.body);
    assert.equal(booked.json().status, 'CONFIRMED');
    // The sweeper then marks the old hold EXPIRED and frees only the seats still its own (C1).
    assert.ok(await t.app.platform.scheduler.runTick('booking.sweep', t.clock.now()));
    const { rows } = await sql<{ status: string; release_reason: string }>`select status, release_reason
      from booking_holds where id = ${first.hold_id}`.execute(t.adapters.database.db);
    assert.deepEqual(rows[0], { status: 'EXPIRED', release_reason: 'expired' });
    const seats = await seatStatus(t.app, show.showId);
    assert.deepEqual([seats.C1, seats.C2, seats.C3], ['AVAILABLE', 'BOOKED', 'BOOKED']);
    const { rows: inventory } = await sql<{
      status: string;
      hold_id: string | null;
    }>`select ss.status, ss.hold_id
      from booking_show_seats ss join booking_seats s on s.id = ss.seat_id
      where ss.show_id = ${show.showId} and s.row_number = 'C' and s.seat_number in (1, 2) order by s.seat_number`.execute(
      t.adapters.database.db,
    );
    assert.deepEqual(inventory, [
      { status: 'AVAILABLE', hold_id: null },
      { status: 'BOOKED', hold_id: second.json().hold_id },
    ]);
  });
});

describe('seat availability cache (30 s, dropped on every hold and release)', () => {
  test('a read fills it for 30 s; a hold drops it so the next read shows the seat taken', async () => {
    const show = await seedShow(t);
    await seatStatus(t.app, show.showId);
    const ttl = await t.adapters.cache.ttl(`booking:seats:${show.showId}`);
    assert.ok(ttl !== undefined && ttl > 25_000 && ttl <= 30_000, `ttl ${ttl}`);
    assert.equal((await hold(t, show.showId, ['B5'])).statusCode, 201);
    assert.equal(await t.adapters.cache.ttl(`booking:seats:${show.showId}`), undefined);
    assert.equal((await seatStatus(t.app, show.showId)).B5, 'BOOKED');
  });

  test('a change behind the cache is not seen for up to 30 s, then it is (the database decides holds anyway)', async () => {
    const show = await seedShow(t);
    await seatStatus(t.app, show.showId);
    await sql`update booking_show_seats set status = 'BOOKED' where show_id = ${show.showId}`.execute(
      t.adapters.database.db,
    );
    assert.equal((await seatStatus(t.app, show.showId)).A1, 'AVAILABLE');
    assertProblem(await hold(t, show.showId, ['A1']), 409, 'seats_unavailable');
    if (t.adapters.cache.kind === 'memory') {
      t.clock.advance(30_001);
      assert.equal((await seatStatus(t.app, show.showId)).A2, 'BOOKED');
    } else {
      // Redis expires keys on its own clock: the entry is at most 30 s old.
      const ttl = await t.adapters.cache.ttl(`booking:seats:${show.showId}`);
      assert.ok(ttl !== undefined && ttl <= 30_000, `ttl ${ttl}`);
    }
  });
});

test('admin integrity check of a show: no seat held twice, no hold missing a seat', async () => {
  assert.equal((await hold(t, seeded.showId, ['E3'])).statusCode, 201);
  const response = await t.app.inject({
    url: `/api/v1/admin/shows/${seeded.showId}/integrity`,
    headers: t.asAdmin,
  });
  assert.equal(response.statusCode, 200, response.body);
  const body = response.json();
  assert.equal(body.double_booked_seats, 0);
  assert.equal(body.incomplete_holds, 0);
  assert.ok(body.held_seats > 0);
  assertProblem(await t.app.inject(`/api/v1/admin/shows/${seeded.showId}/integrity`), 401, 'unauthorized');
});
