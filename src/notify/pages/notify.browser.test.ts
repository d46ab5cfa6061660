import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { browserSkipReason, launchBrowser, screenshot } from '../../platform/testing-browser.ts';
import { createEdgeHarness, type EdgeHarness } from '../edge-testing.ts';
import { createInboxProvider } from '../providers/inbox.ts';
import { createTemplateRenderer } from '../templates/index.ts';
import { notifyPages } from './index.ts';
import { fakePagesDeps } from './testing.ts';

/**
 * The pages in Chromium on the edge harness with a fake core: a booking e-mail rendered from the
 * default template and stored by the dev inbox, its timeline, and the preferences form saving
 * through a stand-in of the JSON API. (At merge: the real send → worker → inbox flow.)
 */
const skip = browserSkipReason();
let h: EdgeHarness;
let browser: Browser;
let url: string;
let fake: ReturnType<typeof fakePagesDeps>;
const patches: unknown[] = [];

before(async () => {
  if (skip) return;
  h = await createEdgeHarness();
  fake = fakePagesDeps(h.db);
  notifyPages(h.app, fake.deps);
  h.app.patch('/api/users/:id/notification-preferences', async (request) => {
    patches.push(request.body);
    return fake.deps.updatePreferences('7', request.body as never);
  });
  url = await h.app.listen({ port: 0, host: '127.0.0.1' });
  const renderer = createTemplateRenderer(h.db);
  const inbox = createInboxProvider('email', { db: h.db, clock: h.clock });
  const message = await renderer.render(
    'booking_confirmed',
    'email',
    {
      booking_id: 'BK-1',
      movie_title: 'Dune: Part Two',
      theater_name: 'Odeon Leicester Square',
      show_time: '2026-03-01T19:30:00Z',
      seats: ['C7', 'C8'],
      total_paid: '24.00',
      qr_code: 'v1.eyJiIjoiQkstMSJ9.c2lnbmF0dXJl',
    },
    { timeZone: 'Europe/London' },
  );
  // A hostile e-mail body: its script must not run anywhere.
  message.html += '<script>document.body.dataset.ran = "yes"; parent.document.title = "pwned";</script>';
  await inbox.send({
    deliveryId: `${fake.notification.id}:email`,
    notificationId: fake.notification.id,
    channel: 'email',
    type: 'booking_confirmed',
    recipient: { userId: '7', email: 'ana@example.test' },
    message,
  });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await h?.close();
});

test('dev inbox shows the booking e-mail with its QR code, sandboxed; the timeline and preferences work', {
  skip,
}, async () => {
  const errors: string[] = [];
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  page.on('pageerror', (error) => errors.push(error.message));
  assert.equal((await page.goto(`${url}/notify`))?.status(), 200);
  await page.click('a[href="/notify/inbox"]');
  // The inbox shows everyone's messages: development signs the admin in by itself, and says so.
  await page.waitForURL(/\/notify\/inbox$/);
  assert.match((await page.locator('.dev-banner').textContent()) ?? '', /Development mode/);
  await page.locator('[data-messages] a').first().click();
  await page.waitForURL(/message=/);
  const frame = page.frameLocator('iframe[data-html]');
  assert.equal(await frame.locator('h1').textContent(), 'Dune: Part Two');
  const qr = frame.locator('img[alt^="Ticket QR code"]');
  await qr.waitFor();
  assert.ok((await qr.evaluate((img: HTMLImageElement) => img.naturalWidth)) > 0, 'the QR image loads');
  assert.equal(await frame.locator('body').getAttribute('data-ran'), null, 'the e-mail script did not run');
  assert.equal(await page.title(), 'Dev inbox · Four Services');
  assert.match((await page.locator('[data-text]').textContent()) ?? '', /Booking BK-1 is confirmed/);
  await screenshot(page, 'notify-inbox');

  // New mail while reading: the page offers it without a reload.
  assert.ok(await page.locator('[data-new-mail]').isHidden());
  h.clock.advance(60_000);
  await createInboxProvider('sms', { db: h.db, clock: h.clock }).send({
    deliveryId: 'later:sms',
    notificationId: 'later',
    channel: 'sms',
    type: 'booking_reminder',
    recipient: { userId: '7', phone: '+15005550006' },
    message: { text: 'Reminder: Dune at Odeon, Sun 1 Mar 2026, 19:30. Ref BK-1' },
  });
  await page.locator('[data-new-mail]:not([hidden])').waitFor({ timeout: 10_000 });
  await page.click('[data-new-mail] a');
  await page.locator('[data-messages] li', { hasText: 'Reminder: Dune' }).waitFor();
  await page.locator('[data-messages] a', { hasText: 'Your tickets' }).click();
  await page.waitForURL(/message=/);

  await page.click(`a[href="/notify/notifications/${fake.notification.id}"]`);
  const email = page.locator('[data-channel="email"]');
  assert.equal(await email.locator('[data-status]').textContent(), 'delivered');
  assert.equal(await email.locator('.timeline li').count(), 5);
  assert.match((await page.locator('[data-channel="sms"] .timeline').textContent()) ?? '', /invalid_number/);
  await screenshot(page, 'notify-timeline');

  await page.goto(`${url}/notify/users/7/preferences`);
  await page.uncheck('input[name="push_enabled"]');
  await page.fill('input[name="quiet_hours_start"]', '23:00');
  await page.click('[data-preferences] button[type=submit]');
  await page.locator('[data-result]:not([hidden])').waitFor();
  assert.equal(await page.locator('[data-result]').textContent(), 'Saved.');
  assert.deepEqual(patches.at(-1), {
    push_enabled: false,
    sms_enabled: false,
    email_enabled: true,
    quiet_hours_start: '23:00',
    quiet_hours_end: '07:00',
    email: 'ana@example.test',
    phone: null,
    timezone: 'Europe/Berlin',
    locale: null,
  });
  await screenshot(page, 'notify-preferences');
  assert.deepEqual(errors, []);
});
