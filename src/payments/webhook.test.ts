import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { card, paymentsApi, postWebhook } from '../../test/support/payments.ts';
import { createTestApp, type TestApp } from '../../test/support/platform.ts';
import { type PaymentEvent, type PaymentsApi, TEST_CARDS } from './api.ts';
import type { Charge, WebhookEvent } from './gateway.ts';
import { NOTIFY_RETRY_AFTER_MS, STALE_ATTEMPT_MS } from './service.ts';

let t: TestApp;
let api: PaymentsApi;
const events: PaymentEvent[] = [];
let failHandler = false;

before(async () => {
  t = await createTestApp({ modules: ['payments'], env: { PAYMENT_TIMEOUT_MS: '50' } });
  api = paymentsApi(t.app);
  api.onPaymentEvent('booking', async (event) => {
    if (failHandler) throw new Error('booking is down');
    events.push(event);
  });
});
after(() => t.close());

const eventsFor = (id: string) =>
  events.filter((event) => event.payment.id === id).map((event) => event.type);

/** A payment whose charge hangs at the gateway, and that charge as the gateway knows it. */
async function outstanding(): Promise<{ id: string; charge: Charge }> {
  const payment = await api.createPayment({
    purpose: 'booking',
    reference: `booking-${Math.random()}`,
    amountMinor: 3000,
    description: '2 seats',
  });
  const result = await api.pay(payment.id, card(TEST_CARDS.noAnswer));
  assert.equal(result.status, 'PENDING');
  assert.equal(result.chargeOutstanding, true);
  const { rows } = await sql<{ id: string; idempotency_key: string }>`
    select id, idempotency_key from payments_sandbox_charges where payment_id = ${payment.id}`.execute(
    t.adapters.database.db,
  );
  const charge: Charge = {
    id: rows[0].id,
    idempotencyKey: rows[0].idempotency_key,
    paymentId: payment.id,
    status: 'succeeded',
    amountMinor: 3000,
    currency: 'USD',
    last4: '0119',
    brand: 'visa',
    failureCode: null,
    failureMessage: null,
  };
  return { id: payment.id, charge };
}

function succeeded(charge: Charge, id = `evt_${Math.random().toString(36).slice(2)}`): WebhookEvent {
  return { id, type: 'charge.succeeded', created: t.clock.now().toISOString(), data: { charge } };
}

const status = async (id: string) => (await api.get(id))?.status;

describe('POST /api/v1/payments/webhook', () => {
  test('a signed success event completes the pending payment; replaying it is ignored', async () => {
    const { id, charge } = await outstanding();
    const event = succeeded(charge);
    const first = await postWebhook(t, event);
    assert.equal(first.statusCode, 200, first.body);
    assert.deepEqual(first.json(), { received: true, duplicate: false });
    assert.equal(await status(id), 'COMPLETED');
    assert.deepEqual(eventsFor(id), ['payment.completed']);

    const replay = await postWebhook(t, event);
    assert.equal(replay.statusCode, 200);
    assert.deepEqual(replay.json(), { received: true, duplicate: true });
    // A new event id for the same charge is a redelivery, not a second payment.
    const redelivered = await postWebhook(t, succeeded(charge));
    assert.deepEqual(redelivered.json(), { received: true, duplicate: false });
    assert.deepEqual(eventsFor(id), ['payment.completed'], 'the owner heard of it once');
    assert.equal(await status(id), 'COMPLETED');
  });

  test('a bad signature is a 401 and changes nothing', async () => {
    const { id, charge } = await outstanding();
    const wrongKey = await postWebhook(t, succeeded(charge), { secret: 'not-the-webhook-secret' });
    assert.equal(wrongKey.statusCode, 401, wrongKey.body);
    assert.equal(wrongKey.json().code, 'webhook_signature_invalid');
    const unsigned = await t.app.inject({
      method: 'POST',
      url: '/api/v1/payments/webhook',
      headers: { 'content-type': 'application/json' },
      payload: succeeded(charge),
    });
    assert.equal(unsigned.statusCode, 401);
    // A signature that is not the HMAC of these bytes.
    const event = succeeded(charge);
    const tampered = await t.app.inject({
      method: 'POST',
      url: '/api/v1/payments/webhook',
      headers: {
        'content-type': 'application/json',
        'webhook-id': 'evt_other',
        'webhook-timestamp': String(Math.floor(t.clock.now().getTime() / 1000)),
        'webhook-signature': 'v1,AAAA',
      },
      payload: JSON.stringify({ ...event, id: 'evt_other' }),
    });
    assert.equal(tampered.statusCode, 401);
    assert.equal(await status(id), 'PENDING');
    const signed = await postWebhook(t, event);
    assert.equal(signed.statusCode, 200, 'the control with the right key passes');
    assert.equal(await status(id), 'COMPLETED');
  });

  test('a stale or future timestamp is a 401 even when correctly signed', async () => {
    const { id, charge } = await outstanding();
    const now = t.clock.now().getTime();
    for (const at of [new Date(now - 6 * 60_000), new Date(now + 6 * 60_000)]) {
      const response = await postWebhook(t, succeeded(charge), { at });
      assert.equal(response.statusCode, 401, response.body);
      assert.equal(response.json().code, 'webhook_timestamp_stale');
    }
    assert.equal(await status(id), 'PENDING');
    const inWindow = await postWebhook(t, succeeded(charge), { at: new Date(now - 4 * 60_000) });
    assert.equal(inWindow.statusCode, 200);
    assert.equal(await status(id), 'COMPLETED');
  });

  test('a signed but malformed payload is a 400', async () => {
    const notJson = await postWebhook(t, '{"id":', { id: 'evt_broken' });
    assert.equal(notJson.statusCode, 400, notJson.body);
    assert.equal(notJson.json().code, 'webhook_malformed');
    const wrongType = await postWebhook(t, { id: 'evt_x', type: 'charge.disputed', data: {} });
    assert.equal(wrongType.statusCode, 400);
  });

  test('a success for a payment that was not waiting for that charge is refunded at the gateway', async () => {
    const { id, charge } = await outstanding();
    await api.sandbox.settle(id, 'succeeded');
    assert.equal(await status(id), 'COMPLETED');
    // The gateway reports a second, different successful charge for the same payment.
    const second = await api.createPayment({
      purpose: 'booking',
      reference: 'x',
      amountMinor: 3000,
      description: 'x',
    });
    await api.pay(second.id, card(TEST_CARDS.success));
    const { rows } = await sql<{ id: string; idempotency_key: string }>`
      select id, idempotency_key from payments_sandbox_charges where payment_id = ${second.id}`.execute(
      t.adapters.database.db,
    );
    const stray: Charge = {
      ...charge,
      id: rows[0].id,
      idempotencyKey: rows[0].idempotency_key,
      paymentId: id,
    };
    assert.equal((await postWebhook(t, succeeded(stray))).statusCode, 200);
    const refunded = await sql<{ refunded: string }>`select refunded_minor::text as refunded
      from payments_sandbox_charges where id = ${stray.id}`.execute(t.adapters.database.db);
    assert.equal(refunded.rows[0].refunded, '3000');
    assert.equal(await status(id), 'COMPLETED');
  });
});

