import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { card, paymentsApi } from '../../test/support/payments.ts';
import { createTestApp, type TestApp } from '../../test/support/platform.ts';
import { type PaymentEvent, type PaymentsApi, TEST_CARDS } from './api.ts';

let t: TestApp;
let api: PaymentsApi;
const events: PaymentEvent[] = [];
const ADMIN = { 'x-admin-key': 'dev-admin-key' };

before(async () => {
  t = await createTestApp({ modules: ['payments'], env: { PAYMENT_TIMEOUT_MS: '100' } });
  api = paymentsApi(t.app);
  api.onPaymentEvent('parking', async (event) => {
    events.push(event);
  });
});
after(() => t.close());

function newPayment(overrides: Partial<Parameters<PaymentsApi['createPayment']>[0]> = {}) {
  return api.createPayment({
    purpose: 'parking',
    reference: `ticket-${Math.random()}`,
    amountMinor: 1250,
    currency: 'USD',
    description: 'Parking, 2h 5m',
    ...overrides,
  });
}

function payOverHttp(paymentId: string, number: string, extra: Record<string, unknown> = {}) {
  return t.app.inject({
    method: 'POST',
    url: `/api/v1/payments/${paymentId}/pay`,
    payload: { payment_method: 'CARD', payment_details: card(number, extra) },
  });
}

const get = async (id: string) =>
  (await t.app.inject({ method: 'GET', url: `/api/v1/payments/${id}` })).json();
const eventsFor = (id: string) =>
  events.filter((event) => event.payment.id === id).map((event) => event.type);

function assertProblem(
  response: Awaited<ReturnType<TestApp['app']['inject']>>,
  status: number,
  code: string,
) {
  assert.equal(response.statusCode, status, response.body);
  assert.equal(response.json().code, code, response.body);
  return response.json();
}

