import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { zstdDecompressSync } from 'node:zlib';
import { sql } from 'kysely';
import type { Browser, Page } from 'playwright-core';
import {
  axeViolations,
  browserSkipReason,
  freePort,
  launchBrowser,
  screenshot,
} from '../../../test/support/browser.ts';
import { seal } from '../../../test/support/envelope.ts';
import { createTestAdapters, type TestAdapters, testConfig } from '../../../test/support/platform.ts';
import { type App, buildApp } from '../../app.ts';
import type { Cache } from '../../platform/cache/index.ts';
import { createResponseSeal } from '../../platform/http/response-seal.ts';

/**
 * End-to-end encrypted pastes in Chromium, and the acceptance proof that the server never holds
 * the text or the key: pastes are made on the create form (with and without a password, burn
 * after read), with the README's Node one-liner, and through the API with an Idempotency-Key,
 * and read back on their pages; then every row of every table of the database (contents
 * decompressed, idempotent answers unsealed), every value ever written to the cache adapter, and
 * every log line (trace level, a line per request) are searched for each text, key and password.
 * The app runs in this process (on the real services when their URLs are set), so the test can
 * read its database, wrap its cache and capture its logger.
 */
const skip = browserSkipReason();
const VIEWPORTS = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
];

let app: App;
let adapters: TestAdapters;
let browser: Browser;
let origin: string;
let secret: string;
const logLines: string[] = [];
const cacheWrites: string[] = [];
/** What must never reach the server: every text, key and password used below. */
const secrets: { what: string; value: string }[] = [];
const consoleErrors: string[] = [];

/** The cache adapter, with every value written to it kept (as JSON) for the scan. */
function recording(cache: Cache): Cache {
  return {
    ...cache,
    kind: cache.kind,
    async set(key, value, ttlMs) {
      cacheWrites.push(`${key} ${JSON.stringify(value)}`);
      return cache.set(key, value, ttlMs);
    },
  };
}

before(async () => {
  if (skip) return;
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  const config = testConfig(
    { BASE_URL: origin, SERVICES: 'paste', LOG_LEVEL: 'trace', LOG_REQUESTS: 'true' },
    ['paste'],
  );
  secret = config.secret;
  adapters = await createTestAdapters(config);
  app = await buildApp(
    config,
    { ...adapters, cache: recording(adapters.cache) },
    {
      logger: {
        level: 'trace',
        stream: {
          write(line: string) {
            logLines.push(line);
          },
        },
      },
    },
  );
  await app.listen({ port, host: '127.0.0.1' });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await app?.close();
  await adapters?.close();
});

async function newPage(viewport: { width: number; height: number }): Promise<Page> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  page.on('pageerror', (error) => consoleErrors.push(error.message));
  page.on('console', (message) => {
    // The burned paste's 410 page, opened on purpose, is logged as a failed load.
    if (message.type() === 'error' && !/status of 410/.test(message.text()))
      consoleErrors.push(message.text());
  });
  return page;
}

/** Fills the create form, ticks "Encrypt", submits, and returns the link the page shows (with its #key). */
async function createOnForm(
  page: Page,
  text: string,
  options: { password?: string; burn?: boolean; expires?: string; shot?: string } = {},
): Promise<string> {
  await page.goto(`${origin}/`);
  await page.fill('textarea[name="content"]', text);
  if (options.password) await page.fill('input[name="password"]', options.password);
  if (options.expires) await page.selectOption('select[name="expires_in"]', options.expires);
  if (options.burn) await page.check('input[name="burn_after_read"]');
  await page.check('#encrypt');
  if (options.shot) await screenshot(page, `${options.shot}-form`);
  await page.click('form.paste-form button[type="submit"]');
  const link = page.locator('.encrypted-created .paste-url');
  await link.waitFor();
  const url = (await link.getAttribute('href')) ?? '';
  assert.match(url, new RegExp(`^${origin}/[0-9A-Za-z]{6}#[A-Za-z0-9_-]{43}$`));
  assert.match((await page.locator('.delete-token').textContent()) ?? '', /^dt_/);
  await assertNoOverflow(page);
  if (options.shot) await screenshot(page, `${options.shot}-created`);
  return url;
}

/** Nothing wider than the viewport (the link with its key, the decrypted text stays in its scroll box). */
async function assertNoOverflow(page: Page) {
  const widths = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  assert.ok(widths[0] <= widths[1], `the page is ${widths[0]}px wide in a ${widths[1]}px viewport`);
}

async function decrypted(page: Page): Promise<string> {
  await page.waitForSelector('.paste-encrypted[data-state="decrypted"]');
  return (await page.locator('#paste-code').textContent()) ?? '';
}

function remember(what: string, value: string) {
  secrets.push({ what, value });
}

