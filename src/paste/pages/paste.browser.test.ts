import assert from 'node:assert/strict';
import { test } from 'node:test';
import { browserSuite, screenshot } from '../../../test/support/browser.ts';

const suite = // TEST_CLOCK lets the test move the server's clock past the paste's expiry instead of waiting.
  browserSuite({ TEST_CLOCK: '1' });
const { skip } = suite;

const CODE = `interface Order {
  id: string;
  total: number;
}

export function largest(orders: Order[]): Order | undefined {
  // the order with the highest total
  return orders.reduce<Order | undefined>((best, order) => (!best || order.total > best.total ? order : best), undefined);
}
`;

test('create a paste on the page, open it highlighted, copy it, and see it expire', { skip }, async () => {
  const context = await suite.browser.newContext({ permissions: ['clipboard-read', 'clipboard-write'] });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));

  await page.goto(`${suite.server.url}/`);
  assert.equal(await page.locator('h1').textContent(), 'New paste');
  await page.fill('textarea[name="content"]', CODE);
  await page.selectOption('select[name="syntax"]', 'typescript');
  await page.selectOption('select[name="expires_in"]', '600');
  await screenshot(page, 'paste-form');
  await page.click('button[type="submit"]');

  await page.waitForSelector('.paste-url');
  const url = (await page.locator('.paste-url').getAttribute('href')) ?? '';
  assert.match(url, new RegExp(`^${suite.server.url}/[0-9A-Za-z]{6}$`));
  assert.match((await page.locator('.delete-token').textContent()) ?? '', /^dt_/);
  await screenshot(page, 'paste-created');

  const opened = await page.goto(url);
  assert.equal(opened?.status(), 200);
  assert.ok((await page.locator('#paste-code .hljs-keyword').count()) > 3, 'keywords are highlighted');
  assert.equal(
    await page.locator('#paste-code .hljs-comment').first().textContent(),
    '// the order with the highest total',
  );
  assert.equal((await page.locator('.gutter').textContent())?.split('\n').length, 9, 'one number per line');
  assert.match((await page.locator('.meta .language').textContent()) ?? '', /typescript/);
  await screenshot(page, 'paste-view');

  await page.click('button.copy');
  await page.waitForFunction(() => document.querySelector('button.copy')?.textContent === 'Copied');
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), CODE);
  const raw = await page.request.get(`${url}/raw`);
  assert.equal(raw.status(), 200);
  assert.equal(await raw.text(), CODE);

  const moved = await fetch(`${suite.server.url}/test/clock`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ advance_ms: 601_000 }),
  });
  assert.equal(moved.status, 200);
  const expired = await page.goto(url);
  assert.equal(expired?.status(), 410);
  assert.equal(await page.locator('h1').textContent(), 'Paste expired');
  await screenshot(page, 'paste-expired');

  const missing = await page.goto(`${suite.server.url}/zzzzzz`);
  assert.equal(missing?.status(), 404);
  assert.equal(await page.locator('h1').textContent(), 'Paste not found');
  assert.deepEqual(errors, []);
  await context.close();
});

test('a password-protected paste asks for the password in the browser', { skip }, async () => {
  const created = await fetch(`${suite.server.url}/api/v1/paste`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ content: 'SELECT secret FROM vault;\n', syntax: 'sql', password: 'open sesame' }),
  });
  const { url } = (await created.json()) as { url: string };
  const page = await suite.browser.newPage();
  const asked = await page.goto(url);
  assert.equal(asked?.status(), 401);
  await page.fill('input[name="password"]', 'wrong');
  await page.click('button[type="submit"]');
  assert.equal(await page.locator('.error').textContent(), 'Wrong password');
  await page.fill('input[name="password"]', 'open sesame');
  await page.click('button[type="submit"]');
  await page.waitForSelector('#paste-code');
  assert.match((await page.locator('#paste-code').textContent()) ?? '', /SELECT secret FROM vault;/);
  assert.ok((await page.locator('#paste-code .hljs-keyword').count()) >= 2);
  await screenshot(page, 'paste-password');
  await page.close();
});
