import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { enter, exit, lotEnv, lotJson } from '../../../test/support/parking.ts';
import { card, paymentsApi, postWebhook } from '../../../test/support/payments.ts';
import { createTestApp, type TestApp } from '../../../test/support/platform.ts';
import { sseEvents } from '../../../test/support/sse-reader.ts';
import { type PaymentsApi, TEST_CARDS } from '../../payments/api.ts';
import type { Charge } from '../../payments/gateway.ts';
import type { BoardsView } from '../boards/views.ts';

// Paying after the exit answer: on the hosted payment page, or by the gateway's webhook after a
// card that did not answer in time. The panel hears of it over the ticket's SSE stream, the
// display boards over theirs.
let t: TestApp;
let payments: PaymentsApi;
let base: string;
let plates = 0;

before(async () => {
  const lot = lotJson({ floors: [{ floor: 1, spots: { COMPACT: 20 } }] });
  t = await createTestApp({ services: ['parking'], env: { ...lotEnv(lot), PAYMENT_TIMEOUT_MS: '100' } });
  payments = paymentsApi(t.app);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
});
after(() => t.close());

async function parked() {
  const response = await enter(t, `LT${++plates}`);
  return response.json().ticketId as string;
}
const ticket = async (id: string) => (await t.app.inject({ url: `/api/v1/parking/tickets/${id}` })).json();
const freeCompact = (boards: BoardsView) => boards.total.availableSpots.COMPACT;

describe('paid later', () => {
  test('on the hosted page: ticket PAID, spot freed, the panel hears gate_open and the boards update', async () => {
    const id = await parked();
    const due = (await exit(t, id, { panelId: 'out-1' })).json();
    const ticketStream = sseEvents(await fetch(`${base}/api/v1/parking/tickets/${id}/events`));
    assert.equal((await ticketStream.until<{ status: string }>('ticket')).status, 'ACTIVE');
    const boardStream = sseEvents(await fetch(`${base}/api/v1/parking/boards/stream`));
    const before = freeCompact(await boardStream.until<BoardsView>('boards'));

    // What the payment page's script does with the card the driver typed in.
    const page = await t.app.inject({ url: new URL(due.paymentUrl).pathname });
    assert.equal(page.statusCode, 200);
    const paid = await t.app.inject({
      method: 'POST',
      url: `/api/v1/payments/${due.paymentId}/pay`,
      payload: { payment_details: card(TEST_CARDS.success) },
    });
    assert.equal(paid.statusCode, 200, paid.body);

    const gate = await ticketStream.until<{ ticketId: string; panelId: string; paymentId: string }>(
      'gate_open',
    );
    assert.deepEqual([gate.ticketId, gate.panelId, gate.paymentId], [id, 'out-1', due.paymentId]);
    await boardStream.until<BoardsView>('boards', (boards) => freeCompact(boards) === before + 1);
    assert.equal((await ticket(id)).status, 'PAID');
    const again = (await exit(t, id)).json();
    assert.deepEqual([again.paymentId, again.status], [due.paymentId, 'COMPLETED']);
    await ticketStream.cancel();
    await boardStream.cancel();
  });

  test('a card that does not answer: 202 PENDING, the spot stays taken; the webhook then completes it', async () => {
    const id = await parked();
    const pending = await exit(t, id, { card: TEST_CARDS.noAnswer });
    assert.equal(pending.statusCode, 202, pending.body);
    assert.equal(pending.json().status, 'PENDING');
    assert.equal((await ticket(id)).status, 'ACTIVE');
    const stream = sseEvents(await fetch(`${base}/api/v1/parking/tickets/${id}/events`));
    await stream.until('ticket');

    // A second exit meanwhile does not start a second charge.
    const meanwhile = await exit(t, id, { card: TEST_CARDS.success });
    assert.equal(meanwhile.json().paymentId, pending.json().paymentId);
    assert.equal(meanwhile.json().status, 'PENDING');

    // The gateway's signed webhook, as it would arrive over HTTP.
    const { rows } = await sql<{ id: string; idempotency_key: string }>`
      select id, idempotency_key from payments_sandbox_charges where payment_id = ${pending.json().paymentId}`.execute(
      t.adapters.database.db,
    );
    const charge: Charge = {
      id: rows[0].id,
      idempotencyKey: rows[0].idempotency_key,
      paymentId: pending.json().paymentId,
      status: 'succeeded',
      amountMinor: 200,
      currency: 'USD',
      last4: '0119',
      brand: 'visa',
      failureCode: null,
      failureMessage: null,
    };
    const webhook = await postWebhook(t, {
      id: `evt_${id}`,
      type: 'charge.succeeded',
      created: t.clock.now().toISOString(),
      data: { charge },
    });
    assert.equal(webhook.statusCode, 200, webhook.body);
    await stream.until('gate_open');
    assert.equal((await ticket(id)).status, 'PAID');
    await stream.cancel();
  });

  test('a late failure: the ticket stays ACTIVE, the panel hears payment_failed, and the next exit can pay', async () => {
    const id = await parked();
    const pending = (await exit(t, id, { card: TEST_CARDS.noAnswer })).json();
    const stream = sseEvents(await fetch(`${base}/api/v1/parking/tickets/${id}/events`));
    await stream.until('ticket');
    await payments.sandbox.settle(pending.paymentId, 'failed');
    const failed = await stream.until<{ paymentId: string }>('payment_failed');
    assert.equal(failed.paymentId, pending.paymentId);
    assert.equal((await ticket(id)).status, 'ACTIVE');
    const paid = await exit(t, id, { card: TEST_CARDS.success });
    assert.equal(paid.json().ticketStatus, 'PAID');
    await stream.cancel();
  });
});

