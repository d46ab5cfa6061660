import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { after, test } from 'node:test';
import { browserSuite, screenshot } from '../../../test/support/browser.ts';

/**
 * Every notification page in Chromium against the real server (`npm start` with no credentials
 * configured: development keys, the console signs the admin in by itself): notifications sent
 * through the JSON API with the development service key are rendered by a worker; the e-mail
 * lands in the dev inbox, the SMS goes to a local fake of the carrier's API that refuses the number
 * until the test lets it through, so it becomes a dead letter that the dead-letters page re-drives.
 */
const SERVICE = { 'x-api-key': 'dev-service-key', 'content-type': 'application/json' };
const ADMIN = { 'x-admin-key': 'dev-admin-key', 'content-type': 'application/json' };
let carrier: Server | undefined;
let carrierRefuses = true;

const suite = browserSuite(async () => {
  const fake = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      if (carrierRefuses) {
        return response
          .writeHead(400, { 'content-type': 'application/json' })
          .end(JSON.stringify({ code: 21211, message: "'<bad>' is not a valid phone number" }));
      }
      response
        .writeHead(201, { 'content-type': 'application/json' })
        .end(JSON.stringify({ sid: `SM${randomUUID().slice(0, 8)}`, status: 'queued' }));
    });
  });
  carrier = fake;
  await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
  return {
    SERVICES: 'notify',
    NOTIFY_SMS_PROVIDER: 'http',
    NOTIFY_SMS_URL: `http://127.0.0.1:${(fake.address() as { port: number }).port}`,
    NOTIFY_SMS_ACCOUNT_SID: 'AC1',
    NOTIFY_SMS_AUTH_TOKEN: 'token',
    NOTIFY_SMS_FROM: '+15005550000',
  };
});
const { skip } = suite;
after(async () => {
  if (carrier) await new Promise((resolve) => carrier?.close(resolve));
});

