import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { browserSuite, screenshot, tabTo } from '../test/support/browser.ts';

/**
 * One journey per service with the keyboard alone (Tab, Shift+Tab, Enter, Space, arrow keys;
 * no clicks): each control reached shows its focus ring (tabTo checks it).
 */
const suite = browserSuite();
const { skip } = suite;

async function open(path: string, width = 1280): Promise<{ page: Page; errors: string[] }> {
  const page = await suite.browser.newPage({ viewport: { width, height: 800 } });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  const response = await page.goto(`${suite.server.url}${path}`);
  assert.equal(response?.status(), 200, path);
  return { page, errors };
}

test('paste by keyboard: skip link, write, create, open it', { skip }, async () => {
  const { page, errors } = await open('/');
  await tabTo(page, 'a.skip-link');
  assert.ok(await page.locator('a.skip-link').isVisible(), 'the skip link shows when focused');
  await page.keyboard.press('Enter');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'main');
  await tabTo(page, 'textarea[name="content"]');
  await page.keyboard.type('typed without a mouse\n');
  await tabTo(page, 'select[name="expires_in"]');
  await tabTo(page, 'textarea[name="content"]', { backwards: true });
  await tabTo(page, 'button[type="submit"]');
  await page.keyboard.press('Enter');
  await page.locator('.paste-url').waitFor();
  await tabTo(page, 'a.paste-url');
  await screenshot(page, 'keyboard-paste-created');
  await page.keyboard.press('Enter');
  await page.waitForURL(/\/[0-9A-Za-z]{6}$/);
  assert.match((await page.textContent('#paste-code')) ?? '', /typed without a mouse/);
  assert.deepEqual(errors, []);
});

test('booking by keyboard: find a movie, open a show, pick two seats on the map, hold them', {
  skip,
}, async () => {
  const { page, errors } = await open('/movies');
  await tabTo(page, '#q');
  await page.keyboard.type('orbt of');
  await page.locator('#suggestions li').first().waitFor();
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  await page.waitForURL(/\/movies\/[0-9a-f-]{36}/);
  await tabTo(page, 'a.slot:not(.hot)');
  await page.keyboard.press('Enter');
  await page.waitForURL(/\/shows\/[0-9a-f-]{36}$/);
  await page.locator('#seatmap button.seat').first().waitFor();
  // The map is one tab stop: Tab lands on a seat, arrows move, Space and Enter pick.
  await tabTo(page, '#seatmap button.seat');
  const focused = () => page.evaluate(() => (document.activeElement as HTMLElement).dataset.seat);
  const first = await focused();
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  const a = await focused();
  assert.notEqual(a, first, 'the arrows moved');
  await page.keyboard.press('Space');
  assert.equal(await page.locator(`#seatmap [data-seat="${a}"]`).getAttribute('aria-pressed'), 'true');
  assert.equal(await focused(), a, 'focus stays on the seat after the map redraws');
  await page.keyboard.press('ArrowRight');
  const b = await focused();
  await page.keyboard.press('Enter');
  assert.equal(await page.locator(`#seatmap [data-seat="${b}"]`).getAttribute('aria-pressed'), 'true');
  assert.equal(await page.textContent('#selected-seats'), `${a}, ${b}`);
  const name = (await page.locator(`#seatmap [data-seat="${b}"]`).getAttribute('aria-label')) ?? '';
  assert.match(name, /^Row [A-Z]+, seat \d+, \w[\w ]*, your pick, \d+\.\d\d$/);
  // Tab leaves the map in one press (no walk through every seat) and reaches the hold button.
  await tabTo(page, '#hold', { max: 3 });
  await screenshot(page, 'keyboard-seats-picked');
  await page.keyboard.press('Enter');
  await page.locator('#checkout').waitFor({ state: 'visible' });
  assert.equal(
    await page.evaluate(() => document.activeElement?.id),
    'card',
    'focus moves to the card number',
  );
  assert.match((await page.textContent('#held-seats')) ?? '', new RegExp(`${a}, ${b}`));
  assert.deepEqual(errors, []);
});

test('parking by keyboard: the entry panel issues a ticket', { skip }, async () => {
  const { page, errors } = await open('/parking/entry');
  await tabTo(page, '#plate');
  await page.keyboard.type('KB 42');
  await tabTo(page, 'input[name="vehicleType"]');
  const checked = () => page.locator('input[name="vehicleType"]:checked').getAttribute('value');
  const before = await checked();
  await page.keyboard.press('ArrowRight');
  const chosen = await checked();
  assert.notEqual(chosen, before, 'arrow keys choose another vehicle');
  await page.keyboard.press('ArrowLeft');
  assert.equal(await checked(), before);
  await tabTo(page, '[data-entry-form] button[type="submit"]');
  await page.keyboard.press('Enter');
  await page.locator('[data-result]:not([hidden]) h2').waitFor();
  assert.equal(await page.locator('[data-result] h2').textContent(), 'Your ticket — the gate opens');
  await screenshot(page, 'keyboard-parking-ticket');
  assert.deepEqual(errors, []);
});

test('notifications by keyboard: open the inbox, a message and its timeline', { skip }, async () => {
  await fetch(`${suite.server.url}/api/users/keyboard-user/notification-preferences`, {
    method: 'PATCH',
    headers: { 'x-api-key': 'dev-service-key', 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'kb@example.test' }),
  });
  const sent = await fetch(`${suite.server.url}/api/notifications`, {
    method: 'POST',
    headers: { 'x-api-key': 'dev-service-key', 'content-type': 'application/json' },
    body: JSON.stringify({
      user_id: 'keyboard-user',
      type: 'booking_confirmed',
      channels: ['email'],
      data: {
        booking_id: 'BK-7',
        movie_title: 'Paper Kites',
        theater_name: 'Marina Talkies',
        show_time: '2026-03-01T19:30:00Z',
        seats: ['C7'],
        total_paid: '12.00',
        qr_code: 'v1.eyJiIjoiQkstNyJ9.c2lnbmF0dXJl',
      },
    }),
  });
  assert.equal(sent.status, 202);
  const { id } = (await sent.json()) as { id: string };
  const { page, errors } = await open('/notify');
  await tabTo(page, 'a[href="/notify/inbox"]');
  await page.keyboard.press('Enter');
  await page.waitForURL(/\/notify\/inbox$/);
  for (let i = 0; i < 50 && (await page.locator('[data-messages] a').count()) === 0; i++) {
    await page.waitForTimeout(200);
    await page.reload();
  }
  await tabTo(page, '[data-messages] a');
  await page.keyboard.press('Enter');
  await page.waitForURL(/message=/);
  await tabTo(page, '[data-message-view] a[href^="/notify/notifications/"]');
  await page.keyboard.press('Enter');
  await page.waitForURL(/\/notify\/notifications\/[^/]+$/);
  await page.locator('[data-channel="email"] [data-status]').waitFor();
  await screenshot(page, 'keyboard-notify-timeline');
  assert.ok(id);
  assert.deepEqual(errors, []);
});
