import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertFits, browserSuite, screenshot } from '../../../test/support/browser.ts';

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

const VIEWPORTS = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
];

async function api<T>(path: string, init: RequestInit = {}): Promise<T> {
  const response = await fetch(`${suite.server.url}${path}`, init);
  const text = await response.text();
  assert.ok(response.ok, `${path}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

for (const viewport of VIEWPORTS) {
  test(`at ${viewport.width}×${viewport.height}: Ctrl+Enter creates, a reload creates nothing, the delete button deletes, nothing overflows`, {
    skip,
  }, async () => {
    const user = await api<{ api_key: string }>('/api/v1/users', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: `browser-${viewport.name}-${Date.now()}@example.test` }),
    });
    const mine = async () =>
      (
        await api<{ pastes: { short_url: string }[] }>('/api/v1/users/me/pastes', {
          headers: { authorization: `Bearer ${user.api_key}` },
        })
      ).pastes;
    const context = await suite.browser.newContext({
      viewport: { width: viewport.width, height: viewport.height },
    });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));

    await page.goto(`${suite.server.url}/paste`);
    await page.fill('input[name="api_key"]', user.api_key);
    await page.fill('textarea[name="content"]', 'sent with the keyboard\n');
    await assertFits(page, `paste-form@${viewport.name}`);
    await screenshot(page, `paste-form-filled-${viewport.name}`);
    // Ctrl+Enter from the text area sends the form (no click).
    await Promise.all([
      page.waitForURL(/\/[0-9A-Za-z]{6}\/created$/),
      page.press('textarea', 'Control+Enter'),
    ]);
    const createdUrl = page.url();
    assert.match((await page.locator('.delete-token').textContent()) ?? '', /^dt_/);
    await assertFits(page, `paste-created@${viewport.name}`);
    await screenshot(page, `paste-created-${viewport.name}`);
    assert.equal((await mine()).length, 1);

    // A reload (twice) shows the same page and creates nothing: the answer to the POST was a redirect.
    for (let i = 0; i < 2; i++) {
      const reloaded = await page.reload();
      assert.equal(reloaded?.status(), 200);
      assert.equal(reloaded?.request().method(), 'GET');
      assert.equal(await page.locator('h1').textContent(), 'Paste created');
    }
    assert.equal((await mine()).length, 1, 'still one paste after two reloads');
    const shortUrl = (await mine())[0].short_url;
    assert.equal(createdUrl, `${suite.server.url}/${shortUrl}/created`);

    // ⌘+Enter does the same for Mac users.
    await page.goto(`${suite.server.url}/paste`);
    await page.fill('input[name="api_key"]', user.api_key);
    await page.fill('textarea[name="content"]', 'sent with cmd+enter\n');
    await Promise.all([page.waitForURL(/\/created$/), page.press('textarea', 'Meta+Enter')]);
    assert.equal((await mine()).length, 2);

    // The delete button of "Paste created" deletes that paste; its link then says so.
    await Promise.all([page.waitForLoadState('load'), page.click('form.delete-form button')]);
    assert.equal(await page.locator('h1').textContent(), 'Paste deleted');
    await assertFits(page, `paste-deleted@${viewport.name}`);
    await screenshot(page, `paste-deleted-${viewport.name}`);
    assert.equal((await mine()).length, 1);

    // The paste page's delete form: the owner's API key works there.
    await page.goto(`${suite.server.url}/${shortUrl}`);
    await page.click('details.delete summary');
    await assertFits(page, `paste-view-delete-open@${viewport.name}`);
    await screenshot(page, `paste-view-delete-${viewport.name}`);
    await page.fill('details.delete input[name="token"]', user.api_key);
    await Promise.all([page.waitForLoadState('load'), page.click('details.delete button')]);
    assert.equal(await page.locator('h1').textContent(), 'Paste deleted');
    assert.equal((await mine()).length, 0);
    const gone = await page.goto(`${suite.server.url}/${shortUrl}`);
    assert.equal(gone?.status(), 410);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test(`at ${viewport.width}×${viewport.height}: Raw and Download of a password paste after unlocking it`, {
    skip,
  }, async () => {
    const text =
      'line one\nline two with a very long word: supercalifragilisticexpialidocious-and-then-some-more\n';
    const { short_url: shortUrl } = await api<{ short_url: string }>('/api/v1/paste', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ content: text, password: 'open sesame' }),
    });
    const context = await suite.browser.newContext({
      viewport: { width: viewport.width, height: viewport.height },
      acceptDownloads: true,
    });
    const page = await context.newPage();
    await page.goto(`${suite.server.url}/${shortUrl}`);
    await assertFits(page, `paste-unlock@${viewport.name}`);
    await page.fill('input[name="password"]', 'open sesame');
    await Promise.all([
      page.waitForURL(`${suite.server.url}/${shortUrl}`),
      page.click('button[type="submit"]'),
    ]);
    await page.waitForSelector('#paste-code');
    assert.ok(!page.url().includes('sesame'), 'the password is in no URL');
    await assertFits(page, `paste-view-unlocked@${viewport.name}`);
    await screenshot(page, `paste-unlocked-${viewport.name}`);
    // A reload keeps it open (the unlock cookie), without asking again or resending the form.
    const reloaded = await page.reload();
    assert.equal(reloaded?.status(), 200);
    await page.waitForSelector('#paste-code');

    const [download] = await Promise.all([page.waitForEvent('download'), page.click('a.download')]);
    assert.equal(download.suggestedFilename(), `${shortUrl}.txt`);
    const { readFile } = await import('node:fs/promises');
    assert.equal(await readFile((await download.path()) ?? '', 'utf8'), text);

    const raw = await page.goto(`${suite.server.url}/${shortUrl}/raw`);
    assert.equal(raw?.status(), 200);
    assert.equal(await raw?.text(), text);
    assert.ok(!page.url().includes('sesame'));
    // Another browser (no cookie) is asked for the password again.
    const stranger = await fetch(`${suite.server.url}/${shortUrl}/raw`);
    assert.equal(stranger.status, 401);
    await context.close();
  });
}

test('/favicon.ico is an image, not a "Paste not found" page', { skip }, async () => {
  const page = await suite.browser.newPage();
  const icon = await page.request.get(`${suite.server.url}/favicon.ico`);
  assert.equal(icon.status(), 200);
  assert.match(icon.headers()['content-type'] ?? '', /^image\//);
  await page.close();
});
