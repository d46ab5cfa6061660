import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { card, paymentsApi } from '../../test/support/payments.ts';
import { createTestApp, metricValue, type TestApp } from '../../test/support/platform.ts';
import { type PaymentsApi, TEST_CARDS } from './api.ts';

let t: TestApp;
let api: PaymentsApi;

before(async () => {
  t = await createTestApp({ modules: ['payments'], env: { PAYMENT_TIMEOUT_MS: '100' } });
  api = paymentsApi(t.app);
  api.onPaymentEvent('parking', async () => {});
});
after(() => t.close());

const newPayment = () =>
  api.createPayment({
    purpose: 'parking',
    reference: `ticket-${Math.random()}`,
    amountMinor: 1250,
    description: 'Parking, 2h 5m',
  });

/** A series' value now, 0 before it is first served. */
async function value(name: string, labels: string) {
  const found = await metricValue(t.app, name, labels);
  return Number.isNaN(found) ? 0 : found;
}

/** How much each series moved while `act` ran. */
async function moved(name: string, series: string[], act: () => Promise<void>) {
  const before = await Promise.all(series.map((labels) => value(name, labels)));
  await act();
  const after = await Promise.all(series.map((labels) => value(name, labels)));
  return Object.fromEntries(series.map((labels, i) => [labels, after[i] - before[i]]));
}

test('payments_total counts each payment outcome once, by purpose', async () => {
  const outcomes = ['completed', 'declined', 'canceled', 'refunded'];
  const deltas = await moved(
    'payments_total',
    outcomes.map((outcome) => `purpose="parking",outcome="${outcome}"`),
    async () => {
      const paid = await newPayment();
      assert.equal((await api.pay(paid.id, card(TEST_CARDS.success))).status, 'COMPLETED');
      // Paying again changes nothing and counts nothing.
      await api.pay(paid.id, card(TEST_CARDS.success)).catch(() => {});
      assert.equal((await api.refund(paid.id, { reason: 'test' })).status, 'REFUNDED');
      const declined = await newPayment();
      assert.equal((await api.pay(declined.id, card(TEST_CARDS.declined))).status, 'FAILED');
      const canceled = await newPayment();
      assert.equal((await api.cancel(canceled.id)).status, 'FAILED');
    },
  );
  assert.deepEqual(Object.values(deltas), [1, 1, 1, 1], JSON.stringify(deltas));
});

test('payments_gateway_duration_seconds times each gateway call by operation and outcome', async () => {
  const series = [
    'operation="create_charge",outcome="ok"',
    'operation="create_charge",outcome="declined"',
    'operation="create_charge",outcome="timeout"',
    'operation="refund",outcome="ok"',
  ];
  const deltas = await moved('payments_gateway_duration_seconds_count', series, async () => {
    const paid = await newPayment();
    await api.pay(paid.id, card(TEST_CARDS.success));
    await api.refund(paid.id, { reason: 'test' });
    await api.pay((await newPayment()).id, card(TEST_CARDS.declined));
    // Never answers: the gateway's timeout runs out and the payment stays PENDING.
    const pending = await api.pay((await newPayment()).id, card(TEST_CARDS.noAnswer));
    assert.equal(pending.status, 'PENDING');
  });
  assert.deepEqual(Object.values(deltas), [1, 1, 1, 1], JSON.stringify(deltas));
  const sum = await metricValue(
    t.app,
    'payments_gateway_duration_seconds_sum',
    'operation="create_charge",outcome="timeout"',
  );
  assert.ok(sum >= 0.09, `a timed-out call lasts the timeout (${sum} s)`);
});
