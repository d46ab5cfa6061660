import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  assertProblem,
  type BookingTestApp,
  book,
  bookingTestApp,
  hold,
  seatStatus,
  seedShow,
} from '../../../test/support/booking.ts';
import { paymentsApi } from '../../../test/support/payments.ts';
import { BOOKING_NOTIFICATION_TYPES } from '../../notify/api.ts';
import { type PaymentsApi, TEST_CARDS } from '../../payments/api.ts';

let t: BookingTestApp;
let payments: PaymentsApi;

before(async () => {
  t = await bookingTestApp();
  payments = paymentsApi(t.app);
});
after(() => t.close());

async function confirmedBooking(showId: string, seats: string[]) {
  const held = await hold(t, showId, seats);
  assert.equal(held.statusCode, 201, held.body);
  const booked = await book(t, held.json(), TEST_CARDS.success);
  assert.equal(booked.statusCode, 201, booked.body);
  return booked.json();
}

/** `userId` cancels a booking with their token (`body`: what else the request says). */
function cancel(id: string, userId: string, body: { accept_no_refund?: boolean; user_id?: string } = {}) {
  return t.app.inject({
    method: 'POST',
    url: `/api/v1/bookings/${id}/cancel`,
    headers: t.asUser(userId),
    payload: body,
  });
}

/** A booking's status as the admin sees it. */
async function statusOf(id: string) {
  return (await t.app.inject({ url: `/api/v1/bookings/${id}`, headers: t.asAdmin })).json().status;
}

describe('POST /api/v1/bookings/{id}/cancel', () => {
  test('before the cutoff: CANCELLED, full refund, seats on sale again, the user told', async () => {
    const { showId } = await seedShow(t, { inMs: 2 * 86_400_000 });
    const booked = await confirmedBooking(showId, ['A1', 'A2']);
    // The terms the booking page states before asking: all back until 4 h before the show.
    assert.deepEqual(booked.cancellation, {
      allowed: true,
      refund_amount: booked.total_paid,
      refund_until: new Date(new Date(booked.show.show_time).getTime() - 4 * 3_600_000).toISOString(),
    });
    const response = await cancel(booked.booking_id, booked.user_id);
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json();
    assert.equal(body.status, 'CANCELLED');
    assert.deepEqual(body.refund, { amount: booked.total_paid, status: 'COMPLETED' });
    assert.equal(body.qr_code, null);
    assert.equal((await payments.get(booked.payment_id))?.status, 'REFUNDED');
    const seats = await seatStatus(t.app, showId);
    assert.deepEqual([seats.A1, seats.A2], ['AVAILABLE', 'AVAILABLE']);
    assert.equal((await hold(t, showId, ['A1'])).statusCode, 201);
    const told = t.notify.ofType('booking_cancelled').find((n) => n.data.booking_id === booked.booking_id);
    assert.ok(told);
    for (const variable of BOOKING_NOTIFICATION_TYPES.booking_cancelled)
      assert.ok(told.data[variable] !== undefined);
    assert.equal(told.data.time_zone, 'Asia/Kolkata', "the venue city's zone");
    assert.equal(told.data.currency, 'INR');
    const refund = t.notify.ofType('refund_update').find((n) => n.data.booking_id === booked.booking_id);
    assert.equal(refund?.data.refund_status, 'COMPLETED');
    assert.equal(refund?.data.currency, 'INR');
    const ticket = await t.app.inject({
      url: `/api/v1/tickets/${booked.ticket_token}`,
      headers: t.asOperator,
    });
    assert.equal(ticket.json().valid, false);
    assertProblem(await cancel(booked.booking_id, booked.user_id), 409, 'booking_not_cancellable');
  });

  test('after the cutoff (4 h before the show): 409 unless the user accepts no refund', async () => {
    const { showId } = await seedShow(t, { inMs: 3 * 3_600_000 });
    const booked = await confirmedBooking(showId, ['B1']);
    assert.equal(booked.cancellation.refund_amount, 0, 'past the cutoff: nothing back');
    assert.equal(booked.cancellation.allowed, true);
    const refused = assertProblem(
      await cancel(booked.booking_id, booked.user_id),
      409,
      'refund_cutoff_passed',
    );
    assert.ok(refused.refund_cutoff);
    assert.equal(await statusOf(booked.booking_id), 'CONFIRMED');
    const response = await cancel(booked.booking_id, booked.user_id, { accept_no_refund: true });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.json().status, 'CANCELLED');
    assert.equal(response.json().refund, null);
    assert.equal((await payments.get(booked.payment_id))?.status, 'COMPLETED');
    assert.equal((await seatStatus(t.app, showId)).B1, 'AVAILABLE');
  });

  test("someone else's booking is 404; a started show cannot be cancelled; unknown is 404", async () => {
    const { showId } = await seedShow(t, { inMs: 2 * 3_600_000 });
    const booked = await confirmedBooking(showId, ['C1']);
    assertProblem(await cancel(booked.booking_id, randomUUID()), 404, 'booking_not_found');
    assertProblem(await cancel(randomUUID(), booked.user_id), 404, 'booking_not_found');
    t.clock.advance(2 * 3_600_000);
    assertProblem(
      await cancel(booked.booking_id, booked.user_id, { accept_no_refund: true }),
      409,
      'booking_not_cancellable',
    );
    assert.equal(await statusOf(booked.booking_id), 'CONFIRMED');
  });
});