function rememberLink(what: string, url: string) {
  const key = url.split('#')[1];
  remember(`${what} key (base64url)`, key);
  const bytes = Buffer.from(key, 'base64url');
  remember(`${what} key (base64)`, bytes.toString('base64').replace(/=+$/, ''));
  remember(`${what} key (hex)`, bytes.toString('hex'));
}

for (const viewport of VIEWPORTS) {
  test(`${viewport.name}: encrypt on the form, read it back decrypted on the page`, { skip }, async () => {
    const page = await newPage(viewport);
    const text = `Launch codes ${randomUUID()}\n\tindented line\nünïcödé ✓ 🚀\n`;
    remember(`${viewport.name} text`, text.split('\n')[0]);
    const url = await createOnForm(page, text, { shot: `paste-encrypted-${viewport.name}` });
    rememberLink(viewport.name, url);

    const shown = await page.goto(url);
    assert.equal(shown?.status(), 200);
    assert.equal(await decrypted(page), text);
    assert.match((await page.locator('.meta .language').textContent()) ?? '', /end-to-end encrypted/);
    assert.equal(await page.locator('.decrypt-form').isVisible(), false, 'no password asked for');
    assert.deepEqual(await axeViolations(page), []);
    await assertNoOverflow(page);
    await screenshot(page, `paste-encrypted-view-${viewport.name}`);

    // Without the key, or with another one, the page says why it cannot show the paste.
    const id = new URL(url).pathname;
    await page.goto(`${origin}${id}`);
    await page.waitForSelector('.paste-encrypted[data-state="failed"]');
    assert.match((await page.locator('.encrypted-status').textContent()) ?? '', /no key/);
    // Only the fragment differs: a new document, not a jump within this one.
    await page.goto('about:blank');
    await page.goto(`${origin}${id}#${Buffer.alloc(32, 7).toString('base64url')}`);
    await page.waitForSelector('.paste-encrypted[data-state="failed"]');
    assert.match((await page.locator('.encrypted-status').textContent()) ?? '', /does not open/);
    await page.context().close();
  });

  test(`${viewport.name}: with a password and burn after read`, { skip }, async () => {
    const page = await newPage(viewport);
    const text = `Vault combination ${randomUUID()}\n`;
    const password = `pw-${randomUUID()}`;
    remember(`${viewport.name} password text`, text.trim());
    remember(`${viewport.name} password`, password);
    const url = await createOnForm(page, text, { password, burn: true, expires: '600' });
    rememberLink(`${viewport.name} password`, url);

    // The link asks before burning; the button's page keeps the key.
    await page.goto(url);
    assert.match(
      (await page.locator('.paste-unlock .notice').textContent()) ?? '',
      /deleted after it is read once/,
    );
    await page.click('form.unlock-form button[type="submit"]');
    await page.waitForSelector('.paste-encrypted[data-state="password"]');
    assert.ok(page.url().endsWith(`#${url.split('#')[1]}`), 'the burned page still has the key');
    assert.match((await page.locator('.paste-view .notice').textContent()) ?? '', /burned/);
    await page.fill('.decrypt-form input[type="password"]', 'not it');
    await page.click('.decrypt-form button[type="submit"]');
    await page.waitForFunction(() =>
      document.querySelector('.encrypted-status')?.textContent?.includes('Wrong password'),
    );
    await screenshot(page, `paste-encrypted-password-${viewport.name}`);
    await page.fill('.decrypt-form input[type="password"]', password);
    await page.click('.decrypt-form button[type="submit"]');
    assert.equal(await decrypted(page), text);
    assert.equal(
      await page.locator('.decrypt-form').isVisible(),
      false,
      'the password form goes once it opened',
    );
    assert.deepEqual(await axeViolations(page), []);
    await screenshot(page, `paste-encrypted-password-view-${viewport.name}`);

    await page.goto('about:blank');
    const again = await page.goto(url);
    assert.equal(again?.status(), 410, 'burned');
    await page.context().close();
  });
}

test("the README's Node one-liner makes a paste the page decrypts", { skip }, async () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const snippet = /<!-- encrypted-snippet -->\n```sh\n(.+)\n```/.exec(readme)?.[1];
  assert.ok(snippet, 'the README has the snippet');
  const text = `from a shell ${randomUUID()}\nline two\n`;
  remember('snippet text', text.split('\n')[0]);
  const url = await new Promise<string>((resolve, reject) => {
    const child = execFile(
      'bash',
      ['-c', snippet.replace('< secret.txt', '')],
      { env: { ...process.env, PASTE_URL: origin } },
      (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout.trim()),
    );
    child.stdin?.end(text);
  });
  assert.match(url, new RegExp(`^${origin}/[0-9A-Za-z]{6}#[A-Za-z0-9_-]{43}$`));
  rememberLink('snippet', url);
  const page = await newPage(VIEWPORTS[0]);
  await page.goto(url);
  assert.equal(await decrypted(page), text);
  await page.context().close();
});