describe('paying with a card', () => {
  test('the success card completes the payment, once', async () => {
    const payment = await newPayment();
    assert.equal(payment.status, 'PENDING');
    assert.equal(payment.paymentUrl, `http://localhost:3000/pay/${payment.id}`);
    const response = await payOverHttp(payment.id, '4242 4242 4242 4242');
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json();
    assert.equal(body.status, 'COMPLETED');
    assert.equal(body.amount, 12.5);
    assert.deepEqual(body.card, { last4: '4242', brand: 'visa' });
    assert.match(body.completed_at, /Z$/);
    assert.equal((await get(payment.id)).status, 'COMPLETED');
    assert.deepEqual(eventsFor(payment.id), ['payment.completed']);

    assertProblem(await payOverHttp(payment.id, TEST_CARDS.success), 409, 'payment_already_completed');
    const charges = await sql<{ n: number }>`select count(*)::int as n from payments_sandbox_charges
      where payment_id = ${payment.id}`.execute(t.adapters.database.db);
    assert.equal(charges.rows[0].n, 1, 'one charge at the gateway');
  });

  test('the declined card is a 402, the payment FAILED and final unless retries are allowed', async () => {
    const payment = await newPayment();
    const body = assertProblem(await payOverHttp(payment.id, TEST_CARDS.declined), 402, 'payment_declined');
    assert.equal(body.decline_code, 'card_declined');
    assert.equal(body.payment_id, payment.id);
    const after = await get(payment.id);
    assert.equal(after.status, 'FAILED');
    assert.equal(after.failure_code, 'card_declined');
    assert.deepEqual(eventsFor(payment.id), ['payment.failed']);
    assertProblem(await payOverHttp(payment.id, TEST_CARDS.success), 409, 'payment_not_payable');

    const retryable = await newPayment({ allowRetry: true });
    assertProblem(await payOverHttp(retryable.id, TEST_CARDS.insufficientFunds), 402, 'payment_declined');
    const second = await payOverHttp(retryable.id, TEST_CARDS.success);
    assert.equal(second.statusCode, 200, second.body);
    assert.equal(second.json().status, 'COMPLETED');
    assert.deepEqual(eventsFor(retryable.id), ['payment.failed', 'payment.completed']);
  });

  test('a payment takes at most 10 card attempts (no card-testing oracle)', async () => {
    const payment = await newPayment({ allowRetry: true });
    for (let i = 0; i < 10; i++)
      assert.equal((await api.pay(payment.id, card(TEST_CARDS.declined))).status, 'FAILED');
    assertProblem(await payOverHttp(payment.id, TEST_CARDS.success), 409, 'payment_attempts_exhausted');
    assert.equal((await get(payment.id)).status, 'FAILED');
  });

  test('invalid card details are a 422 listing each field, and change nothing', async () => {
    const payment = await newPayment();
    const response = await payOverHttp(payment.id, '4242 4242 4242 4241', { exp_month: 13, cvc: '12' });
    const body = assertProblem(response, 422, 'invalid_payment_details');
    assert.deepEqual(body.errors.map((e: { field: string }) => e.field).sort(), [
      'payment_details.card_number',
      'payment_details.cvc',
      'payment_details.exp_month',
    ]);
    assert.doesNotMatch(response.body, /4241/);
    const expired = await payOverHttp(payment.id, TEST_CARDS.success, { exp_month: 12, exp_year: 2025 });
    assert.match(assertProblem(expired, 422, 'invalid_payment_details').detail, /expired/);
    const after = await get(payment.id);
    assert.equal(after.status, 'PENDING');
    assert.equal(after.card, null);
    // A malformed body is a 400, not a 422.
    const malformed = await t.app.inject({
      method: 'POST',
      url: `/api/v1/payments/${payment.id}/pay`,
      payload: { payment_details: { card_number: 4242 } },
    });
    assertProblem(malformed, 400, 'validation_failed');
  });

  test('an unknown payment is a 404, also for ids that are not UUIDs', async () => {
    assertProblem(
      await payOverHttp('0190a4b2-7c1e-7000-8000-000000000000', TEST_CARDS.success),
      404,
      'payment_not_found',
    );
    assertProblem(
      await t.app.inject({ method: 'GET', url: '/api/v1/payments/nope' }),
      404,
      'payment_not_found',
    );
    assert.equal(await api.get('nope'), undefined);
  });

  test('the no-answer card times out to 202 PENDING; a late success webhook completes it', async () => {
    const payment = await newPayment();
    const response = await payOverHttp(payment.id, TEST_CARDS.noAnswer);
    assert.equal(response.statusCode, 202, response.body);
    assert.equal(response.json().status, 'PENDING');
    assert.equal(response.json().charge_outstanding, true);
    // While the gateway may still charge the card, nobody can start a second charge.
    assertProblem(await payOverHttp(payment.id, TEST_CARDS.success), 409, 'payment_in_progress');
    await assert.rejects(api.cancel(payment.id), { code: 'payment_in_progress' });
    assert.deepEqual(eventsFor(payment.id), []);

    await api.sandbox.settle(payment.id, 'succeeded');
    const after = await get(payment.id);
    assert.equal(after.status, 'COMPLETED');
    assert.equal(after.charge_outstanding, false);
    assert.deepEqual(eventsFor(payment.id), ['payment.completed']);
    await assert.rejects(api.sandbox.settle(payment.id, 'succeeded'), { code: 'no_outstanding_charge' });
  });

  test('a late failure webhook fails a timed-out payment', async () => {
    const payment = await newPayment();
    assert.equal((await api.pay(payment.id, card(TEST_CARDS.noAnswer), { timeoutMs: 20 })).status, 'PENDING');
    const settle = await t.app.inject({
      method: 'POST',
      url: `/api/v1/payments/${payment.id}/sandbox/settle`,
      headers: ADMIN,
      payload: { outcome: 'failed' },
    });
    assert.equal(settle.statusCode, 200, settle.body);
    assert.equal(settle.json().status, 'FAILED');
    assert.deepEqual(eventsFor(payment.id), ['payment.failed']);
  });

  test('two payers racing on one payment make exactly one charge', async () => {
    const payment = await newPayment();
    const [a, b] = await Promise.all([
      payOverHttp(payment.id, TEST_CARDS.success),
      payOverHttp(payment.id, TEST_CARDS.success),
    ]);
    const statuses = [a.statusCode, b.statusCode].sort();
    assert.equal(statuses[0], 200, `${a.body} ${b.body}`);
    assert.equal(statuses[1], 409);
    const charges = await sql<{ n: number }>`select count(*)::int as n from payments_sandbox_charges
      where payment_id = ${payment.id}`.execute(t.adapters.database.db);
    assert.equal(charges.rows[0].n, 1);
  });

  test('an Idempotency-Key replays the first answer without a second attempt', async () => {
    const payment = await newPayment();
    const request = {
      method: 'POST' as const,
      url: `/api/v1/payments/${payment.id}/pay`,
      headers: { 'idempotency-key': `pay-${payment.id}` },
      payload: { payment_details: card(TEST_CARDS.success) },
    };
    const first = await t.app.inject(request);
    const second = await t.app.inject(request);
    assert.equal(first.statusCode, 200);
    assert.equal(second.statusCode, 200);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.equal(second.body, first.body);
  });
});

