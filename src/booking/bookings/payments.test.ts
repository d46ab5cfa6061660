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
} from '../../../test/support/booking.ts';
import { paymentsApi, postWebhook } from '../../../test/support/payments.ts';
import { createTestApp } from '../../../test/support/platform.ts';
import { BOOKING_NOTIFICATION_TYPES } from '../../notify/api.ts';
import { type PaymentsApi, TEST_CARDS } from '../../payments/api.ts';

let t: BookingTestApp;
let payments: PaymentsApi;
let showId: string;
let row = 0;

before(async () => {
  t = await bookingTestApp();
  payments = paymentsApi(t.app);
  showId = (await seedShow(t, { multiplier: 1 })).showId;
});
after(() => t.close());

/** Two fresh seats of the show, held by a new user. */
async function freshHold(seats = 2) {
  const labels = Array.from(
    { length: seats },
    (_, i) => `${'ABC'[row % 3]}${Math.floor(row / 3) * 2 + i + 1}`,
  );
  row++;
  const response = await hold(t, showId, labels);
  assert.equal(response.statusCode, 201, response.body);
  return response.json() as { hold_id: string; seats: string[]; user_id: string; total_amount: number };
}

/** A seat label of the show no other test holds. */
function nextLabel() {
  return `${'ABC'[row % 3]}${Math.floor(row++ / 3) * 2 + 1}`;
}

/** What a user's bookings left behind: booking rows, payments, and charges the gateway took. */
async function bookedByUser(userId: string) {
  const { rows } = await sql<{ bookings: number; payments: number; charges: number }>`select
      (select count(*)::int from booking_bookings where user_id = ${userId}) as bookings,
      (select count(*)::int from payments p join booking_bookings b on p.reference = b.id::text
        where p.purpose = 'booking' and b.user_id = ${userId}) as payments,
      (select count(*)::int from payments_sandbox_charges c join payments p on p.id::text = c.payment_id
        join booking_bookings b on p.reference = b.id::text
        where p.purpose = 'booking' and b.user_id = ${userId} and c.status = 'succeeded') as charges`.execute(
    t.adapters.database.db,
  );
  return rows[0];
}

/** A booking as its user reads it. */
async function booking(id: string, userId: string) {
  const response = await t.app.inject({ url: `/api/v1/bookings/${id}`, headers: t.asUser(userId) });
  assert.equal(response.statusCode, 200, response.body);
  return response.json();
}

async function holdStatus(held: { hold_id: string; user_id: string }) {
  return (
    await t.app.inject({ url: `/api/v1/holds/${held.hold_id}`, headers: t.asUser(held.user_id) })
  ).json().status;
}

/** The sandbox gateway's record of a payment's outstanding charge, as a webhook carries it. */
async function outstandingCharge(paymentId: string, amountMinor: number) {
  const { rows } = await sql<{ id: string; idempotency_key: string }>`select id, idempotency_key
    from payments_sandbox_charges where payment_id = ${paymentId}`.execute(t.adapters.database.db);
  return {
    id: rows[0].id,
    idempotencyKey: rows[0].idempotency_key,
    paymentId,
    status: 'succeeded' as const,
    amountMinor,
    currency: 'INR',
    last4: '0119',
    brand: 'visa',
    failureCode: null,
    failureMessage: null,
  };
}