describe('who may cancel a booking', () => {
  test("the token's user, without naming themselves; a body user_id naming someone else is 403", async () => {
    const { showId } = await seedShow(t, { inMs: 2 * 86_400_000 });
    const booked = await confirmedBooking(showId, ['A1']);
    const other = randomUUID();
    assertProblem(await cancel(booked.booking_id, booked.user_id, { user_id: other }), 403, 'forbidden');
    assert.equal(await statusOf(booked.booking_id), 'CONFIRMED');
    // Their own id in the body is still accepted, as before the token decided.
    const response = await cancel(booked.booking_id, booked.user_id, {
      user_id: booked.user_id.toUpperCase(),
    });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.json().status, 'CANCELLED');
  });

  test('without a token 401; the admin cancels any booking (the booker is told the venue did)', async () => {
    const { showId } = await seedShow(t, { inMs: 2 * 86_400_000 });
    const booked = await confirmedBooking(showId, ['B1']);
    const url = `/api/v1/bookings/${booked.booking_id}/cancel`;
    assertProblem(await t.app.inject({ method: 'POST', url, payload: {} }), 401, 'unauthorized');
    assertProblem(
      await t.app.inject({ method: 'POST', url, headers: t.asOperator, payload: {} }),
      401,
      'unauthorized',
    );
    assert.equal(await statusOf(booked.booking_id), 'CONFIRMED');
    const response = await t.app.inject({ method: 'POST', url, headers: t.asAdmin, payload: {} });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.json().status, 'CANCELLED');
    assert.deepEqual(response.json().refund, { amount: booked.total_paid, status: 'COMPLETED' });
    const told = t.notify.ofType('booking_cancelled').find((n) => n.data.booking_id === booked.booking_id);
    assert.match(String(told?.data.reason), /venue/);
  });
});

