import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { DEV_KEYS } from '../platform/auth/keys.ts';
import {
  browserSkipReason,
  launchBrowser,
  type RunningServer,
  screenshot,
  startServer,
} from '../platform/testing-browser.ts';

/**
 * The whole path in a real server process: a notification sent through the JSON API is
 * accepted, queued, rendered by a worker, handed to the dev inbox provider and shown on the
 * inbox page; its timeline page shows it sent.
 */
const skip = browserSkipReason();
let server: RunningServer;
let browser: Browser;

before(async () => {
  if (skip) return;
  server = await startServer({ SERVICES: 'notify' });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

/** The calling service's key (the development one, every scope). */
const json = { 'content-type': 'application/json', 'x-api-key': DEV_KEYS.service };

test('a notification sent through the API appears in the dev inbox and its timeline', { skip }, async () => {
  const user = `flow-${Date.now()}`;
  const preferences = await fetch(`${server.url}/api/users/${user}/notification-preferences`, {
    method: 'PATCH',
    headers: json,
    body: JSON.stringify({ email: 'ana@example.test', timezone: 'Europe/London' }),
  });
  assert.equal(preferences.status, 200, await preferences.clone().text());
  const sent = await fetch(`${server.url}/api/notifications`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({
      user_id: user,
      type: 'booking_reminder',
      channels: ['email'],
      data: {
        booking_id: 'BK-FLOW-1',
        movie_title: 'Paddington in Peru',
        theater_name: 'Prince Charles Cinema',
        show_time: '2026-12-24T18:00:00Z',
        hours_before: 24,
      },
    }),
  });
  assert.equal(sent.status, 202, await sent.clone().text());
  const { id } = (await sent.json()) as { id: string };

  const errors: string[] = [];
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  page.on('pageerror', (error) => errors.push(error.message));
  // Development mode signs the admin in by itself, under its banner.
  await page.goto(`${server.url}/notify/inbox`);
  await page.waitForURL(/\/notify\/inbox/);
  assert.match((await page.locator('.dev-banner').textContent()) ?? '', /Development mode/);
  // The worker may still be on it: the page offers new mail without a reload; reload to be sure.
  const message = page.locator('[data-messages] a', { hasText: /Paddington/ });
  for (let i = 0; i < 50 && (await message.count()) === 0; i++) {
    await page.waitForTimeout(200);
    await page.reload();
  }
  await message.first().click();
  await page.waitForURL(/message=/);
  assert.match((await page.locator('[data-text]').textContent()) ?? '', /BK-FLOW-1/);
  await screenshot(page, 'notify-flow-inbox');

  await page.goto(`${server.url}/notify/notifications/${id}`);
  const email = page.locator('[data-channel="email"]');
  assert.match((await email.locator('[data-status]').textContent()) ?? '', /^(sent|delivered)$/);
  await screenshot(page, 'notify-flow-timeline');
  assert.deepEqual(errors, []);
});
