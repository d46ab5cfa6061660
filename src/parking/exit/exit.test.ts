import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { card, enter, exit, lotEnv, lotJson } from '../../../test/support/parking.ts';
import { paymentsApi } from '../../../test/support/payments.ts';
import { createTestApp, type TestApp } from '../../../test/support/platform.ts';
import { type PaymentsApi, TEST_CARDS } from '../../payments/api.ts';
import { DEV_OPERATOR_KEYS } from '../../platform/auth/keys.ts';
import { TICKETS_CHANNEL, type TicketEvent } from '../boards/events.ts';

let t: TestApp;
let payments: PaymentsApi;
const ticketEvents: TicketEvent[] = [];
let plates = 0;
/** A second panel with a key of its own, next to the development operator (`t.asOperator`). */
const SECOND_PANEL = 'exit-south parking:panel second-panel-key';
const asSecondPanel = { 'x-operator-key': 'second-panel-key' };

before(async () => {
  const lot = lotJson({ floors: [{ floor: 1, spots: { COMPACT: 60 } }] });
  t = await createTestApp({
    services: ['parking'],
    env: {
      ...lotEnv(lot),
      PAYMENT_TIMEOUT_MS: '100',
      OPERATOR_KEYS: `${DEV_OPERATOR_KEYS}; ${SECOND_PANEL}`,
    },
  });
  payments = paymentsApi(t.app);
  await t.adapters.pubsub.subscribe(TICKETS_CHANNEL, (message) => ticketEvents.push(message as TicketEvent));
});
after(() => t.close());

/** A car parked at a known time; returns its ticket id. */
async function parked(at = '2026-01-05T12:00:00Z', vehicleType = 'CAR') {
  t.clock.set(at);
  const response = await enter(t, `EX${++plates}`, vehicleType);
  assert.equal(response.statusCode, 201, response.body);
  return response.json().ticketId as string;
}
const ticket = async (id: string) => (await t.app.inject({ url: `/api/v1/parking/tickets/${id}` })).json();
const freeCompact = async () =>
  (await t.app.inject({ url: '/api/v1/parking/availability' })).json().floors[0].compact;
/** Charges the sandbox gateway accepted for a payment: what would be on the driver's statement. */
const charges = async (paymentId: string) =>
  (
    await sql<{ n: number }>`select count(*)::int as n from payments_sandbox_charges
      where payment_id = ${paymentId} and status = 'succeeded'`.execute(t.adapters.database.db)
  ).rows[0].n;
const waitFor = async (check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.ok(check(), 'event arrived');
};