describe('a successful payment', () => {
  test('201 CONFIRMED with the spec fields and a QR code; seats BOOKED; confirmation sent', async () => {
    const held = await freshHold();
    const response = await book(t, held, TEST_CARDS.success, randomUUID(), {
      contact: { email: 'ana@example.com', phone: '+919800000001' },
    });
    assert.equal(response.statusCode, 201, response.body);
    const body = response.json();
    assert.equal(body.status, 'CONFIRMED');
    assert.deepEqual(body.seats, held.seats);
    assert.equal(body.total_paid, held.total_amount);
    assert.equal(body.show.show_id, showId);
    assert.match(body.show.movie_title, /Test Movie/);
    assert.match(body.qr_code, /^data:image\/png;base64,[A-Za-z0-9+/]+=*$/);
    assert.match(body.ticket_token, /^TKT1\./);
    assert.equal(response.headers.location, `/api/v1/bookings/${body.booking_id}`);
    assert.equal((await payments.get(body.payment_id))?.status, 'COMPLETED');
    const seats = await seatStatus(t.app, showId);
    for (const label of held.seats) assert.equal(seats[label], 'BOOKED');
    assert.equal(await holdStatus(held), 'BOOKED');
    assert.deepEqual(await booking(body.booking_id, held.user_id), body);
    const mine = (
      await t.app.inject({ url: `/api/v1/users/${held.user_id}/bookings`, headers: t.asUser(held.user_id) })
    ).json();
    assert.deepEqual(
      mine.bookings.map((b: { booking_id: string }) => b.booking_id),
      [body.booking_id],
    );

    const [confirmation] = t.notify
      .ofType('booking_confirmed')
      .filter((n) => n.data.booking_id === body.booking_id);
    assert.deepEqual(confirmation.channels.sort(), ['email', 'push', 'sms']);
    assert.equal(confirmation.user_id, held.user_id);
    for (const variable of BOOKING_NOTIFICATION_TYPES.booking_confirmed) {
      assert.ok(confirmation.data[variable] !== undefined, `variable ${variable}`);
    }
    assert.equal(confirmation.data.qr_code, body.ticket_token, 'notify renders the token as a QR image');
    assert.deepEqual(confirmation.data.seats, held.seats);
    assert.equal(confirmation.data.show_time, body.show.show_time);
    assert.equal(confirmation.data.total_paid, body.total_paid);
    // The show's time is read in the venue's zone (the city's), the amount in the booking's currency.
    assert.equal(confirmation.data.time_zone, 'Asia/Kolkata');
    assert.equal(confirmation.data.currency, body.currency);
    assert.deepEqual(t.notify.contacts.at(-1), {
      userId: held.user_id,
      email: 'ana@example.com',
      phone: '+919800000001',
    });

    const ticket = await t.app.inject({ url: `/api/v1/tickets/${body.ticket_token}`, headers: t.asOperator });
    assert.deepEqual(ticket.json().valid, true);
    const forged = `${body.ticket_token.slice(0, -2)}xx`;
    assertProblem(
      await t.app.inject({ url: `/api/v1/tickets/${forged}`, headers: t.asOperator }),
      404,
      'booking_not_found',
    );
    // The same check with the token out of the URL (and so out of every access log).
    const check = (token: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/tickets/check',
        headers: t.asOperator,
        payload: { token },
      });
    assert.deepEqual((await check(body.ticket_token)).json(), ticket.json());
    assertProblem(await check(forged), 404, 'booking_not_found');
    assert.equal(
      (
        await t.app.inject({
          method: 'POST',
          url: '/api/v1/tickets/check',
          payload: { token: body.ticket_token },
        })
      ).statusCode,
      401,
      'door staff only',
    );
  });

  test('the Idempotency-Key is required; a retry replays the answer and charges once; a new body is 422', async () => {
    const held = await freshHold();
    const missing = await t.app.inject({
      method: 'POST',
      url: '/api/v1/bookings',
      headers: t.asUser(held.user_id),
      payload: { hold_id: held.hold_id, payment_method: 'CARD', payment_details: {} },
    });
    assertProblem(missing, 400, 'validation_failed');
    const key = randomUUID();
    const first = await book(t, held, TEST_CARDS.success, key);
    const again = await book(t, held, TEST_CARDS.success, key);
    assert.equal(again.statusCode, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.body, first.body);
    const attempts = await payments.listByReference('booking', first.json().booking_id);
    assert.equal(attempts.length, 1);
    assertProblem(await book(t, held, TEST_CARDS.declined, key), 422, 'idempotency_key_reused');
    // Keys are the caller's: the same user's key with another hold is a reused key, not a new request.
    const mine = (await hold(t, showId, ['E1'], held.user_id)).json();
    assertProblem(await book(t, mine, TEST_CARDS.success, key), 422, 'idempotency_key_reused');
    assert.equal(await holdStatus(mine), 'HELD', 'nothing was paid');
    // The same key for another customer's hold is another request, not a replay.
    const other = await freshHold();
    const theirs = await book(t, other, TEST_CARDS.success, key);
    assert.equal(theirs.statusCode, 201, theirs.body);
    assert.notEqual(theirs.json().booking_id, first.json().booking_id);
    // A new key for a booked hold: 409, nothing charged.
    assertProblem(await book(t, held, TEST_CARDS.success), 409, 'hold_already_booked');
    assert.equal((await payments.listByReference('booking', first.json().booking_id)).length, 1);
  });

  test("the Idempotency-Key is the user's, not the hold's: another hold with it is 422, one booking and one charge", async () => {
    const userId = randomUUID();
    const otherShow = (await seedShow(t, { multiplier: 1 })).showId;
    // Two live holds of one user (one per show).
    const first = (await hold(t, showId, [nextLabel()], userId)).json();
    const second = (await hold(t, otherShow, ['A1'], userId)).json();
    const key = randomUUID();
    const booked = await book(t, first, TEST_CARDS.success, key);
    assert.equal(booked.statusCode, 201, booked.body);
    assertProblem(await book(t, second, TEST_CARDS.success, key), 422, 'idempotency_key_reused');
    const replay = await book(t, first, TEST_CARDS.success, key);
    assert.equal(replay.statusCode, 201);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.json().booking_id, booked.json().booking_id);
    assert.deepEqual(await bookedByUser(userId), { bookings: 1, payments: 1, charges: 1 });
    assert.equal(await holdStatus(second), 'HELD', 'the other hold was not paid');
  });

  test('the same key with two holds at once: one booking and one charge, the other 422 or 409', async () => {
    const userId = randomUUID();
    const otherShow = (await seedShow(t, { multiplier: 1 })).showId;
    const first = (await hold(t, showId, [nextLabel()], userId)).json();
    const second = (await hold(t, otherShow, ['A1'], userId)).json();
    const key = randomUUID();
    const answers = await Promise.all([
      book(t, first, TEST_CARDS.success, key),
      book(t, second, TEST_CARDS.success, key),
    ]);
    const codes = answers.map((answer) => answer.statusCode).sort();
    assert.equal(codes[0], 201, answers.map((answer) => answer.body).join('\n'));
    assert.ok([409, 422].includes(codes[1]), `the other: ${codes[1]}`);
    assert.deepEqual(await bookedByUser(userId), { bookings: 1, payments: 1, charges: 1 });
  });

  test('two users who send the same key each get their own booking', async () => {
    const key = randomUUID();
    const [ana, bob] = [await freshHold(1), await freshHold(1)];
    const anas = await book(t, ana, TEST_CARDS.success, key);
    const bobs = await book(t, bob, TEST_CARDS.success, key);
    assert.equal(bobs.statusCode, 201, bobs.body);
    assert.equal(bobs.headers['idempotent-replayed'], undefined);
    assert.notEqual(bobs.json().booking_id, anas.json().booking_id);
    assert.equal(bobs.json().user_id, bob.user_id);
    assert.equal((await book(t, ana, TEST_CARDS.success, key)).json().booking_id, anas.json().booking_id);
    assert.equal((await book(t, bob, TEST_CARDS.success, key)).json().booking_id, bobs.json().booking_id);
    assert.deepEqual(await bookedByUser(ana.user_id), { bookings: 1, payments: 1, charges: 1 });
    assert.deepEqual(await bookedByUser(bob.user_id), { bookings: 1, payments: 1, charges: 1 });
  });

  test('bad card details are 422 and change nothing: the hold stays, a good card then books', async () => {
    const held = await freshHold();
    const bad = await book(t, held, '4242424242424241');
    assertProblem(bad, 422, 'invalid_payment_details');
    assert.equal(await holdStatus(held), 'HELD');
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from booking_bookings
      where hold_id = ${held.hold_id}`.execute(t.adapters.database.db);
    assert.equal(rows[0].n, 0);
    assert.equal((await book(t, held, TEST_CARDS.success)).statusCode, 201);
  });
});

describe('a failed payment', () => {
  test('declined: 402, the hold stays until it ends, another card books the same seats; no FAILED booking, no e-mail', async () => {
    const held = await freshHold();
    const holdBefore = (
      await t.app.inject({ url: `/api/v1/holds/${held.hold_id}`, headers: t.asUser(held.user_id) })
    ).json();
    const response = await book(t, held, TEST_CARDS.declined);
    const body = assertProblem(response, 402, 'payment_declined');
    // The problem's own members say what the problem is; the booking's state rides beside them.
    assert.equal(body.status, 402);
    assert.equal(body.type, '/problems/payment_declined');
    assert.equal(body.payment_status, 'FAILED');
    assert.equal(body.extensions, undefined, 'no member of its own was moved aside');
    assert.equal(body.failure_code, 'card_declined');
    assert.equal(body.hold_id, held.hold_id);
    assert.equal(body.hold_status, 'HELD');
    // The hold ends when it would have without the attempt (the attempt extended it meanwhile).
    assert.equal(body.hold_expires_at, holdBefore.expires_at);
    assert.equal(await holdStatus(held), 'HELD');
    const seats = await seatStatus(t.app, showId);
    for (const label of held.seats) assert.notEqual(seats[label], 'AVAILABLE');
    const mine = await t.app.inject({
      url: `/api/v1/users/${held.user_id}/bookings`,
      headers: t.asUser(held.user_id),
    });
    assert.deepEqual(
      mine.json().bookings.map((b: { status: string }) => b.status),
      [],
      'a declined attempt is no booking of the user',
    );
    assert.equal((await payments.get(body.payment_id))?.status, 'FAILED', 'the attempt is a failed payment');

    const retried = await book(t, held, TEST_CARDS.success);
    assert.equal(retried.statusCode, 201, retried.body);
    assert.deepEqual(retried.json().seats, held.seats);
    assert.equal(retried.json().status, 'CONFIRMED');
    assert.equal(retried.json().booking_id, body.booking_id);
    assert.equal(
      (
        await t.app.inject({ url: `/api/v1/users/${held.user_id}/bookings`, headers: t.asUser(held.user_id) })
      ).json().bookings.length,
      1,
    );
    assert.ok(!t.notify.ofType('booking_cancelled').some((n) => n.data.booking_id === body.booking_id));
    assert.ok(t.notify.ofType('booking_confirmed').some((n) => n.data.booking_id === body.booking_id));
  });

  test('declined cards only: when the hold runs out the seats go back on sale, silently and unlisted (clock)', async () => {
    const held = await freshHold();
    const body = assertProblem(await book(t, held, TEST_CARDS.declined), 402, 'payment_declined');
    assertProblem(await book(t, held, TEST_CARDS.declined), 402, 'payment_declined');
    t.clock.advance(10 * 60_000);
    assert.ok(await t.app.platform.scheduler.runTick('booking.sweep', t.clock.now()));
    const seats = await seatStatus(t.app, showId);
    for (const label of held.seats) assert.equal(seats[label], 'AVAILABLE');
    assertProblem(await book(t, held, TEST_CARDS.success), 410, 'hold_expired');
    const mine = await t.app.inject({
      url: `/api/v1/users/${held.user_id}/bookings`,
      headers: t.asUser(held.user_id),
    });
    assert.equal(mine.json().bookings.length, 0);
    assert.ok(!t.notify.ofType('booking_cancelled').some((n) => n.data.booking_id === body.booking_id));
  });

  test('paying after the hold expired is 410 and charges nothing (clock)', async () => {
    const held = await freshHold();
    t.clock.advance(10 * 60_000);
    const response = await book(t, held, TEST_CARDS.success);
    assertProblem(response, 410, 'hold_expired');
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from booking_bookings
      where hold_id = ${held.hold_id}`.execute(t.adapters.database.db);
    assert.equal(rows[0].n, 0);
    assertProblem(
      await book(t, { hold_id: randomUUID(), user_id: randomUUID() }, TEST_CARDS.success),
      404,
      'hold_not_found',
    );
  });
});