test('through the API with an Idempotency-Key, replayed', { skip }, async () => {
  const text = `api text ${randomUUID()}`;
  const password = `api-pw-${randomUUID()}`;
  const { envelope, key } = seal(text, { password, iterations: 100_000 });
  remember('api text', text);
  remember('api password', password);
  rememberLink('api', `x#${key}`);
  const send = () =>
    fetch(`${origin}/api/v1/paste`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': `e2e-${key.slice(0, 8)}` },
      body: JSON.stringify({ content: envelope, encryption: 'aes-256-gcm', expires_in: 3600 }),
    });
  const first = await send();
  assert.equal(first.status, 201);
  const replay = await send();
  assert.equal(replay.headers.get('idempotent-replayed'), 'true');
  const { url } = (await first.json()) as { url: string };
  const page = await newPage(VIEWPORTS[1]);
  await page.goto(`${url}#${key}`);
  await page.waitForSelector('.paste-encrypted[data-state="password"]');
  await page.fill('.decrypt-form input[type="password"]', password);
  await page.click('.decrypt-form button[type="submit"]');
  assert.equal(await decrypted(page), text);
  await page.context().close();
});

/** Every row of every table of the app's schema as text: bytes as hex, base64 and UTF-8, contents decompressed, idempotent answers unsealed. */
async function databaseText(): Promise<string[]> {
  const db = adapters.database.db;
  const schema = adapters.database.schema;
  const { rows: tables } = await sql<{ table_name: string }>`
    select table_name from information_schema.tables
    where table_schema = ${schema} and table_type = 'BASE TABLE'`.execute(db);
  assert.ok(tables.some((table) => table.table_name === 'pastes'));
  const texts: string[] = [];
  const seal = createResponseSeal(secret);
  for (const { table_name } of tables) {
    const { rows } = await sql<
      Record<string, unknown>
    >`select * from ${sql.table(`${schema}.${table_name}`)}`.execute(db);
    for (const row of rows) {
      for (const [column, value] of Object.entries(row)) {
        if (value instanceof Uint8Array) {
          const bytes = Buffer.from(value);
          texts.push(bytes.toString('hex'), bytes.toString('base64'), bytes.toString('utf8'));
          if (table_name === 'paste_contents' && column === 'data') {
            texts.push(zstdDecompressSync(bytes).toString('utf8'));
          }
        } else {
          texts.push(
            `${table_name}.${column} ${JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`,
          );
        }
      }
      if (table_name === 'idempotency_keys' && typeof row.response_body === 'string') {
        const opened = seal.open(row.response_body, String(row.scope), String(row.key));
        if (opened) texts.push(JSON.stringify(opened));
      }
    }
  }
  return texts;
}

test('the server never held a text, a key or a password: database, cache, logs, idempotency store', {
  skip,
}, async () => {
  assert.ok(secrets.length >= 20, `the tests above ran (${secrets.length} secrets)`);
  // A control: a plain paste's text is found by the same scan, so the scan can see.
  const control = `plain control ${randomUUID()}`;
  const plain = await fetch(`${origin}/api/v1/paste`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: JSON.stringify({ content: control }),
  });
  assert.equal(plain.status, 201);

  const stored = await databaseText();
  const { rows: idempotent } = await sql<{ n: string }>`
    select count(*) as n from idempotency_keys where scope like 'paste.create:%'`.execute(
    adapters.database.db,
  );
  assert.ok(Number(idempotent[0].n) >= 4, 'the page and the API creates went through the idempotency store');
  const { rows: encrypted } = await sql<{ n: string }>`
    select count(*) as n from pastes where encryption = 'aes-256-gcm'`.execute(adapters.database.db);
  assert.ok(Number(encrypted[0].n) >= 6);
  assert.ok(
    stored.some((text) => text.includes(control)),
    'the control is found in the database',
  );
  assert.ok(
    cacheWrites.some((text) => text.includes(control)),
    'the control is found in the cache',
  );
  assert.ok(logLines.length > 50, 'the logs were captured');
  assert.ok(
    logLines.some((line) => line.includes('/api/v1/paste')),
    'request lines are logged',
  );

  const found: string[] = [];
  for (const { what, value } of secrets) {
    if (stored.some((text) => text.includes(value))) found.push(`${what} in the database`);
    if (cacheWrites.some((text) => text.includes(value))) found.push(`${what} in the cache`);
    if (logLines.some((line) => line.includes(value))) found.push(`${what} in the logs`);
  }
  assert.deepEqual(found, []);
  assert.deepEqual(consoleErrors, []);
});