describe('creating and canceling', () => {
  test('createPayment validates, and is idempotent per key', async () => {
    await assert.rejects(newPayment({ amountMinor: 0 }), { code: 'invalid_payment', status: 422 });
    await assert.rejects(newPayment({ amountMinor: 12.5 }), { code: 'invalid_payment' });
    await assert.rejects(newPayment({ currency: 'usd' }), { code: 'invalid_payment' });
    await assert.rejects(newPayment({ returnUrl: 'javascript:alert(1)' }), { code: 'invalid_payment' });
    const first = await newPayment({ reference: 'ticket-1', idempotencyKey: 'exit:ticket-1' });
    const again = await newPayment({ reference: 'ticket-1', idempotencyKey: 'exit:ticket-1' });
    assert.equal(again.id, first.id);
    await assert.rejects(
      newPayment({ reference: 'ticket-1', idempotencyKey: 'exit:ticket-1', amountMinor: 999 }),
      {
        code: 'idempotency_key_reused',
      },
    );
    const listed = await api.listByReference('parking', 'ticket-1');
    assert.deepEqual(
      listed.map((p) => p.id),
      [first.id],
    );
  });

  test('cancel fails a PENDING payment, idempotently; a paid one cannot be canceled', async () => {
    const payment = await newPayment();
    const canceled = await api.cancel(payment.id, 'hold expired');
    assert.equal(canceled.status, 'FAILED');
    assert.equal(canceled.failureCode, 'canceled');
    assert.equal((await api.cancel(payment.id)).status, 'FAILED');
    assert.deepEqual(eventsFor(payment.id), ['payment.failed']);
    assertProblem(await payOverHttp(payment.id, TEST_CARDS.success), 409, 'payment_not_payable');

    const paid = await newPayment();
    await api.pay(paid.id, card(TEST_CARDS.success));
    await assert.rejects(api.cancel(paid.id), { code: 'payment_already_completed', status: 409 });
  });

  test('cancel withdraws a declined payment open to another card for good; not while a retry is charging', async () => {
    const payment = await newPayment({ allowRetry: true });
    await api.pay(payment.id, card(TEST_CARDS.declined));
    const canceled = await api.cancel(payment.id, 'superseded by a new amount');
    assert.deepEqual(
      [canceled.status, canceled.failureCode, canceled.allowRetry],
      ['FAILED', 'canceled', false],
    );
    assert.deepEqual(eventsFor(payment.id), ['payment.failed', 'payment.failed']);
    const refused = await payOverHttp(payment.id, TEST_CARDS.success);
    assertProblem(refused, 409, 'payment_not_payable');
    assert.match(refused.json().detail, /withdrawn/);
    await assert.rejects(api.pay(payment.id, card(TEST_CARDS.success)), { code: 'payment_not_payable' });
    assert.equal((await api.cancel(payment.id)).failureCode, 'canceled', 'idempotent');

    const retrying = await newPayment({ allowRetry: true });
    await api.pay(retrying.id, card(TEST_CARDS.declined));
    assert.equal(
      (await api.pay(retrying.id, card(TEST_CARDS.noAnswer), { timeoutMs: 50 })).status,
      'PENDING',
    );
    await assert.rejects(api.cancel(retrying.id), { code: 'payment_in_progress' });
  });
});