describe('POST /api/v1/parking/tickets/lost', () => {
  const lost = (licensePlate: string, options: { card?: string; key?: string } = {}) =>
    t.app.inject({
      method: 'POST',
      url: '/api/v1/parking/tickets/lost',
      // The development operator key has every scope, parking:attendant among them.
      headers: options.card
        ? { ...t.asOperator, 'idempotency-key': options.key ?? `lost-${Math.random()}` }
        : t.asOperator,
      payload: options.card ? { licensePlate, payment: card(options.card) } : { licensePlate },
    });

  test('finds the vehicle by plate, marks the ticket LOST and asks the configured fee; paying lets it out', async () => {
    const id = await parked();
    const plate = `LT${plates}`;
    t.clock.advance(5 * 3600_000);
    const first = await lost(plate.toLowerCase());
    assert.equal(first.statusCode, 200, first.body);
    const due = first.json();
    assert.deepEqual(
      [due.ticketId, due.ticketStatus, due.kind, due.amount, due.status, due.duration],
      [id, 'LOST', 'LOST', 50, 'PENDING', '5h 0m'],
    );
    assert.equal((await ticket(id)).status, 'LOST');
    assert.equal((await lost(plate)).json().paymentId, due.paymentId, 'asking again: the same payment');
    assert.equal(
      (await exit(t, id)).json().paymentId,
      due.paymentId,
      'the ticket found again: the same payment',
    );
    const paid = await lost(plate, { card: TEST_CARDS.success });
    assert.deepEqual([paid.json().status, paid.json().ticketStatus], ['COMPLETED', 'PAID']);
    assert.ok((await ticket(id)).lostAt);
    assert.equal((await lost(plate)).json().code, 'vehicle_not_found', 'it has left');
  });

  test("an attendant's key sent again for another plate is 422: that ticket stays as it was", async () => {
    const first = await parked();
    const firstPlate = `LT${plates}`;
    const other = await parked();
    const key = `lost-${first}`;
    const paid = await lost(firstPlate, { card: TEST_CARDS.success, key });
    assert.equal(paid.json().ticketStatus, 'PAID', paid.body);
    const reused = await lost(`LT${plates}`, { card: TEST_CARDS.success, key });
    assert.equal(reused.statusCode, 422, reused.body);
    assert.equal(reused.json().code, 'idempotency_key_reused');
    assert.equal((await ticket(other)).status, 'ACTIVE', 'not marked LOST');
    assert.equal((await payments.listByReference('parking', other)).length, 0, 'nothing charged');
    const replay = await lost(firstPlate, { card: TEST_CARDS.success, key });
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.body, paid.body);
  });

  test('an exit payment waiting for the page is withdrawn in favour of the lost-ticket fee', async () => {
    const id = await parked();
    const exitDue = (await exit(t, id)).json();
    const lostDue = (await lost(`LT${plates}`)).json();
    assert.notEqual(lostDue.paymentId, exitDue.paymentId);
    assert.equal((await payments.get(exitDue.paymentId))?.status, 'FAILED');
    const late = await t.app.inject({
      method: 'POST',
      url: `/api/v1/payments/${exitDue.paymentId}/pay`,
      payload: { payment_details: card(TEST_CARDS.success) },
    });
    assert.equal(late.statusCode, 409, 'the withdrawn page can no longer be paid');
  });

  test('refused while an exit payment is being charged; unknown plate 404; bad plate 400', async () => {
    const id = await parked();
    assert.equal((await exit(t, id, { card: TEST_CARDS.noAnswer })).statusCode, 202);
    const refused = await lost(`LT${plates}`);
    assert.equal(refused.statusCode, 409);
    assert.equal(refused.json().code, 'payment_pending');
    assert.equal((await lost('NOSUCH1')).json().code, 'vehicle_not_found');
    assert.equal((await lost('#?')).statusCode, 400);
  });
});
