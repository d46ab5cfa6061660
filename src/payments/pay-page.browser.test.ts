import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { browserSkipReason, fillCard, launchBrowser, screenshot } from '../../test/support/browser.ts';
import { paymentsApi } from '../../test/support/payments.ts';
import { createTestApp, type TestApp } from '../../test/support/platform.ts';
import { type PaymentsApi, TEST_CARDS } from './api.ts';

/** The hosted payment page in Chromium, against the app listening on a local port. */
const skip = browserSkipReason();
let t: TestApp;
let api: PaymentsApi;
let browser: Browser;
let base: string;

before(async () => {
  if (skip) return;
  t = await createTestApp({ modules: ['payments'], env: { PAYMENT_TIMEOUT_MS: '200' } });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  api = paymentsApi(t.app);
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await t?.close();
});

async function openPage(allowRetry: boolean): Promise<{ page: Page; id: string; errors: string[] }> {
  const payment = await api.createPayment({
    purpose: 'parking',
    reference: 'T-1042',
    amountMinor: 600,
    description: 'Parking · 3h 12m · CAR',
    allowRetry,
    returnUrl: '/parking',
  });
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  // Answers of 4xx to the card form are expected; a missing asset is not.
  page.on('response', (response) => {
    if (response.status() === 404 && !response.url().endsWith('/favicon.ico'))
      errors.push(`404 ${response.url()}`);
  });
  const response = await page.goto(`${base}/pay/${payment.id}`);
  assert.equal(response?.status(), 200);
  return { page, id: payment.id, errors };
}

async function fill(page: Page, number: string, exp = '12/30', cvc = '123') {
  await fillCard(page, { number, exp, cvc });
  await page.click('#pay-button');
}

test('declined, then paid with the success card', { skip }, async () => {
  const { page, id, errors } = await openPage(true);
  assert.equal(await page.textContent('#pay-amount'), '6.00 USD');
  await screenshot(page, 'payments-page');
  await fill(page, '4242 4242 4242 4241', '13/30', '1');
  await page.waitForSelector('#card_number-error:not([hidden])');
  assert.match((await page.textContent('#card_number-error')) ?? '', /not a valid card number/);
  assert.match((await page.textContent('#exp-error')) ?? '', /month is 01 to 12/);
  assert.match((await page.textContent('#cvc-error')) ?? '', /3 digits/);
  await fill(page, '4000 0000 0000 0002');
  await page.waitForSelector('#pay-result[data-tone="bad"]');
  assert.match((await page.textContent('#pay-result')) ?? '', /declined.*try another card/);
  await screenshot(page, 'payments-page-declined');
  await fill(page, '4242 4242 4242 4242');
  await page.waitForSelector('#pay-result[data-tone="ok"]');
  assert.match((await page.textContent('#pay-result')) ?? '', /Paid with visa •••• 4242/);
  assert.equal(await page.locator('#pay-form').count(), 0);
  await screenshot(page, 'payments-page-paid');
  assert.equal((await api.get(id))?.status, 'COMPLETED');
  assert.deepEqual(errors, []);
});

test('a charge that does not answer shows "processing" until the late webhook completes it', {
  skip,
}, async () => {
  const { page, id, errors } = await openPage(false);
  await fill(page, TEST_CARDS.noAnswer);
  await page.waitForSelector('#pay-result[data-tone="wait"]');
  await screenshot(page, 'payments-page-processing');
  await api.sandbox.settle(id, 'succeeded');
  await page.waitForSelector('#pay-result[data-tone="ok"]', { timeout: 10_000 });
  assert.match((await page.textContent('#pay-result')) ?? '', /Paid/);
  assert.deepEqual(errors, []);
});

for (const [name, viewport] of Object.entries({
  desktop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 },
})) {
  test(`${name}: the card form says what is wrong under each field, in words, before anything is sent`, {
    skip,
  }, async () => {
    const { page, id, errors } = await openPage(true);
    await page.setViewportSize(viewport);
    const sent: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST') sent.push(request.url());
    });
    await page.click('#pay-button');
    const said = async (field: string) => {
      const input = page.locator(`#${field}`);
      const described = ((await input.getAttribute('aria-describedby')) ?? '').split(' ');
      assert.ok(described.includes(`${field}-error`), `${field}'s error is attached to it`);
      assert.equal(await input.getAttribute('aria-invalid'), 'true');
      return (await page.textContent(`#${field}-error`)) ?? '';
    };
    assert.equal(await said('card_number'), 'Enter the card number.');
    assert.equal(await said('exp'), 'Enter the expiry date as MM/YY, e.g. 12/30.');
    assert.equal(await said('cvc'), 'Enter the security code (CVC).');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'card_number', 'focus on the first');
    await screenshot(page, `payments-card-form-empty-${name}`);

    await fillCard(page, { number: '4242 4242 4242 4241', exp: '01/20', cvc: '12' });
    await page.click('#pay-button');
    assert.match(await said('card_number'), /not a valid card number/);
    assert.equal(await said('exp'), 'This card has expired.');
    assert.equal(await said('cvc'), 'The security code is 3 digits.');
    await page.fill('#card_number', '3782 822463 10005');
    await page.click('#pay-button');
    assert.equal(await said('cvc'), 'The security code is 4 digits.', 'Amex has 4');
    assert.deepEqual(sent, [], 'nothing was sent');
    assert.ok((await page.evaluate(() => document.documentElement.scrollWidth)) <= viewport.width);

    await fillCard(page, '4242 4242 4242 4242');
    await page.click('#pay-button');
    await page.waitForSelector('#pay-result[data-tone="ok"]');
    assert.equal((await api.get(id))?.status, 'COMPLETED');
    assert.deepEqual(errors, []);
  });
}