describe('refunds', () => {
  async function paid(amountMinor = 1000) {
    const payment = await newPayment({ amountMinor });
    assert.equal((await api.pay(payment.id, card(TEST_CARDS.success))).status, 'COMPLETED');
    return payment;
  }
  const refundOverHttp = (id: string, payload: object, headers: Record<string, string> = ADMIN) =>
    t.app.inject({ method: 'POST', url: `/api/v1/payments/${id}/refund`, headers, payload });
  const refundedAtGateway = async (id: string) => {
    const { rows } = await sql<{ refunded: string }>`select refunded_minor::text as refunded
      from payments_sandbox_charges where payment_id = ${id} and status = 'succeeded'`.execute(
      t.adapters.database.db,
    );
    return Number(rows[0].refunded);
  };

  test('a full refund makes the payment REFUNDED; refunding again changes nothing', async () => {
    const payment = await paid();
    const response = await refundOverHttp(payment.id, { reason: 'show canceled' });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.json().status, 'REFUNDED');
    assert.equal(response.json().refunded_amount, 10);
    assert.equal(response.json().refund_reason, 'show canceled');
    const again = await refundOverHttp(payment.id, { reason: 'show canceled' });
    assert.equal(again.statusCode, 200);
    assert.equal(again.json().status, 'REFUNDED');
    assert.equal(await refundedAtGateway(payment.id), 1000, 'the money went back once');
    assert.deepEqual(eventsFor(payment.id), ['payment.completed', 'payment.refunded']);
  });

  test('concurrent full refunds refund once', async () => {
    const payment = await paid();
    const results = await Promise.all(
      [1, 2, 3].map(() => api.refund(payment.id, { reason: 'duplicate payment' })),
    );
    for (const result of results) assert.equal(result.status, 'REFUNDED');
    assert.equal(await refundedAtGateway(payment.id), 1000);
  });

  test('partial refunds add up to a full one and never exceed the payment', async () => {
    const payment = await paid();
    const part = await refundOverHttp(payment.id, { amount: 3, reason: 'one seat' });
    assert.equal(part.json().status, 'COMPLETED');
    assert.equal(part.json().refunded_amount, 3);
    const tooMuch = assertProblem(
      await refundOverHttp(payment.id, { amount: 7.01, reason: 'too much' }),
      409,
      'refund_exceeds_remaining',
    );
    assert.equal(tooMuch.refundable_amount, 7);
    assertProblem(await refundOverHttp(payment.id, { amount: 1.005, reason: 'x' }), 422, 'invalid_refund');
    const keyed = { ...ADMIN, 'idempotency-key': `rest-${payment.id}` };
    const rest = await refundOverHttp(payment.id, { amount: 7, reason: 'the rest' }, keyed);
    assert.equal(rest.json().status, 'REFUNDED');
    const replay = await refundOverHttp(payment.id, { amount: 7, reason: 'the rest' }, keyed);
    assert.equal(replay.json().status, 'REFUNDED');
    assert.equal(await refundedAtGateway(payment.id), 1000);
    // The same key in-process (not through the HTTP replay) does not refund twice either.
    assert.equal(
      (await api.refund(payment.id, { reason: 'x', amountMinor: 700, idempotencyKey: `rest-${payment.id}` }))
        .refundedMinor,
      1000,
    );
  });

  test('only COMPLETED payments can be refunded; the refund API needs the admin key', async () => {
    const pending = await newPayment();
    assertProblem(await refundOverHttp(pending.id, { reason: 'x' }), 409, 'payment_not_refundable');
    const failed = await newPayment();
    await api.pay(failed.id, card(TEST_CARDS.declined));
    await assert.rejects(api.refund(failed.id, { reason: 'x' }), {
      code: 'payment_not_refundable',
      status: 409,
    });
    const done = await paid();
    assertProblem(await refundOverHttp(done.id, { reason: 'x' }, {}), 401, 'unauthorized');
    assertProblem(
      await refundOverHttp(done.id, { reason: 'x' }, { 'x-admin-key': 'wrong' }),
      401,
      'unauthorized',
    );
    assert.equal((await get(done.id)).status, 'COMPLETED');
    assertProblem(
      await refundOverHttp('0190a4b2-7c1e-7000-8000-000000000000', { reason: 'x' }),
      404,
      'payment_not_found',
    );
  });
});

