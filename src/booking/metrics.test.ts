import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  type BookingTestApp,
  book,
  bookingTestApp,
  hold,
  type Seeded,
  seedShow,
} from '../../test/support/booking.ts';
import { metricValue } from '../../test/support/platform.ts';
import { TEST_CARDS } from '../payments/api.ts';

let t: BookingTestApp;
let show: Seeded;
let row = 0;

before(async () => {
  // A waiting room of one admission at a time, so a few users make a queue.
  t = await bookingTestApp({ env: { BOOKING_QUEUE_CAPACITY: '1' } });
  show = await seedShow(t, { multiplier: 1 });
});
after(() => t.close());

/** A counter's value now (0 before its first increment: the series is not served yet). */
async function count(name: string, labels: string) {
  const value = await metricValue(t.app, name, labels);
  return Number.isNaN(value) ? 0 : value;
}

/** How much each series moved while `act` ran. */
async function moved(name: string, outcomes: string[], act: () => Promise<void>) {
  const before = await Promise.all(outcomes.map((outcome) => count(name, `outcome="${outcome}"`)));
  await act();
  const after = await Promise.all(outcomes.map((outcome) => count(name, `outcome="${outcome}"`)));
  return Object.fromEntries(outcomes.map((outcome, i) => [outcome, after[i] - before[i]]));
}

/** A fresh seat of the show, held by a new user. */
async function freshHold() {
  const response = await hold(t, show.showId, [`${'ABC'[row % 3]}${Math.floor(row++ / 3) + 1}`]);
  assert.equal(response.statusCode, 201, response.body);
  return response.json() as { hold_id: string; user_id: string; seats: string[] };
}

describe('booking_holds_total', () => {
  test('counts hold requests by outcome: held, unavailable, limited, admission_required, closed, rejected', async () => {
    const outcomes = ['held', 'unavailable', 'limited', 'admission_required', 'closed', 'rejected'];
    const hot = await seedShow(t, { hot: true });
    const cancelled = await seedShow(t);
    const cancel = await t.app.inject({
      method: 'POST',
      url: `/api/v1/shows/${cancelled.showId}/cancel`,
      headers: t.asAdmin,
      payload: {},
    });
    assert.equal(cancel.statusCode, 200, cancel.body);
    const user = randomUUID();
    const deltas = await moved('booking_holds_total', outcomes, async () => {
      assert.equal((await hold(t, show.showId, ['E1'], user)).statusCode, 201);
      assert.equal((await hold(t, show.showId, ['E1'])).statusCode, 409); // taken
      assert.equal((await hold(t, show.showId, ['E2'], user)).statusCode, 409); // one hold per show
      assert.equal((await hold(t, hot.showId, ['A1'])).statusCode, 403);
      assert.equal((await hold(t, cancelled.showId, ['A1'])).statusCode, 410);
      assert.equal((await hold(t, show.showId, ['Z99'])).statusCode, 422);
    });
    assert.deepEqual(deltas, {
      held: 1,
      unavailable: 1,
      limited: 1,
      admission_required: 1,
      closed: 1,
      rejected: 1,
    });
  });
});

describe('booking_bookings_total', () => {
  const outcomes = ['confirmed', 'payment_declined', 'expired', 'cancelled'];

  test('a paid booking is confirmed, a declined card is payment_declined', async () => {
    const deltas = await moved('booking_bookings_total', outcomes, async () => {
      assert.equal((await book(t, await freshHold(), TEST_CARDS.success)).statusCode, 201);
      assert.equal((await book(t, await freshHold(), TEST_CARDS.declined)).statusCode, 402);
    });
    assert.deepEqual(deltas, { confirmed: 1, payment_declined: 1, expired: 0, cancelled: 0 });
  });

  test('a payment that never answers expires at the sweep; a cancelled booking is cancelled', async () => {
    const deltas = await moved('booking_bookings_total', outcomes, async () => {
      const held = await freshHold();
      const booked = await book(t, await freshHold(), TEST_CARDS.success);
      assert.equal(booked.statusCode, 201, booked.body);
      const cancel = await t.app.inject({
        method: 'POST',
        url: `/api/v1/bookings/${booked.json().booking_id}/cancel`,
        headers: t.asUser(booked.json().user_id),
        payload: {},
      });
      assert.equal(cancel.statusCode, 200, cancel.body);
      assert.equal((await book(t, held, TEST_CARDS.noAnswer)).statusCode, 202);
      t.clock.advance(121_000);
      assert.ok(await t.app.platform.scheduler.runTick('booking.sweep', t.clock.now()));
    });
    // The cancelled booking was confirmed first.
    assert.deepEqual(deltas, { confirmed: 1, payment_declined: 0, expired: 1, cancelled: 1 });
  });
});

describe('waiting room gauges', () => {
  test('users waiting over every hot show, and how many shows have a queue, read at scrape time', async () => {
    const before = {
      users: await metricValue(t.app, 'booking_waiting_room_users'),
      shows: await metricValue(t.app, 'booking_waiting_room_shows'),
    };
    // Served from the start (a gauge read at scrape time), not only once something waits.
    assert.ok(Number.isFinite(before.users) && Number.isFinite(before.shows), JSON.stringify(before));
    const hot = await seedShow(t, { hot: true });
    // One admitted (capacity 1), three waiting.
    for (let i = 0; i < 4; i++) {
      const response = await t.app.inject({
        url: `/api/v1/shows/${hot.showId}/queue`,
        headers: t.asUser(randomUUID()),
      });
      assert.equal(response.statusCode, 200, response.body);
    }
    assert.equal(await metricValue(t.app, 'booking_waiting_room_users'), before.users + 3);
    assert.equal(await metricValue(t.app, 'booking_waiting_room_shows'), before.shows + 1);
  });
});