describe('POST /api/v1/shows/{id}/cancel (admin)', () => {
  test('refunds every booker in full, tells each, closes the inventory; holds are refused afterwards', async () => {
    const { showId } = await seedShow(t, { inMs: 86_400_000 });
    const first = await confirmedBooking(showId, ['A1', 'A2']);
    const second = await confirmedBooking(showId, ['D1']);
    const held = (await hold(t, showId, ['E1'])).json();

    assertProblem(
      await t.app.inject({ method: 'POST', url: `/api/v1/shows/${showId}/cancel`, payload: {} }),
      401,
      'unauthorized',
    );
    assert.equal(await statusOf(first.booking_id), 'CONFIRMED');

    const response = await t.app.inject({
      method: 'POST',
      url: `/api/v1/shows/${showId}/cancel`,
      headers: t.asAdmin,
      payload: { reason: 'projector broke' },
    });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(response.json(), {
      show_id: showId,
      status: 'CANCELLED',
      bookings_cancelled: 2,
      pending_bookings_failed: 0,
      refund_total: first.total_paid + second.total_paid,
    });
    for (const booked of [first, second]) {
      const after = (
        await t.app.inject({
          url: `/api/v1/bookings/${booked.booking_id}`,
          headers: t.asUser(booked.user_id),
        })
      ).json();
      assert.equal(after.status, 'CANCELLED');
      assert.deepEqual(after.refund, { amount: booked.total_paid, status: 'COMPLETED' });
      assert.equal((await payments.get(booked.payment_id))?.status, 'REFUNDED');
      const told = t.notify.ofType('booking_cancelled').find((n) => n.data.booking_id === booked.booking_id);
      assert.match(String(told?.data.reason), /projector broke/);
      assert.equal(told?.data.refund_amount, booked.total_paid);
    }
    const released = await t.app.inject({
      url: `/api/v1/holds/${held.hold_id}`,
      headers: t.asUser(held.user_id),
    });
    assert.equal(released.json().status, 'RELEASED');
    assertProblem(await book(t, held, TEST_CARDS.success), 410, 'hold_expired');
    assert.equal((await t.app.inject(`/api/v1/shows/${showId}`)).json().status, 'CANCELLED');
    const seats = await seatStatus(t.app, showId);
    assert.ok(
      Object.values(seats).every((status) => status === 'BOOKED'),
      'no seat on sale',
    );
    assertProblem(await hold(t, showId, ['C3']), 410, 'show_cancelled');
    const again = await t.app.inject({
      method: 'POST',
      url: `/api/v1/shows/${showId}/cancel`,
      headers: t.asAdmin,
    });
    assertProblem(again, 410, 'show_cancelled');
  });
});

describe('reminders (clock)', () => {
  test('24 h and 2 h before the show, once each; a booking made later than 24 h before gets only the 2 h one', async () => {
    const { showId } = await seedShow(t, { inMs: 30 * 3_600_000 });
    const early = await confirmedBooking(showId, ['A5']);
    const showTime = new Date((await t.app.inject(`/api/v1/shows/${showId}`)).json().show_time).getTime();
    const remindersOf = (id: string) =>
      t.notify
        .ofType('booking_reminder')
        .filter((n) => n.data.booking_id === id)
        .map((n) => n.data.hours_before);

    t.clock.set(new Date(showTime - 24 * 3_600_000 - 60_000));
    await t.app.platform.scheduler.runTick('booking.reminders', t.clock.now());
    assert.deepEqual(remindersOf(early.booking_id), [], 'not yet');

    t.clock.set(new Date(showTime - 24 * 3_600_000));
    await t.app.platform.scheduler.runTick('booking.reminders', t.clock.now());
    assert.deepEqual(remindersOf(early.booking_id), [24]);
    const reminder = t.notify.ofType('booking_reminder').find((n) => n.data.booking_id === early.booking_id);
    for (const variable of BOOKING_NOTIFICATION_TYPES.booking_reminder)
      assert.ok(reminder?.data[variable] !== undefined);
    assert.equal(reminder?.data.time_zone, 'Asia/Kolkata');

    const late = await confirmedBooking(showId, ['A6']);
    t.clock.advance(60_000);
    await t.app.platform.scheduler.runTick('booking.reminders', t.clock.now());
    assert.deepEqual(remindersOf(early.booking_id), [24], 'once');
    assert.deepEqual(remindersOf(late.booking_id), [], 'booked after its 24 h mark');

    t.clock.set(new Date(showTime - 2 * 3_600_000));
    await t.app.platform.scheduler.runTick('booking.reminders', t.clock.now());
    assert.deepEqual(remindersOf(early.booking_id), [24, 2]);
    assert.deepEqual(remindersOf(late.booking_id), [2]);
    t.clock.advance(60_000);
    await t.app.platform.scheduler.runTick('booking.reminders', t.clock.now());
    const calls = t.notify.calls.filter((n) => n.type === 'booking_reminder');
    assert.equal(calls.filter((n) => n.data.booking_id === early.booking_id).length, 2, 'each sent once');
    assert.equal(calls.filter((n) => n.data.booking_id === late.booking_id).length, 1);
  });
});