describe('who may call what', () => {
  const idempotencyRows = async (key: string) => {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from idempotency_keys
      where key = ${key}`.execute(t.adapters.database.db);
    return rows[0].n;
  };

  test('a refund with a wrong key and an Idempotency-Key is 401 and claims no idempotency row', async () => {
    const payment = await newPayment();
    await api.pay(payment.id, card(TEST_CARDS.success));
    const key = `stranger-${payment.id}`;
    for (const credentials of [{}, { 'x-admin-key': 'not-the-admin-key' }]) {
      const response = await t.app.inject({
        method: 'POST',
        url: `/api/v1/payments/${payment.id}/refund`,
        headers: { ...credentials, 'idempotency-key': key },
        payload: { reason: 'mine now' },
      });
      assertProblem(response, 401, 'unauthorized');
    }
    assert.equal(await idempotencyRows(key), 0, 'nothing stored for a caller who is not the admin');
    // The admin may then use that very key.
    const refund = await t.app.inject({
      method: 'POST',
      url: `/api/v1/payments/${payment.id}/refund`,
      headers: { ...t.asAdmin, 'idempotency-key': key },
      payload: { reason: 'customer asked' },
    });
    assert.equal(refund.statusCode, 200, refund.body);
    assert.equal(refund.json().status, 'REFUNDED');
  });

  test('payers are anonymous: one Idempotency-Key on two payments pays both', async () => {
    const [one, two] = [await newPayment(), await newPayment()];
    const pay = (id: string) =>
      t.app.inject({
        method: 'POST',
        url: `/api/v1/payments/${id}/pay`,
        headers: { 'idempotency-key': 'the-same-key-in-two-browsers' },
        payload: { payment_details: card(TEST_CARDS.success) },
      });
    assert.equal((await pay(one.id)).statusCode, 200);
    const second = await pay(two.id);
    assert.equal(second.statusCode, 200, second.body);
    assert.equal(second.json().payment_id, two.id);
  });

  test('/openapi.json: a payment by its id and the webhook are public, refunds and the sandbox admin', async () => {
    const spec = (await t.app.inject({ url: '/openapi.json' })).json();
    const security = (path: string, method: string) => spec.paths[path][method].security;
    const admin = [{ adminKey: [] }, { staffSession: ['admin'] }];
    assert.deepEqual(security('/api/v1/payments/{paymentId}', 'get'), []);
    assert.deepEqual(security('/api/v1/payments/{paymentId}/pay', 'post'), []);
    assert.deepEqual(security('/api/v1/payments/webhook', 'post'), []);
    assert.deepEqual(security('/api/v1/payments/{paymentId}/refund', 'post'), admin);
    assert.deepEqual(security('/api/v1/payments/{paymentId}/sandbox/settle', 'post'), admin);
    assert.match(spec.paths['/api/v1/payments/{paymentId}'].get.description, /payment id is the capability/);
  });

  test('an admin page session may refund too', async () => {
    const payment = await newPayment();
    await api.pay(payment.id, card(TEST_CARDS.success));
    const signIn = await t.app.inject({
      method: 'POST',
      url: '/sign-in',
      payload: { key: t.config.adminApiKey, next: '/' },
    });
    assert.equal(signIn.statusCode, 303, signIn.body);
    const cookie = String(signIn.headers['set-cookie']).split(';')[0];
    const refund = await t.app.inject({
      method: 'POST',
      url: `/api/v1/payments/${payment.id}/refund`,
      headers: { cookie },
      payload: { reason: 'customer asked' },
    });
    assert.equal(refund.statusCode, 200, refund.body);
  });
});
