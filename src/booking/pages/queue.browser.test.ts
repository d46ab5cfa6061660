import assert from 'node:assert/strict';
import { test } from 'node:test';
import { demoHotShow, holdAndBook } from '../../../test/support/booking.ts';
import { browserSuite, screenshot } from '../../../test/support/browser.ts';

/**
 * The waiting room without its live stream (a proxy that cuts event streams): the page polls
 * instead, says when a poll gets no answer, and still moves on when its turn comes. Its own app,
 * so its one admission slot is not taken by another test's browser.
 */
const suite = browserSuite({ BOOKING_QUEUE_CAPACITY: '1' });
const { skip } = suite;

test('without its event stream the waiting room polls, says when a poll fails, and admits', {
  skip,
}, async () => {
  const hotShow = await demoHotShow(suite.server.url);
  const guest = await fetch(`${suite.server.url}/api/v1/guests`, { method: 'POST' });
  const first = (await guest.json()) as { token: string };
  const auth = { authorization: `Bearer ${first.token}` };
  const queue = await fetch(`${suite.server.url}/api/v1/shows/${hotShow}/queue`, { headers: auth });
  const admitted = (await queue.json()) as { status: string; admission_token: string };
  assert.equal(admitted.status, 'ADMITTED', 'someone else holds the only slot');

  const context = await suite.browser.newContext();
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  // The page's timers run when the test says: each poll waits 10 s.
  await page.clock.install();
  await page.route(`**/api/v1/shows/${hotShow}/queue/events`, (route) => route.abort('connectionreset'));
  let polls = 0;
  await page.route(`**/api/v1/shows/${hotShow}/queue`, (route) =>
    ++polls === 1 ? route.abort('connectionreset') : route.continue(),
  );

  await page.goto(`${suite.server.url}/shows/${hotShow}`);
  await page.waitForURL(/\/queue$/);
  await page.locator('#queue-status', { hasText: 'Lost touch with the server' }).waitFor();
  assert.equal(await page.textContent('#position'), '…');
  await screenshot(page, 'booking-waiting-room-polling-failed');

  await page.clock.runFor(10_000);
  await page.locator('#position', { hasText: '#1' }).waitFor();
  assert.equal(await page.textContent('#queue-status'), 'You are next.');

  // The one admitted books: the slot is the browser's at its next poll.
  const booked = await holdAndBook(suite.server.url, hotShow, {
    ...auth,
    admissionToken: admitted.admission_token,
  });
  assert.equal(booked, 'CONFIRMED');
  await page.clock.runFor(10_000);
  await page.locator('#position', { hasText: "It's your turn" }).waitFor();
  await page.clock.runFor(1_500);
  await page.waitForURL(new RegExp(`/shows/${hotShow}$`));
  assert.ok(polls >= 3, `polled ${polls} times`);
  assert.deepEqual(errors, []);
  await context.close();
});
