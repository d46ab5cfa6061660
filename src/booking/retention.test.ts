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
import { metricValue } from '../../test/support/platform.ts';
import { TEST_CARDS } from '../payments/api.ts';
import { ConfigError } from '../platform/config-error.ts';
import { bookingRetention } from './retention.ts';
import { loadBookingSettings } from './settings.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const TABLES = ['booking_holds', 'booking_queue_entries', 'booking_show_seats', 'booking_reminders'];

let t: BookingTestApp;

before(async () => {
  t = await bookingTestApp({
    env: {
      BOOKING_HOLD_RETENTION: '1d',
      BOOKING_QUEUE_RETENTION: '1d',
      BOOKING_SHOW_SEATS_RETENTION: '2d',
      BOOKING_REMINDER_RETENTION: '1d',
      BOOKING_QUEUE_CAPACITY: '1',
    },
  });
});
after(() => t?.close());

const db = () => t.adapters.database.db;
const count = async (table: string, where = sql`true`) =>
  (await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)} where ${where}`.execute(db()))
    .rows[0].n;
const queue = (showId: string, userId: string) =>
  t.app.inject({ url: `/api/v1/shows/${showId}/queue`, headers: t.asUser(userId) });

async function held(showId: string, seats: string[]) {
  const response = await hold(t, showId, seats);
  assert.equal(response.statusCode, 201, response.body);
  return response.json() as { hold_id: string; user_id: string };
}

describe('booking retention on a moved clock', () => {
  test('each table loses exactly the rows past its window; bookings stay; metrics show it', async () => {
    const t0 = t.clock.now().getTime();
    // Show A (3 h ahead, 2 h long) will be long over; F is two and a half days ahead; B a month.
    const a = await seedShow(t, { inMs: 3 * HOUR });
    const f = await seedShow(t, { inMs: 2.5 * DAY });
    const b = await seedShow(t, { inMs: 30 * DAY });
    // Hot shows: C over with A, D a month ahead; one admission at a time, so the second user waits.
    const c = await seedShow(t, { inMs: 3 * HOUR, hot: true });
    const d = await seedShow(t, { inMs: 30 * DAY, hot: true });

    // Holds: released (goes), booked (stays), declined payment (released, its booking keeps it),
    // expired (goes), and one that stays HELD unswept long after its expiry (never goes).
    const released = await held(a.showId, ['A1']);
    const del = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/holds/${released.hold_id}`,
      headers: t.asUser(released.user_id),
    });
    assert.equal(del.statusCode, 200, del.body);
    const paid = await held(a.showId, ['A2']);
    const booked = await book(t, paid, TEST_CARDS.success);
    assert.equal(booked.statusCode, 201, booked.body);
    const declined = await held(a.showId, ['A3']);
    const failed = await book(t, declined, TEST_CARDS.declined);
    assert.equal(failed.statusCode, 402, failed.body);
    const onF = await held(f.showId, ['A1']);
    assert.equal((await book(t, onF, TEST_CARDS.success)).statusCode, 201);
    const expired = await held(b.showId, ['A1']);

    const [q1, q2, q3, q4] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    assert.equal((await queue(c.showId, q1)).json().status, 'ADMITTED');
    assert.equal((await queue(c.showId, q2)).json().status, 'WAITING');
    assert.equal((await queue(d.showId, q3)).json().status, 'ADMITTED');
    assert.equal((await queue(d.showId, q4)).json().status, 'WAITING');

    t.clock.advance(11 * 60_000);
    assert.ok(await t.app.platform.scheduler.runTick('booking.sweep', t.clock.now()));
    assert.equal(await count('booking_holds', sql`id = ${expired.hold_id} and status = 'EXPIRED'`), 1);
    const stale = await held(b.showId, ['A2']); // expires at t0 + 21 min; no sweep runs after this

    // A's 2 h reminder at t0 + 1 h; F's 24 h reminder at t0 + 1.5 d.
    t.clock.set(new Date(t0 + HOUR + 60_000));
    assert.ok(await t.app.platform.scheduler.runTick('booking.reminders', t.clock.now()));
    t.clock.set(new Date(t0 + 1.5 * DAY + 60_000));
    assert.ok(await t.app.platform.scheduler.runTick('booking.reminders', t.clock.now()));
    assert.equal(await count('booking_reminders'), 2);

    // A hold released an hour before the run: inside its window.
    t.clock.set(new Date(t0 + 3 * DAY - HOUR));
    const recent = await held(b.showId, ['B1']);
    await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/holds/${recent.hold_id}`,
      headers: t.asUser(recent.user_id),
    });
    const beforeRun = Object.fromEntries(await Promise.all(TABLES.map(async (n) => [n, await count(n)])));

    t.clock.set(new Date(t0 + 3 * DAY));
    assert.ok(await t.app.platform.scheduler.runTick('booking.retention', t.clock.now()));

    const { rows: holds } = await sql<{ id: string; retained: boolean }>`
      select id, retained from booking_holds order by id`.execute(db());
    assert.deepEqual(
      holds.map((row) => [row.id, row.retained]),
      [
        [paid.hold_id, false],
        [declined.hold_id, true],
        [onF.hold_id, false],
        [stale.hold_id, false],
        [recent.hold_id, false],
      ],
      'released and expired holds went; booked, referenced, HELD and recent ones stayed',
    );
    // Waiting room: C is over (both go); D's run-out admission goes, its waiting user stays.
    const { rows: entries } = await sql<{ user_id: string }>`
      select user_id from booking_queue_entries`.execute(db());
    assert.deepEqual(
      entries.map((row) => row.user_id),
      [q4],
    );
    // Inventory: A and C ended more than 2 days ago (42 seats each); F, B and D keep theirs.
    assert.equal(await count('booking_show_seats', sql`show_id in (${a.showId}, ${c.showId})`), 0);
    for (const show of [f, b, d])
      assert.equal(await count('booking_show_seats', sql`show_id = ${show.showId}`), 42);
    // Reminders: A's (its show started more than a day ago) goes; F's stays.
    const { rows: reminders } = await sql<{ show_id: string }>`
      select b.show_id from booking_reminders r join booking_bookings b on b.id = r.booking_id`.execute(db());
    assert.deepEqual(
      reminders.map((row) => row.show_id),
      [f.showId],
    );

    const removed = {
      booking_holds: 2,
      booking_queue_entries: 3,
      booking_show_seats: 84,
      booking_reminders: 1,
    };
    for (const [table, n] of Object.entries(removed)) {
      assert.equal(beforeRun[table] - (await count(table)), n, table);
      assert.equal(await metricValue(t.app, 'retention_rows_removed_total', `table="${table}"`), n, table);
      assert.equal(await metricValue(t.app, 'retention_lag_seconds', `table="${table}"`), 0, table);
    }

    // Business records stay, and read as before.
    assert.equal(
      (
        await t.app.inject({
          url: `/api/v1/bookings/${booked.json().booking_id}`,
          headers: t.asUser(paid.user_id),
        })
      ).json().status,
      'CONFIRMED',
    );
    assert.equal(
      (
        await t.app.inject({
          url: `/api/v1/bookings/${failed.json().booking_id}`,
          headers: t.asUser(declined.user_id),
        })
      ).json().status,
      'FAILED',
    );
    assertProblem(
      await t.app.inject({ url: `/api/v1/holds/${released.hold_id}`, headers: t.asUser(released.user_id) }),
      404,
      'hold_not_found',
    );
    // A waiting user whose entry stayed keeps their place.
    assert.equal((await queue(d.showId, q4)).json().status, 'ADMITTED');

    // A past show's seat map: nothing on sale, every seat of the screen listed.
    const map = await t.app.inject(`/api/v1/shows/${a.showId}/seats`);
    assert.equal(map.statusCode, 200, map.body);
    assert.deepEqual([map.json().available, map.json().total], [0, 42]);
    assert.ok(Object.values(await seatStatus(t.app, a.showId)).every((status) => status === 'BOOKED'));
    // The audit cannot compare holds with an inventory that is gone: 410, not 42 "incomplete" seats.
    const audit = assertProblem(
      await t.app.inject({ url: `/api/v1/admin/shows/${a.showId}/integrity`, headers: t.asAdmin }),
      410,
      'show_inventory_removed',
    );
    assert.equal(audit.inventory_removed_at, new Date(t0 + 3 * DAY).toISOString());
    const live = await t.app.inject({ url: `/api/v1/admin/shows/${f.showId}/integrity`, headers: t.asAdmin });
    assert.equal(live.statusCode, 200, live.body);
    assert.equal(live.json().booked_seats, 1);

    // A second run finds nothing more to do.
    t.clock.advance(5 * 60_000);
    assert.ok(await t.app.platform.scheduler.runTick('booking.retention', t.clock.now()));
    assert.equal(await metricValue(t.app, 'retention_rows_removed_total', 'table="booking_show_seats"'), 84);
  });

  test('a show that has ended sells nothing, inventory or not', async () => {
    const show = await seedShow(t, { inMs: HOUR });
    assert.equal((await t.app.inject(`/api/v1/shows/${show.showId}/seats`)).json().available, 42);
    t.clock.advance(3 * HOUR + 1000);
    assert.equal(await count('booking_show_seats', sql`show_id = ${show.showId}`), 42);
    assert.equal((await t.app.inject(`/api/v1/shows/${show.showId}/seats`)).json().available, 0);
  });

  test('seat inventory goes a whole show at a time, a show at least, until the batch is reached', async () => {
    const seats = bookingRetention(t.adapters.database.db, loadBookingSettings({}).retention).find(
      (policy) => policy.table === 'booking_show_seats',
    )!;
    const now = t.clock.now().getTime();
    // The earlier tests' shows that have ended go first.
    while ((await seats.removeBatch(new Date(now), 1000)) > 0);
    const shows = [await seedShow(t, { inMs: HOUR }), await seedShow(t, { inMs: 2 * HOUR })];
    const cutoff = new Date(now + 10 * HOUR);
    // 40 rows asked: the first show (42 seats) whole, not the second.
    assert.equal(await seats.removeBatch(cutoff, 40), 42);
    assert.equal(await count('booking_show_seats', sql`show_id = ${shows[0].showId}`), 0);
    assert.equal(await count('booking_show_seats', sql`show_id = ${shows[1].showId}`), 42);
    assert.equal(await seats.removeBatch(cutoff, 40), 42);
    assert.equal(await seats.removeBatch(cutoff, 40), 0);
  });
});

test('retention settings: durations with defaults; a bad one names its variable', () => {
  assert.deepEqual(loadBookingSettings({}).retention, {
    holdsMs: 7 * DAY,
    queueMs: DAY,
    showSeatsMs: 30 * DAY,
    remindersMs: 7 * DAY,
  });
  assert.equal(
    loadBookingSettings({ BOOKING_SHOW_SEATS_RETENTION: '15m' }).retention.showSeatsMs,
    15 * 60_000,
  );
  for (const [name, value] of [
    ['BOOKING_HOLD_RETENTION', 'forever'],
    ['BOOKING_QUEUE_RETENTION', '10s'],
    ['BOOKING_SHOW_SEATS_RETENTION', '30'],
    ['BOOKING_REMINDER_RETENTION', '-1d'],
  ]) {
    assert.throws(
      () => loadBookingSettings({ [name]: value }),
      (error) => error instanceof ConfigError && error.message.startsWith(name),
    );
  }
});
