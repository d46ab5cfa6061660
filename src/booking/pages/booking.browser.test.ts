import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { demoHotShow, holdAndBook } from '../../../test/support/booking.ts';
import { browserSuite, fillCard, screenshot } from '../../../test/support/browser.ts';

/**
 * The whole path in a real browser on the real app (demo catalogue): search with autocomplete,
 * a movie's shows, the seat map, hold with countdown, pay with the success card, the QR code;
 * a second browser sees the seats taken; the waiting room of the hot show.
 */
const suite = // One admission at a time, so the waiting room test can show a place in line.
  browserSuite({ BOOKING_QUEUE_CAPACITY: '1' });
const { skip } = suite;
const errors: string[] = [];

/** JSON from the app; a body makes it a POST. */
async function api<T>(path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
  const response = await fetch(`${suite.server.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return (await response.json()) as T;
}

async function newPage(): Promise<Page> {
  const context = await suite.browser.newContext({ viewport: { width: 1100, height: 900 } });
  const page = await context.newPage();
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('response', (response) => {
    // Browsers ask for /favicon.ico on their own; the site has none.
    if (response.status() >= 400 && !response.url().endsWith('/favicon.ico')) {
      errors.push(`${response.status()} ${response.url()}`);
    }
  });
  return page;
}

test('search, pick two seats, hold, pay with the test card, see the QR; another browser sees them taken', {
  skip,
}, async () => {
  const page = await newPage();
  await page.goto(`${suite.server.url}/movies`);
  assert.equal(await page.title(), 'Movies · Four Services');
  await page.fill('#q', 'orbt of');
  const suggestion = page.locator('#suggestions li a').first();
  await suggestion.waitFor();
  assert.match((await suggestion.textContent()) ?? '', /Orbit of Silence/);
  await screenshot(page, 'booking-search-autocomplete');
  await suggestion.click();
  await page.waitForURL(/\/movies\/[0-9a-f-]{36}/);
  await page.locator('a.slot:not(.hot)').first().waitFor();
  await screenshot(page, 'booking-movie-shows');
  await page.locator('a.slot:not(.hot)').first().click();
  await page.waitForURL(/\/shows\/[0-9a-f-]{36}$/);
  const showUrl = page.url();

  const free = page.locator('#seatmap button.seat:not(.taken)');
  await free.first().waitFor();
  const labels = [await free.nth(20).getAttribute('data-seat'), await free.nth(21).getAttribute('data-seat')];
  await free.nth(20).click();
  await free.nth(21).click();
  assert.equal(await page.textContent('#selected-seats'), labels.join(', '));
  await page.click('#hold');
  await page.locator('#checkout').waitFor({ state: 'visible' });
  assert.match((await page.textContent('#countdown')) ?? '', /^(09:5\d|10:00)$/);
  await screenshot(page, 'booking-seatmap-held');

  await fillCard(page, '4242 4242 4242 4242');
  await page.click('#pay');
  await page.waitForURL(/\/bookings\/[0-9a-f-]{36}$/);
  const qr = page.locator('img#qr');
  await qr.waitFor();
  assert.match((await qr.getAttribute('src')) ?? '', /^data:image\/png;base64,/);
  assert.equal(await page.textContent('#booking-status'), 'CONFIRMED');
  assert.ok(
    await qr.evaluate(
      (img) =>
        (img as unknown as { complete: boolean; naturalWidth: number }).complete &&
        (img as unknown as { naturalWidth: number }).naturalWidth > 100,
    ),
    'the QR renders',
  );
  await screenshot(page, 'booking-confirmed-qr');
  const bookingUrl = page.url();

  const other = await newPage();
  await other.goto(showUrl);
  await other.locator('#seatmap button.seat').first().waitFor();
  for (const label of labels) {
    const seat = other.locator(`#seatmap button.seat[data-seat="${label}"]`);
    assert.ok(await seat.evaluate((el) => el.classList.contains('taken')), `${label} shows taken`);
    assert.ok(await seat.isDisabled());
  }
  await screenshot(other, 'booking-seatmap-seen-by-another');

  // The booking's address alone shows nothing: the other browser is another guest.
  await other.goto(bookingUrl);
  await other.locator('#message', { hasText: 'No such booking' }).waitFor();
  assert.equal(await other.locator('img#qr').isVisible(), false);
  assert.ok(!(await other.content()).includes('data:image/png'), 'no ticket in the page');
  const refused = errors.findIndex(
    (error) => error.startsWith('404 ') && error.includes('/api/v1/bookings/'),
  );
  assert.ok(refused >= 0, 'its read of the booking was refused');
  errors.splice(refused, 1);

  await page.goto(`${suite.server.url}/my-bookings`);
  await page.locator('#my-bookings li.card').first().waitFor();
  assert.equal(await page.locator('#my-bookings li.card').count(), 1);
  await screenshot(page, 'booking-my-bookings');

  // Cancelling says what comes back before it is done, in the page's own dialog (no confirm()).
  const nativeDialogs: string[] = [];
  page.on('dialog', (dialog) => {
    nativeDialogs.push(dialog.message());
    void dialog.dismiss();
  });
  await page.goto(bookingUrl);
  await page.locator('#cancel').click();
  const dialog = page.locator('#cancel-dialog');
  await dialog.waitFor({ state: 'visible' });
  assert.match(
    (await page.textContent('#cancel-terms')) ?? '',
    /^You get [\d,.]+ \w{3} back, the whole amount \(refunds end \w+day \d+ \w+ at \d\d:\d\d\)/,
  );
  await screenshot(page, 'booking-cancel-dialog');
  await dialog.getByRole('button', { name: 'Keep my booking' }).click();
  await dialog.waitFor({ state: 'hidden' });
  assert.equal(await page.textContent('#booking-status'), 'CONFIRMED');
  await page.locator('#cancel').click();
  await dialog.getByRole('button', { name: 'Cancel booking' }).click();
  await page.locator('#booking-status', { hasText: 'CANCELLED' }).waitFor();
  assert.match((await page.textContent('#booking-note')) ?? '', /refund of [\d,.]+ \w{3}/);
  assert.deepEqual(nativeDialogs, [], 'no confirm() or alert()');
  assert.deepEqual(errors, []);
});