describe('POST /api/v1/parking/exit', () => {
  test('without a card: the amount, "Xh Ym", a PENDING payment and its page; the vehicle stays', async () => {
    const id = await parked();
    t.clock.advance(61 * 60_000);
    const response = await exit(t, id, { panelId: 'out-1' });
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json();
    assert.equal(body.amount, 2);
    assert.equal(body.currency, 'USD');
    assert.equal(body.duration, '1h 1m');
    assert.equal(body.status, 'PENDING');
    assert.equal(body.ticketStatus, 'ACTIVE');
    assert.equal(body.paymentUrl, `http://localhost:3000/pay/${body.paymentId}`);
    assert.equal((await payments.get(body.paymentId))?.amountMinor, 200);
    const after = await ticket(id);
    assert.equal(after.status, 'ACTIVE');
    assert.equal(after.exitTime, '2026-01-05T13:01:00.000Z');
    assert.equal(after.payment.paymentId, body.paymentId);
    const free = await freeCompact();
    await exit(t, id);
    assert.equal(await freeCompact(), free, 'the spot is still occupied');
  });

  test('exit twice, even at once: the same payment; within the grace period the amount holds', async () => {
    const id = await parked();
    t.clock.advance(59 * 60_000);
    const [one, two] = await Promise.all([exit(t, id), exit(t, id)]);
    assert.equal(one.json().paymentId, two.json().paymentId);
    t.clock.advance(10 * 60_000); // now 1 h 9 min, still within 15 min of the first exit
    const three = await exit(t, id);
    assert.equal(three.json().paymentId, one.json().paymentId);
    assert.equal(three.json().duration, '0h 59m');
    assert.equal((await payments.listByReference('parking', id)).length, 1);
  });

  test('exits of several tickets at once (recorded in batches): each its own payment; one ticket twice shares one', async () => {
    const ids = [await parked(), await parked(), await parked(), await parked()];
    t.clock.advance(121 * 60_000);
    const responses = await Promise.all([...ids, ids[0]].map((id) => exit(t, id, { panelId: 'out-1' })));
    for (const response of responses) assert.equal(response.statusCode, 200, response.body);
    const bodies = responses.map((response) => response.json());
    assert.equal(bodies[4].paymentId, bodies[0].paymentId, 'the same ticket twice: one payment');
    assert.equal(new Set(bodies.slice(0, 4).map((body) => body.paymentId)).size, 4);
    for (const [i, id] of ids.entries()) {
      assert.equal(bodies[i].amount, bodies[0].amount, 'the same stay, the same fee');
      const after = await ticket(id);
      assert.equal(after.payment.paymentId, bodies[i].paymentId);
      assert.equal(after.exitTime, '2026-01-05T14:01:00.000Z');
      assert.equal((await payments.listByReference('parking', id)).length, 1);
    }
  });

  test('an unpaid amount older than the grace period is recomputed; the old payment is withdrawn', async () => {
    const id = await parked();
    const first = (await exit(t, id)).json();
    assert.equal(first.amount, 2);
    t.clock.advance(3 * 3600_000);
    const second = (await exit(t, id)).json();
    assert.notEqual(second.paymentId, first.paymentId);
    assert.equal(second.amount, 6);
    assert.equal((await payments.get(first.paymentId))?.status, 'FAILED');
    assert.deepEqual((await ticket(id)).payments, [first.paymentId, second.paymentId]);
  });

  test('paying by card: COMPLETED, ticket PAID, spot freed, gate opens; a second exit charges nothing', async () => {
    const id = await parked();
    const free = await freeCompact();
    t.clock.advance(2 * 3600_000 + 5 * 60_000);
    const response = await exit(t, id, { card: TEST_CARDS.success, panelId: 'out-1' });
    assert.equal(response.statusCode, 200, response.body);
    const paid = response.json();
    assert.deepEqual(
      [paid.status, paid.ticketStatus, paid.amount, paid.duration],
      ['COMPLETED', 'PAID', 4, '2h 5m'],
    );
    assert.equal(await freeCompact(), free + 1, 'the spot is free again');
    const after = await ticket(id);
    assert.equal(after.status, 'PAID');
    assert.equal(after.paidAt, t.clock.now().toISOString());
    await waitFor(() => ticketEvents.some((event) => event.type === 'gate_open' && event.ticketId === id));
    const gate = ticketEvents.find((event) => event.ticketId === id && event.type === 'gate_open');
    assert.equal(gate?.type === 'gate_open' && gate.panelId, 'out-1');

    const again = await exit(t, id, { card: TEST_CARDS.success });
    assert.equal(again.statusCode, 200);
    assert.equal(again.json().paymentId, paid.paymentId);
    assert.equal(again.json().status, 'COMPLETED');
    assert.equal(await charges(paid.paymentId), 1, 'charged once');
    assert.equal((await payments.listByReference('parking', id)).length, 1);
  });

  test('two card payments at once (two taps, two keys): one charge', async () => {
    const id = await parked();
    const [one, two] = await Promise.all([
      exit(t, id, { card: TEST_CARDS.success }),
      exit(t, id, { card: TEST_CARDS.success }),
    ]);
    assert.equal(one.json().paymentId, two.json().paymentId);
    assert.ok([one.statusCode, two.statusCode].includes(200));
    assert.equal(await charges(one.json().paymentId), 1);
    assert.equal((await ticket(id)).status, 'PAID');
  });

  test('a declined card: 402, ticket ACTIVE, spot occupied; another card then pays the same payment', async () => {
    const id = await parked();
    const free = await freeCompact();
    const declined = await exit(t, id, { card: TEST_CARDS.declined });
    assert.equal(declined.statusCode, 402, declined.body);
    const problem = declined.json();
    assert.equal(problem.status, 402);
    assert.equal(problem.code, 'payment_declined');
    assert.equal(problem.paymentStatus, 'FAILED');
    assert.equal(problem.failureReason, 'card_declined');
    assert.equal(problem.ticketStatus, 'ACTIVE');
    assert.equal((await ticket(id)).status, 'ACTIVE');
    assert.equal(await freeCompact(), free, 'the spot stays occupied');
    await waitFor(() =>
      ticketEvents.some((event) => event.type === 'payment_failed' && event.ticketId === id),
    );

    const retried = await exit(t, id, { card: TEST_CARDS.success });
    assert.equal(retried.statusCode, 200);
    assert.equal(retried.json().paymentId, problem.paymentId, 'the declined payment, paid again');
    assert.equal(retried.json().ticketStatus, 'PAID');
    assert.deepEqual(
      (await payments.listByReference('parking', id)).map((payment) => payment.status),
      ['COMPLETED'],
    );
  });

  test('paying needs an Idempotency-Key; the same key replays, with another body it is refused', async () => {
    const id = await parked();
    const noKey = await t.app.inject({
      method: 'POST',
      url: '/api/v1/parking/exit',
      headers: t.asOperator,
      payload: { ticketId: id, payment: card(TEST_CARDS.success) },
    });
    assert.equal(noKey.statusCode, 400);
    assert.match(noKey.json().detail, /Idempotency-Key/);
    assert.equal((await payments.listByReference('parking', id)).length, 0, 'nothing happened');

    const first = await exit(t, id, { card: TEST_CARDS.success, key: `k-${id}` });
    const replay = await exit(t, id, { card: TEST_CARDS.success, key: `k-${id}` });
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.body, first.body);
    const other = await exit(t, id, { card: TEST_CARDS.declined, key: `k-${id}` });
    assert.equal(other.statusCode, 422);
    assert.equal(other.json().code, 'idempotency_key_reused');
  });

  test("a panel's key sent again for another ticket is 422: that car is not charged; the first still replays", async () => {
    const id = await parked();
    const next = await parked();
    const key = `k-${id}-reused`;
    const first = await exit(t, id, { card: TEST_CARDS.success, key });
    assert.equal(first.json().status, 'COMPLETED', first.body);
    const reused = await exit(t, next, { card: TEST_CARDS.success, key });
    assert.equal(reused.statusCode, 422, reused.body);
    assert.match(String(reused.headers['content-type']), /^application\/problem\+json/);
    assert.equal(reused.json().code, 'idempotency_key_reused');
    assert.equal((await payments.listByReference('parking', next)).length, 0, 'nothing asked of payments');
    assert.equal((await ticket(next)).status, 'ACTIVE');
    const replay = await exit(t, id, { card: TEST_CARDS.success, key });
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.body, first.body);
    const [payment] = await payments.listByReference('parking', id);
    assert.equal(await charges(payment.id), 1, 'charged once');
  });

  test('two panels that send the same key each get their own answer', async () => {
    const [mine, theirs] = [await parked(), await parked()];
    const key = `shared-${mine}`;
    const first = await exit(t, mine, { card: TEST_CARDS.success, key });
    assert.equal(first.json().status, 'COMPLETED', first.body);
    const second = await t.app.inject({
      method: 'POST',
      url: '/api/v1/parking/exit',
      headers: { ...asSecondPanel, 'idempotency-key': key },
      payload: { ticketId: theirs, payment: card(TEST_CARDS.success) },
    });
    assert.equal(second.statusCode, 200, second.body);
    assert.equal(second.headers['idempotent-replayed'], undefined);
    assert.equal(second.json().ticketId, theirs);
    assert.notEqual(second.json().paymentId, first.json().paymentId);
    assert.equal((await ticket(theirs)).status, 'PAID');
    // The first panel's key still names its own request.
    assert.equal((await exit(t, mine, { card: TEST_CARDS.success, key })).body, first.body);
  });

  test('bad card details are refused before anything is charged', async () => {
    const id = await parked();
    const luhn = await exit(t, id, { card: '4242424242424241' });
    assert.equal(luhn.statusCode, 422, luhn.body);
    assert.equal(luhn.json().code, 'invalid_payment_details');
    const short = await t.app.inject({
      method: 'POST',
      url: '/api/v1/parking/exit',
      headers: { ...t.asOperator, 'idempotency-key': 'short-cvc' },
      payload: { ticketId: id, payment: { ...card(TEST_CARDS.success), cvc: '1' } },
    });
    assert.equal(short.statusCode, 400);
    assert.equal((await ticket(id)).status, 'ACTIVE');
  });

  test('errors: unknown ticket or code 404, overlong reference 400, unknown exit panel 422', async () => {
    const unknown = await exit(t, '0190f0f0-0000-7000-8000-000000000000');
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().code, 'ticket_not_found');
    assert.equal((await exit(t, 'nope')).statusCode, 404);
    assert.equal((await exit(t, 'x'.repeat(65))).statusCode, 400);
    const id = await parked();
    const panel = await exit(t, id, { panelId: 'in-1' });
    assert.equal(panel.statusCode, 422);
    assert.equal(panel.json().code, 'unknown_panel');
    assert.equal((await payments.listByReference('parking', id)).length, 0);
  });
});