describe('a payment that does not answer', () => {
  test('202 PENDING; after the payment timeout the booking fails and the seats are released; a late success is refunded', async () => {
    const held = await freshHold();
    const response = await book(t, held, TEST_CARDS.noAnswer);
    assert.equal(response.statusCode, 202, response.body);
    const pending = response.json();
    assert.equal(pending.status, 'PENDING');
    assert.equal(pending.qr_code, null);
    assert.match(pending.payment_url, /\/pay\//);
    // While the payment is in flight the seats stay held.
    t.clock.advance(60_000);
    assert.equal((await seatStatus(t.app, showId))[held.seats[0]], 'BOOKED');
    t.clock.advance(61_000);
    assert.ok(await t.app.platform.scheduler.runTick('booking.sweep', t.clock.now()));
    const failed = await booking(pending.booking_id, held.user_id);
    assert.equal(failed.status, 'FAILED');
    assert.equal(failed.failure_reason, 'payment_timeout');
    assert.equal(await holdStatus(held), 'RELEASED');
    assert.equal((await seatStatus(t.app, showId))[held.seats[0]], 'AVAILABLE');

    await payments.sandbox.settle(pending.payment_id, 'succeeded');
    assert.equal((await payments.get(pending.payment_id))?.status, 'REFUNDED');
    assert.equal((await booking(pending.booking_id, held.user_id)).status, 'FAILED');
    assert.equal((await seatStatus(t.app, showId))[held.seats[0]], 'AVAILABLE');
    assert.ok(t.notify.ofType('refund_update').some((n) => n.data.booking_id === pending.booking_id));
  });

  test('a second payment for the same hold (new key after a timeout) books it; the first, succeeding late, is refunded', async () => {
    const held = await freshHold();
    const first = (await book(t, held, TEST_CARDS.noAnswer)).json();
    assert.equal(first.status, 'PENDING');
    const second = await book(t, held, TEST_CARDS.success);
    assert.equal(second.statusCode, 201, second.body);
    assert.equal(second.json().booking_id, first.booking_id);
    assert.notEqual(second.json().payment_id, first.payment_id);
    await payments.sandbox.settle(first.payment_id, 'succeeded');
    assert.equal((await payments.get(first.payment_id))?.status, 'REFUNDED');
    assert.equal((await payments.get(second.json().payment_id))?.status, 'COMPLETED');
    const final = await booking(first.booking_id, held.user_id);
    assert.equal(final.status, 'CONFIRMED');
    assert.equal(final.payment_id, second.json().payment_id);
  });

  test('the signed webhook confirms it; a replay is ignored; a bad signature is 401 and changes nothing', async () => {
    const held = await freshHold();
    const pending = (await book(t, held, TEST_CARDS.noAnswer)).json();
    const charge = await outstandingCharge(pending.payment_id, Math.round(held.total_amount * 100));
    const event = {
      id: `evt_${randomUUID()}`,
      type: 'charge.succeeded',
      created: t.clock.now().toISOString(),
      data: { charge },
    };
    const forged = await postWebhook(t, event, { secret: 'not-the-gateway-secret-at-all' });
    assert.equal(forged.statusCode, 401, forged.body);
    assert.equal((await booking(pending.booking_id, held.user_id)).status, 'PENDING');

    const delivered = await postWebhook(t, event);
    assert.equal(delivered.statusCode, 200, delivered.body);
    const confirmed = await booking(pending.booking_id, held.user_id);
    assert.equal(confirmed.status, 'CONFIRMED');
    assert.match(confirmed.qr_code, /^data:image\/png/);

    const replay = await postWebhook(t, event);
    assert.equal(replay.statusCode, 200);
    assert.equal(replay.json().duplicate, true);
    assert.equal((await booking(pending.booking_id, held.user_id)).status, 'CONFIRMED');
    assert.equal((await payments.get(pending.payment_id))?.status, 'COMPLETED', 'not refunded by the replay');
    assert.equal(
      t.notify.ofType('booking_confirmed').filter((n) => n.data.booking_id === pending.booking_id).length,
      1,
    );
  });

  test('a decline arriving by webhook keeps the hold for another card; a retry of it on the hosted page books', async () => {
    const held = await freshHold();
    const pending = (await book(t, held, TEST_CARDS.noAnswer)).json();
    await payments.sandbox.settle(pending.payment_id, 'failed');
    assert.equal((await booking(pending.booking_id, held.user_id)).status, 'PENDING');
    assert.equal(await holdStatus(held), 'HELD');
    assert.notEqual((await seatStatus(t.app, showId))[held.seats[0]], 'AVAILABLE');
    // The hosted page's retry: the same payment, another card.
    const paid = await t.app.inject({
      method: 'POST',
      url: `/api/v1/payments/${pending.payment_id}/pay`,
      headers: { 'idempotency-key': randomUUID() },
      payload: {
        payment_method: 'CARD',
        payment_details: { card_number: TEST_CARDS.success, exp_month: 12, exp_year: 2030, cvc: '123' },
      },
    });
    assert.equal(paid.statusCode, 200, paid.body);
    assert.equal((await booking(pending.booking_id, held.user_id)).status, 'CONFIRMED');
    assert.equal((await seatStatus(t.app, showId))[held.seats[0]], 'BOOKED');
  });
});

test('unknown bookings are 404; without the payments module, booking answers 503 and holds still work', async () => {
  const headers = t.asUser(randomUUID());
  assertProblem(
    await t.app.inject({ url: `/api/v1/bookings/${randomUUID()}`, headers }),
    404,
    'booking_not_found',
  );
  assertProblem(await t.app.inject({ url: '/api/v1/bookings/nope', headers }), 400, 'validation_failed');
  const bare = await createTestApp({
    services: ['booking'],
    env: { BOOKING_DEMO: 'false' },
    stubs: { payments: undefined, notify: undefined },
  });
  try {
    const { showId: show } = await seedShow({ ...bare, notify: t.notify });
    const held = await hold(bare, show, ['A1']);
    assert.equal(held.statusCode, 201, held.body);
    const response = await book(bare, held.json(), TEST_CARDS.success);
    const body = assertProblem(response, 503, 'payments_unavailable');
    assert.ok(body.detail);
    assert.equal(response.headers['retry-after'], '30');
    const after = await bare.app.inject({
      url: `/api/v1/holds/${held.json().hold_id}`,
      headers: bare.asAdmin,
    });
    assert.equal(after.json().status, 'HELD');
  } finally {
    await bare.close();
  }
});
