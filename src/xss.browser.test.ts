import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import {
  browserSkipReason,
  launchBrowser,
  type RunningServer,
  screenshot,
  startServer,
} from '../test/support/browser.ts';

/**
 * Hostile text shown on pages stays text: a paste and a movie title made of script, event
 * handlers and markup are opened in Chromium, and nothing of it runs. Escaping is the first
 * line; the pages' Content-Security-Policy (no inline script) is the second.
 */
const skip = browserSkipReason();
const ADMIN = { 'content-type': 'application/json', 'x-admin-key': 'dev-admin-key' };
const HOSTILE = [
  '<script>window.__pwned = "script"</script>',
  '<img src=x onerror="window.__pwned = \'img\'">',
  '"><svg onload="window.__pwned = \'svg\'">',
  "javascript:window.__pwned='link'",
].join('\n');
let server: RunningServer;
let browser: Browser;

before(async () => {
  if (skip) return;
  server = await startServer({ SERVICES: 'paste,booking', BOOKING_DEMO: 'false' });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

async function visit(path: string): Promise<Page> {
  const page = await browser.newPage();
  const response = await page.goto(`${server.url}${path}`);
  assert.equal(response?.status(), 200, path);
  assert.match(response?.headers()['content-security-policy'] ?? '', /script-src 'self'/, path);
  await page.waitForTimeout(300);
  assert.equal(
    await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned),
    undefined,
    path,
  );
  return page;
}

test('a paste made of script and markup is shown as text and runs nothing', { skip }, async () => {
  const response = await fetch(`${server.url}/api/v1/paste`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ content: HOSTILE, syntax: 'html' }),
  });
  assert.equal(response.status, 201);
  const { short_url: id } = (await response.json()) as { short_url: string };
  const page = await visit(`/${id}`);
  const shown = (await page.locator('body').textContent()) ?? '';
  assert.ok(shown.includes('<script>window.__pwned = "script"</script>'), 'the text is shown as written');
  assert.equal(await page.locator('img[src="x"], svg[onload]').count(), 0);
  await screenshot(page, 'xss-paste');
});

test('a movie titled with markup is escaped on the catalogue pages', { skip }, async () => {
  const title = '<img src=x onerror="window.__pwned=\'movie\'">Heist';
  const movie = await fetch(`${server.url}/api/v1/admin/movies`, {
    method: 'POST',
    headers: ADMIN,
    body: JSON.stringify({
      title,
      duration_minutes: 100,
      language: 'English',
      genres: ['Drama'],
      release_date: '2025-01-01',
    }),
  });
  assert.equal(movie.status, 201, await movie.clone().text());
  const { movie_id: movieId } = (await movie.json()) as { movie_id: string };
  const page = await visit(`/movies/${movieId}`);
  assert.ok((await page.locator('h1').textContent())?.includes('<img src=x'), 'the title is shown as text');
  assert.equal(await page.locator('img[src="x"]').count(), 0);
  await screenshot(page, 'xss-movie');
});
