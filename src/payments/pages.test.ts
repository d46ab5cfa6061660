import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { card, paymentsApi } from '../../test/support/payments.ts';
import { createTestApp, type TestApp } from '../../test/support/platform.ts';
import { type PaymentsApi, TEST_CARDS } from './api.ts';

let t: TestApp;
let api: PaymentsApi;

before(async () => {
  t = await createTestApp({ modules: ['payments'], env: { PAYMENT_TIMEOUT_MS: '50' } });
  api = paymentsApi(t.app);
});
after(() => t.close());

const page = (id: string) => t.app.inject({ method: 'GET', url: `/pay/${id}` });
const create = (overrides: Partial<Parameters<PaymentsApi['createPayment']>[0]> = {}) =>
  api.createPayment({
    purpose: 'booking',
    reference: 'b-1',
    amountMinor: 2450,
    currency: 'EUR',
    description: 'Dune: Part Two · 2 seats',
    ...overrides,
  });

test('the hosted page shows the amount and a card form run by a client module', async () => {
  const payment = await create({ returnUrl: '/bookings/b-1' });
  const response = await page(payment.id);
  assert.equal(response.statusCode, 200);
  assert.match(String(response.headers['content-type']), /text\/html/);
  assert.match(String(response.headers['content-security-policy']), /script-src 'self'/);
  assert.match(response.body, /24\.50 EUR/);
  assert.match(response.body, /Dune: Part Two · 2 seats/);
  assert.match(response.body, /<form id="pay-form"/);
  assert.match(response.body, /<script type="module" src="\/static\/payments\/pay.js"><\/script>/);
  assert.doesNotMatch(response.body, /<script>|<script type="module">/, 'no inline script');
  assert.match(response.body, /href="\/bookings\/b-1"/);
  const script = await t.app.inject({ method: 'GET', url: '/static/payments/pay.js' });
  assert.equal(script.statusCode, 200);
  assert.match(String(script.headers['content-type']), /javascript/);
});

test('text on the page is escaped', async () => {
  const payment = await create({ description: '<script>alert(1)</script>' });
  const response = await page(payment.id);
  assert.doesNotMatch(response.body, /<script>alert/);
  assert.match(response.body, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
});

test('paying through the page API, then reloading, shows the payment as paid without a form', async () => {
  const payment = await create();
  const pay = await t.app.inject({
    method: 'POST',
    url: `/api/v1/payments/${payment.id}/pay`,
    headers: { 'idempotency-key': 'page-1' },
    payload: { payment_method: 'CARD', payment_details: card('4242 4242 4242 4242') },
  });
  assert.equal(pay.statusCode, 200);
  const response = await page(payment.id);
  assert.match(response.body, /Paid with visa •••• 4242/);
  assert.doesNotMatch(response.body, /<form/);
});

test('a declined payment shows why; a processing one says so; neither offers the form', async () => {
  const declined = await create();
  await api.pay(declined.id, card(TEST_CARDS.declined));
  const declinedPage = await page(declined.id);
  assert.match(declinedPage.body, /The card was declined/);
  assert.doesNotMatch(declinedPage.body, /<form/);

  const retryable = await create({ allowRetry: true });
  await api.pay(retryable.id, card(TEST_CARDS.declined));
  const retryPage = await page(retryable.id);
  assert.match(retryPage.body, /The card was declined\. Nothing was charged: you can try another card\./);
  assert.match(retryPage.body, /<form id="pay-form"/);

  // Withdrawn by its owner (replaced by a new payment): said in words, no form, the owner's link.
  const replaced = await create({ allowRetry: true, returnUrl: '/parking' });
  await api.pay(replaced.id, card(TEST_CARDS.declined));
  await api.cancel(replaced.id, 'superseded by a new amount');
  const replacedPage = await page(replaced.id);
  assert.match(replacedPage.body, /This payment was replaced or withdrawn and can no longer be paid/);
  assert.doesNotMatch(replacedPage.body, /<form/);
  assert.match(replacedPage.body, /href="\/parking">See what is due now/);

  const processing = await create();
  await api.pay(processing.id, card(TEST_CARDS.noAnswer));
  const processingPage = await page(processing.id);
  assert.match(processingPage.body, /being processed/);
  assert.match(processingPage.body, /data-outstanding="true"/);
  assert.doesNotMatch(processingPage.body, /<form/);
});

test('an unknown payment link is a 404 page', async () => {
  for (const id of ['0190a4b2-7c1e-7000-8000-000000000000', 'not-a-uuid']) {
    const response = await page(id);
    assert.equal(response.statusCode, 404);
    assert.match(String(response.headers['content-type']), /text\/html/);
    assert.match(response.body, /not valid/);
  }
});