describe('refunds (admin)', () => {
  test('a paid ticket is refunded once; the ticket stays PAID; unpaid tickets and strangers are refused', async () => {
    const id = await parked();
    const refund = (headers: Record<string, string> = { 'x-admin-key': t.config.adminApiKey }) =>
      t.app.inject({
        method: 'POST',
        url: `/api/v1/parking/tickets/${id}/refund`,
        headers,
        payload: { reason: 'barrier fault' },
      });
    assert.equal((await refund()).json().code, 'payment_not_refundable');
    const paid = (await exit(t, id, { card: TEST_CARDS.success })).json();
    assert.equal((await refund({})).statusCode, 401);
    assert.equal((await refund({ 'x-admin-key': 'wrong-key-123' })).statusCode, 401);
    const done = await refund();
    assert.equal(done.statusCode, 200, done.body);
    assert.equal(done.json().status, 'REFUNDED');
    assert.equal(done.json().ticketStatus, 'PAID');
    assert.equal((await refund()).json().status, 'REFUNDED', 'again: nothing more');
    const after = await payments.get(paid.paymentId);
    assert.equal(after?.status, 'REFUNDED');
    assert.equal(after?.refundedMinor, paid.amount * 100);
    assert.equal((await ticket(id)).payment.status, 'REFUNDED');
  });
});