describe('reconciliation (payments.reconcile job)', () => {
  // Each run is its own tick (the scheduler runs a tick once); a second apart is enough.
  const tick = async () => {
    t.clock.advance(1000);
    const at = new Date(Math.floor(t.clock.now().getTime() / 1000) * 1000);
    assert.equal(await t.app.platform.scheduler.runTick('payments.reconcile', at), true);
  };

  test('a charge whose webhook never came is settled by asking the gateway', async () => {
    const { id, charge } = await outstanding();
    // The gateway settles but its webhook is lost.
    await sql`update payments_sandbox_charges set status = 'succeeded' where id = ${charge.id}`.execute(
      t.adapters.database.db,
    );
    await tick();
    assert.equal(await status(id), 'PENDING', 'too early: the caller may still be waiting');
    t.clock.advance(STALE_ATTEMPT_MS);
    await tick();
    assert.equal(await status(id), 'COMPLETED');
    assert.deepEqual(eventsFor(id), ['payment.completed']);
  });

  test('a charge that never settles expires at the gateway after a day and fails the payment', async () => {
    const { id } = await outstanding();
    t.clock.advance(STALE_ATTEMPT_MS);
    await tick();
    assert.equal(await status(id), 'PENDING', 'still pending at the gateway');
    t.clock.advance(24 * 3600_000);
    await tick();
    assert.equal(await status(id), 'FAILED');
    assert.equal((await api.get(id))?.failureCode, 'charge_expired');
    assert.deepEqual(eventsFor(id), ['payment.failed']);
  });

  test("an owner's failed handler runs again until it succeeds, then never again", async () => {
    const payment = await api.createPayment({
      purpose: 'booking',
      reference: 'b1',
      amountMinor: 500,
      description: 'x',
    });
    failHandler = true;
    assert.equal((await api.pay(payment.id, card(TEST_CARDS.success))).status, 'COMPLETED');
    failHandler = false;
    assert.deepEqual(eventsFor(payment.id), []);
    await tick();
    assert.deepEqual(eventsFor(payment.id), [], 'retried only after a grace period');
    t.clock.advance(NOTIFY_RETRY_AFTER_MS);
    await tick();
    assert.deepEqual(eventsFor(payment.id), ['payment.completed']);
    t.clock.advance(NOTIFY_RETRY_AFTER_MS);
    await tick();
    assert.deepEqual(eventsFor(payment.id), ['payment.completed']);
  });
});