test('a hot show: the waiting room shows the place in line live and admits when a slot frees', {
  skip,
}, async () => {
  const hotShow = await demoHotShow(suite.server.url);
  // Someone else is admitted first and holds the only slot.
  const first = await api<{ user_id: string; token: string }>('/api/v1/guests', {});
  const auth = { authorization: `Bearer ${first.token}` };
  const admitted = await api<{ status: string; admission_token: string }>(
    `/api/v1/shows/${hotShow}/queue`,
    undefined,
    auth,
  );
  assert.equal(admitted.status, 'ADMITTED');

  const page = await newPage();
  await page.goto(`${suite.server.url}/shows/${hotShow}`);
  await page.waitForURL(/\/queue$/);
  await page.locator('#position', { hasText: '#1' }).waitFor();
  assert.match((await page.textContent('#wait')) ?? '', /about 10 minutes/);
  await screenshot(page, 'booking-waiting-room');

  // The first one books: the slot goes to the browser, which hears it over SSE.
  const booked = await holdAndBook(suite.server.url, hotShow, {
    ...auth,
    admissionToken: admitted.admission_token,
  });
  assert.equal(booked, 'CONFIRMED');
  await page
    .locator('#go:not([hidden])')
    .waitFor()
    .catch((error: Error) => {
      throw new Error(`${error.message}\nthe app's log:\n${suite.server.output()}`);
    });
  assert.equal(await page.textContent('#position'), "It's your turn");
  await screenshot(page, 'booking-waiting-room-admitted');
  await page.waitForURL(new RegExp(`/shows/${hotShow}$`));
  await page.locator('#seatmap button.seat').first().waitFor();
  await page.locator('#seatmap button.seat:not(.taken)').first().click();
  await page.click('#hold');
  await page.locator('#checkout').waitFor({ state: 'visible' });
  assert.deepEqual(errors, []);
});
