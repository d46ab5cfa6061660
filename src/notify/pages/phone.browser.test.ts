import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { browserSuite, screenshot } from '../../../test/support/browser.ts';

/**
 * The notification console on a phone (390×844) and a desktop (1280×800), against `npm start`
 * with its development providers (every channel into the dev inbox): an SMS whose body is one
 * long unbroken link, a page of dead letters, a user's history, the redrive that fails again.
 *
 * Dead letters without a failing carrier: an admin's French SMS template names a variable the
 * bookings do not send. The accept checks the default template (it passes), the worker renders
 * the user's French one, which fails for good: one dead letter per user, at once.
 */
const suite = browserSuite();
const { skip } = suite;
const SERVICE = { 'x-api-key': 'dev-service-key', 'content-type': 'application/json' };
const ADMIN = { 'x-admin-key': 'dev-admin-key', 'content-type': 'application/json' };
const VIEWPORTS = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
];
const LONG_LINK = `https://tickets.example.test/confirm/${'x7Qa9'.repeat(60)}`;
const DEAD_LETTERS = 12;

async function api(method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const response = await fetch(`${suite.server.url}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  }).catch((error) => {
    throw new Error(`${method} ${path}: ${error}; the server said: ${suite.server.output().slice(-3000)}`);
  });
  const text = await response.text();
  assert.ok(response.ok, `${method} ${path}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

const booking = (title: string) => ({
  booking_id: 'BK-7',
  movie_title: title,
  theater_name: 'Odeon Leicester Square',
  show_time: '2026-03-01T19:30:00Z',
  seats: ['C7', 'C8'],
  total_paid: '24.00',
  qr_code: 'v1.eyJiIjoiQkstNyJ9.c2lnbmF0dXJl',
});

async function eventually(page: Page, url: string, ready: () => Promise<boolean>, what: string) {
  for (let i = 0; i < 60; i++) {
    await page.goto(url);
    if (await ready()) return;
    await page.waitForTimeout(250);
  }
  assert.fail(`${what} did not happen`);
}

interface Fixtures {
  user: string;
  sms: { notification: string; message: string };
  failing: string[];
}
let made: Promise<Fixtures> | undefined;

async function makeFixtures(): Promise<Fixtures> {
  const user = `phone-${randomUUID().slice(0, 8)}`;
  await api('PATCH', `/api/users/${user}/notification-preferences`, SERVICE, {
    phone: '+15005550006',
    email: 'ana@example.test',
    timezone: 'Asia/Kolkata',
  });
  const sent = await api('POST', '/api/notifications', SERVICE, {
    user_id: user,
    type: 'booking_confirmed',
    channels: ['sms', 'email'],
    data: booking(LONG_LINK),
  });
  const body = await api('GET', '/api/templates/booking_confirmed.sms', ADMIN);
  await api('PUT', '/api/templates/booking_confirmed.sms.fr', ADMIN, {
    body: `${body.body} {{ seat_note }}`,
  });
  const failing: string[] = [];
  for (let i = 0; i < DEAD_LETTERS; i++) {
    const other = `phone-fr-${i}-${randomUUID().slice(0, 8)}`;
    await api('PATCH', `/api/users/${other}/notification-preferences`, SERVICE, {
      phone: '+15005550006',
      locale: 'fr',
    });
    const accepted = await api('POST', '/api/notifications', SERVICE, {
      user_id: other,
      type: 'booking_confirmed',
      channels: ['sms'],
      data: booking(`Dune ${LONG_LINK}`),
    });
    failing.push(accepted.id);
  }
  // The worker may still be on them: wait for the inbox message and every dead letter.
  let message: string | undefined;
  for (let i = 0; i < 80; i++) {
    const inbox = await api('GET', `/api/notifications/inbox?user=${user}&channel=sms`, ADMIN);
    message = inbox.messages[0]?.id;
    const dead = await api('GET', '/api/notifications/dead-letters', ADMIN);
    if (message && dead.dead_letters.length >= DEAD_LETTERS) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  assert.ok(message, 'the long SMS reached the dev inbox');
  return { user, sms: { notification: sent.id, message }, failing };
}

const pages = (f: Fixtures) => [
  { name: 'landing', path: '/notify' },
  { name: 'inbox', path: '/notify/inbox' },
  { name: 'inbox-sms', path: `/notify/inbox?user=${f.user}&message=${f.sms.message}` },
  { name: 'timeline', path: `/notify/notifications/${f.sms.notification}` },
  { name: 'dead-letters', path: '/notify/dead-letters' },
  { name: 'preferences', path: `/notify/users/${f.user}/preferences` },
  { name: 'history', path: `/notify/users/${f.user}/history` },
];

for (const viewport of VIEWPORTS) {
  test(`every notification page at ${viewport.width}×${viewport.height} fits the viewport: a long SMS wraps, tables scroll in their box`, {
    skip,
  }, async () => {
    made ??= makeFixtures();
    const fixtures = await made;
    const page = await suite.browser.newPage({ viewport });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    const widths: Record<string, number> = {};
    for (const visit of pages(fixtures)) {
      assert.equal((await page.goto(`${suite.server.url}${visit.path}`))?.status(), 200, visit.name);
      widths[visit.name] = await page.evaluate(() => document.documentElement.scrollWidth);
      await screenshot(page, `notify-${visit.name}-${viewport.name}`);
    }
    assert.deepEqual(
      Object.entries(widths).filter(([, width]) => width > viewport.width),
      [],
      `no page is wider than ${viewport.width}px: ${JSON.stringify(widths)}`,
    );

    // The SMS body is all there, wrapped inside the page.
    await page.goto(`${suite.server.url}${pages(fixtures)[2].path}`);
    const text = page.locator('[data-text]');
    assert.ok(((await text.textContent()) ?? '').includes(LONG_LINK));
    const box = await text.boundingBox();
    assert.ok(box && box.x + box.width <= viewport.width, `the body stays inside: ${JSON.stringify(box)}`);

    // Many dead letters: on a phone the table scrolls inside its own box.
    await page.goto(`${suite.server.url}/notify/dead-letters`);
    assert.ok((await page.locator('[data-dead-letters] tbody tr').count()) >= DEAD_LETTERS);
    const table = await page.locator('.table-scroll').evaluate((box) => ({
      scroll: box.scrollWidth,
      client: box.clientWidth,
    }));
    if (viewport.name === 'phone') assert.ok(table.scroll > table.client, JSON.stringify(table));
    assert.deepEqual(errors, []);
    await page.close();
  });
}

test("times are in the user's zone and named; statuses and reasons in words, never codes or ISO", {
  skip,
}, async () => {
  made ??= makeFixtures();
  const fixtures = await made;
  const page = await suite.browser.newPage({ viewport: { width: 390, height: 844 } });
  for (const path of [
    `/notify/users/${fixtures.user}/history`,
    `/notify/notifications/${fixtures.sms.notification}`,
  ]) {
    await page.goto(`${suite.server.url}${path}`);
    const text = (await page.locator('main').textContent()) ?? '';
    assert.doesNotMatch(text, /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/, `${path}: no ISO timestamps`);
    assert.match(
      text,
      /\d{1,2} \w{3} \d{4}, \d{2}:\d{2}:\d{2} \(Asia\/Kolkata\)/,
      `${path}: a time in Kolkata`,
    );
    // Kolkata is UTC+5:30: the minutes shown are the UTC minutes moved by half an hour.
    const shown = await page
      .locator('main time')
      .first()
      .evaluate((time) => ({
        iso: time.getAttribute('datetime') ?? '',
        text: time.textContent ?? '',
      }));
    const utc = new Date(shown.iso);
    const local = new Date(utc.getTime() + 330 * 60_000);
    const hhmm = `${String(local.getUTCHours()).padStart(2, '0')}:${String(local.getUTCMinutes()).padStart(2, '0')}`;
    assert.ok(shown.text.includes(hhmm), `${shown.text} shows ${hhmm}`);
  }
  await page.goto(`${suite.server.url}/notify/users/${fixtures.user}/history`);
  const history = page.locator(`[data-notification="${fixtures.sms.notification}"]`);
  assert.match(
    (await history.locator('[data-channel="sms"] [data-status]').textContent()) ?? '',
    /^(Sent|Delivered)$/,
  );
  assert.match(
    (await history.locator('[data-channel="sms"] .timeline').textContent()) ?? '',
    /Accepted[\s\S]*Sent/,
  );
  await page.goto(`${suite.server.url}/notify/dead-letters`);
  const row = page.locator('[data-dead-letters] tbody tr').first();
  assert.match((await row.textContent()) ?? '', /The template could not be rendered/);
  assert.doesNotMatch((await page.locator('main').textContent()) ?? '', /render_failed|PermanentError/);
  await screenshot(page, 'notify-history-phone-words');
  await page.close();
});

test('sending a dead letter again says what happened: failed again while the cause stays, sent once it is fixed', {
  skip,
}, async () => {
  made ??= makeFixtures();
  const fixtures = await made;
  const page = await suite.browser.newPage({ viewport: { width: 390, height: 844 } });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  const [id] = fixtures.failing;
  await page.goto(`${suite.server.url}/notify/dead-letters`);
  const row = page.locator('[data-dead-letters] tbody tr', { hasText: id });
  await row.getByRole('button', { name: 'Send again' }).click();
  await page.waitForURL(/redriven=/);
  // The API queued it; the page watches and then says what the worker made of it.
  const outcome = page.locator('[data-redrive-outcome]');
  await page.locator('[data-redrive-outcome].bad').waitFor({ timeout: 15_000 });
  // The queue files it as dead again a moment after the status says so; the page waits for it.
  const again = page.locator('tr.failed-again', { hasText: id });
  await again.waitFor({ timeout: 15_000 });
  assert.equal(
    await outcome.textContent(),
    'Sent again — it failed again: the template could not be rendered.',
  );
  assert.equal(await outcome.getAttribute('role'), 'alert');
  assert.equal(await page.locator('.message.ok').count(), 0, 'no success notice');
  assert.match((await again.textContent()) ?? '', /Failed again after the redrive/);
  await screenshot(page, 'notify-redrive-failed-again-phone');

  // The cause fixed (the French template removed): the same button sends it.
  await api('DELETE', '/api/templates/booking_confirmed.sms.fr', { 'x-admin-key': 'dev-admin-key' });
  await page.locator('tr.failed-again').getByRole('button', { name: 'Send again' }).click();
  await page.waitForURL(/redriven=/);
  await page.locator('[data-redrive-outcome].ok').waitFor({ timeout: 15_000 });
  assert.match((await outcome.textContent()) ?? '', /^Sent again: (sent|delivered)\.$/);
  await eventually(
    page,
    `${suite.server.url}/notify/notifications/${id}`,
    async () =>
      /Sent|Delivered/.test((await page.locator('[data-channel="sms"] [data-status]').textContent()) ?? ''),
    'the SMS sent',
  );
  await screenshot(page, 'notify-redrive-sent-phone');
  assert.deepEqual(errors, []);
  await page.close();
});