async function api(method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const response = await fetch(`${suite.server.url}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  assert.ok(response.ok, `${method} ${path}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

const booking = {
  booking_id: 'BK-1',
  movie_title: 'Dune: Part Two',
  theater_name: 'Odeon Leicester Square',
  show_time: '2026-03-01T19:30:00Z',
  seats: ['C7', 'C8'],
  total_paid: '24.00',
  qr_code: 'v1.eyJiIjoiQkstMSJ9.c2lnbmF0dXJl',
};

test('landing, dev inbox, a timeline, dead letters and preferences, end to end', { skip }, async () => {
  const user = `ana-${randomUUID().slice(0, 8)}`;
  // A template an admin wrote for British English, with a script in its HTML: it must not run anywhere.
  const base = await api('GET', '/api/templates/booking_confirmed.email', SERVICE);
  await api('PUT', '/api/templates/booking_confirmed.email.en-GB', ADMIN, {
    subject: base.subject,
    body: base.body,
    html_body: `${base.html_body}<script>document.body.dataset.ran = "yes"; parent.document.title = "pwned";</script>`,
  });
  await api('PATCH', `/api/users/${user}/notification-preferences`, SERVICE, {
    email: 'ana@example.test',
    phone: '+15005550006',
    timezone: 'Europe/London',
    locale: 'en-GB',
  });
  const sent = await api('POST', '/api/notifications', SERVICE, {
    user_id: user,
    type: 'booking_confirmed',
    channels: ['email', 'sms'],
    data: booking,
  });

  const errors: string[] = [];
  const page = await suite.browser.newPage({ viewport: { width: 1200, height: 900 } });
  page.on('pageerror', (error) => errors.push(error.message));
  assert.equal((await page.goto(`${suite.server.url}/notify`))?.status(), 200);
  await page.click('a[href="/notify/inbox"]');
  // The inbox shows everyone's messages: development signs the admin in by itself, and says so.
  await page.waitForURL(/\/notify\/inbox$/);
  assert.match((await page.locator('.dev-banner').textContent()) ?? '', /Development mode/);
  // The worker may still be on it: reload until the e-mail is there.
  const confirmation = page.locator('[data-messages] a', { hasText: 'Your tickets' });
  for (let i = 0; i < 50 && (await confirmation.count()) === 0; i++) {
    await page.waitForTimeout(200);
    await page.reload();
  }
  await confirmation.first().click();
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

  // New mail while reading: the page offers it without a reload (its poll carries the session).
  assert.ok(await page.locator('[data-new-mail]').isHidden());
  await api('POST', '/api/notifications', SERVICE, {
    user_id: user,
    type: 'booking_reminder',
    channels: ['email'],
    data: { ...booking, hours_before: 3 },
  });
  await page.locator('[data-new-mail]:not([hidden])').waitFor({ timeout: 10_000 });
  await page.click('[data-new-mail] a');
  await page.locator('[data-messages] li', { hasText: 'Reminder' }).waitFor();
  await page.locator('[data-messages] a', { hasText: 'Your tickets' }).click();
  await page.waitForURL(/message=/);

  await page.click(`a[href="/notify/notifications/${sent.id}"]`);
  await page.waitForURL(`**/notify/notifications/${sent.id}`);
  const email = page.locator('[data-channel="email"]');
  assert.equal(await email.locator('[data-status]').textContent(), 'Delivered');
  const sms = page.locator('[data-channel="sms"]');
  const smsStatus = () => sms.locator('[data-status]').getAttribute('data-status');
  for (let i = 0; i < 50 && (await smsStatus()) !== 'failed'; i++) {
    await page.waitForTimeout(200);
    await page.reload();
  }
  assert.equal(await sms.locator('[data-status]').textContent(), 'Failed');
  assert.match(
    (await sms.locator('.timeline').textContent()) ?? '',
    /Not a valid phone number: .*'<bad>' is not a valid/,
  );
  await screenshot(page, 'notify-timeline');

  // The carrier takes the number now: the dead letter goes again from its page.
  carrierRefuses = false;
  await page.goto(`${suite.server.url}/notify`);
  await page.click('a[href="/notify/dead-letters"]');
  const row = page.locator('[data-dead-letters] tr', { hasText: sent.id });
  await row.locator('button', { hasText: 'Send again' }).click();
  await page.waitForURL(/redriven=/);
  // Queued by the API; the page's script watches until the worker sent it, then says so.
  await page.locator('[data-redrive-outcome].ok').waitFor({ timeout: 15_000 });
  assert.equal(await page.locator('[data-redrive-outcome]').textContent(), 'Sent again: sent.');
  await screenshot(page, 'notify-dead-letters');
  await page.goto(`${suite.server.url}/notify/notifications/${sent.id}`);
  assert.equal(await smsStatus(), 'sent');

  await page.goto(`${suite.server.url}/notify`);
  await page.fill('[data-preferences-lookup] input[name="user"]', user);
  await page.click('[data-preferences-lookup] button');
  await page.waitForURL(`**/notify/users/${user}/preferences`);
  await page.uncheck('input[name="push_enabled"]');
  // One end of the quiet hours only: the API refuses, the page says so at the empty end, in words.
  await page.fill('input[name="quiet_hours_start"]', '23:00');
  await page.click('[data-preferences] button[type=submit]');
  const end = page.locator('#quiet_hours_end');
  await page.locator('#quiet_hours_end[aria-invalid="true"]').waitFor();
  assert.equal(
    await page.locator('#quiet_hours_end-error').textContent(),
    'Give both ends of the quiet hours, or leave both empty.',
  );
  assert.equal(await end.getAttribute('aria-describedby'), 'quiet_hours_end-error');
  assert.ok(await end.evaluate((element) => element === document.activeElement), 'the field has focus');
  assert.ok(await page.locator('[data-result]').isHidden(), 'no "Saved."');
  // What a reader sees: the text of the page's JSON data block (the field words) is not shown.
  // biome-ignore lint/performance/useDomNodeTextContent: the rendered text is the point here.
  assert.doesNotMatch((await page.locator('main').innerText()) ?? '', /go together|quiet_hours_end/);
  await screenshot(page, 'notify-preferences-error');
  await page.fill('input[name="quiet_hours_end"]', '07:00');
  // The zone is picked from the IANA list.
  assert.equal(await page.locator('select#timezone').inputValue(), 'Europe/London');
  await page.selectOption('select#timezone', 'Asia/Tokyo');
  // Saved through the JSON API by the page's script, with the admin's page session.
  await page.click('[data-preferences] button[type=submit]');
  await page.locator('[data-result]:not([hidden])').waitFor();
  assert.equal(await page.locator('[data-result]').textContent(), 'Saved.');
  assert.equal(await end.getAttribute('aria-invalid'), null, 'the error is gone once fixed');
  assert.deepEqual(await api('GET', `/api/users/${user}/notification-preferences`, SERVICE), {
    push_enabled: false,
    sms_enabled: true,
    email_enabled: true,
    in_app_enabled: true,
    email_marketing_enabled: true,
    quiet_hours_start: '23:00',
    quiet_hours_end: '07:00',
    email: 'ana@example.test',
    phone: '+15005550006',
    timezone: 'Asia/Tokyo',
    locale: 'en-GB',
  });
  await screenshot(page, 'notify-preferences');
  assert.deepEqual(errors, []);
});

test("a user who never chose a time zone gets the browser's zone preselected in the picker", {
  skip,
}, async () => {
  const user = `zone-${randomUUID().slice(0, 8)}`;
  const context = await suite.browser.newContext({
    viewport: { width: 390, height: 844 },
    timezoneId: 'America/New_York',
  });
  const page = await context.newPage();
  await page.goto(`${suite.server.url}/notify/users/${user}/preferences`);
  const zone = page.locator('select#timezone');
  assert.equal(await zone.evaluate((select: HTMLSelectElement) => select.tagName), 'SELECT');
  assert.equal(await zone.inputValue(), 'America/New_York');
  assert.ok((await zone.locator('option').count()) > 300, 'every IANA zone');
  assert.match((await page.locator('[data-zone-hint]').textContent()) ?? '', /This browser's zone/);
  await page.click('[data-preferences] button[type=submit]');
  await page.locator('[data-result]:not([hidden])').waitFor();
  assert.equal(
    (await api('GET', `/api/users/${user}/notification-preferences`, SERVICE)).timezone,
    'America/New_York',
  );
  await screenshot(page, 'notify-preferences-zone-phone');
  await context.close();
});
