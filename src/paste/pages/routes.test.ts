import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createPaste, freshIp } from '../../../test/support/paste.ts';
import { createTestApp, type TestApp } from '../../../test/support/platform.ts';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

/** What a browser's Accept says when it submits a form; without text/html the answer is the URL as text. */
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const page = (url: string) => t.app.inject({ method: 'GET', url, headers: { accept: BROWSER_ACCEPT } });
const form = (url: string, fields: Record<string, string>, remoteAddress = freshIp()) =>
  t.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: BROWSER_ACCEPT },
    payload: new URLSearchParams(fields).toString(),
    remoteAddress,
  });

/** The cookies an answer set, as the browser sends them back (`name=value; …`). */
function cookiesOf(response: { headers: Record<string, unknown> }, jar: Record<string, string> = {}) {
  for (const line of [response.headers['set-cookie'] ?? []].flat()) {
    const [pair] = String(line).split(';');
    const index = pair.indexOf('=');
    jar[pair.slice(0, index)] = pair.slice(index + 1);
  }
  return jar;
}
const cookieHeader = (jar: Record<string, string>) =>
  Object.entries(jar)
    .filter(([, value]) => value !== '')
    .map(([name, value]) => `${name}=${value}`)
    .join('; ');

/** What a browser does with a 303: GET its Location with the cookies the answer set. */
function follow(response: Awaited<ReturnType<typeof form>>, headers: Record<string, string> = {}) {
  assert.equal(response.statusCode, 303, response.body);
  return t.app.inject({
    method: 'GET',
    url: String(response.headers.location),
    headers: { accept: BROWSER_ACCEPT, cookie: cookieHeader(cookiesOf(response)), ...headers },
  });
}

const TYPESCRIPT = `export function greet(name: string): string {
  // say hello
  return \`Hello, \${name}!\`;
}
`;

describe('the create form', () => {
  test('/ is the create form and links every service and the docs; /paste is the same form', async () => {
    const home = await page('/');
    assert.equal(home.statusCode, 200);
    assert.match(home.body, /<title>Home · Four Services<\/title>/);
    assert.match(home.body, /<form method="post" action="\/"/);
    const main = home.body.slice(home.body.indexOf('<main'));
    for (const href of ['/paste', '/notify', '/movies', '/parking', '/docs']) {
      assert.ok(main.includes(`href="${href}"`), `home links ${href}`);
    }
    for (const field of ['content', 'syntax', 'expires_in', 'password', 'burn_after_read', 'is_private']) {
      assert.match(home.body, new RegExp(`name="${field}"`), field);
    }
    assert.match(home.body, /<option value="typescript">typescript<\/option>/);
    const paste = await page('/paste');
    assert.equal(paste.statusCode, 200);
    assert.match(paste.body, /<title>New paste · Four Services<\/title>/);
  });

  test('submitting it creates the paste and shows its link and delete token', async () => {
    const posted = await form('/', { content: TYPESCRIPT, syntax: 'typescript', expires_in: '3600' });
    assert.match(String(posted.headers.location), /^\/[0-9A-Za-z]{6}\/created$/);
    assert.doesNotMatch(String(posted.headers.location), /dt_/, 'no delete token in the URL');
    const response = await follow(posted);
    assert.equal(response.statusCode, 200, response.body);
    const link = /class="paste-url" href="http:\/\/localhost:3000\/([0-9A-Za-z]{6})"/.exec(response.body);
    assert.ok(link, response.body);
    assert.match(response.body, /class="delete-token">dt_[\w-]+</);
    const api = (await t.app.inject({ method: 'GET', url: `/api/v1/paste/${link[1]}` })).json();
    assert.equal(api.content, TYPESCRIPT);
    assert.equal(api.syntax, 'typescript');
  });

  test('mistakes come back as the form with a message and the text kept', async () => {
    const empty = await form('/', { content: '' });
    assert.equal(empty.statusCode, 400);
    assert.match(empty.body, /role="alert">Write or paste some text first/);
    const privateAnon = await form('/', { content: 'keep me', is_private: 'on' });
    assert.equal(privateAnon.statusCode, 400);
    assert.match(privateAnon.body, /is_private needs an API key/);
    assert.match(privateAnon.body, />keep me<\/textarea>/);
    const badKey = await form('/', { content: 'x', api_key: 'pk_nope' });
    assert.equal(badKey.statusCode, 401);
  });

  test('a refused form costs nothing from the address’s create limit (30 per 10 minutes)', async () => {
    const ip = freshIp();
    for (let i = 0; i < 30; i++) {
      const refused = await form('/', i % 2 ? { content: '' } : { content: 'x', expires_in: 'soon' }, ip);
      assert.equal(refused.statusCode, 400);
    }
    const created = await form('/', { content: 'after thirty mistakes' }, ip);
    assert.equal(created.statusCode, 303, created.body);
    assert.match(String(created.headers.ratelimit), /r=29/);
  });
});

describe('the paste page', () => {
  test('opens behind HTTP Basic auth too: an Authorization that is no paste key is no credential', async () => {
    const { short_url } = await createPaste(t.app, { content: 'behind a proxy', password: 'pw' });
    const headers = { authorization: 'Basic dXNlcjpwYXNz' };
    const unlock = await t.app.inject({ method: 'GET', url: `/${short_url}`, headers });
    assert.equal(unlock.statusCode, 401, 'the password form, not a sign-in redirect');
    assert.match(unlock.body, /password/i);
    const read = await t.app.inject({
      method: 'POST',
      url: `/${short_url}`,
      headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'password=pw',
    });
    const shown = await follow(read, headers);
    assert.equal(shown.statusCode, 200);
    assert.match(shown.body, /behind a proxy/);
  });

  test('is highlighted server-side, with line numbers, copy, raw and download, and no inline script', async () => {
    const { short_url } = await createPaste(t.app, { content: TYPESCRIPT, syntax: 'ts' });
    const view = await page(`/${short_url}`);
    assert.equal(view.statusCode, 200);
    assert.match(view.body, /<span class="hljs-keyword">export<\/span>/);
    assert.match(view.body, /<span class="hljs-comment">\/\/ say hello<\/span>/);
    assert.match(view.body, /class="gutter" aria-hidden="true">1\n2\n3\n4<\/pre>/);
    assert.match(view.body, /data-copy-url="\/[0-9A-Za-z]{6}\/raw"/);
    assert.match(view.body, new RegExp(`href="/${short_url}/raw"`));
    assert.match(view.body, new RegExp(`href="/${short_url}/raw\\?download=1"`));
    assert.match(view.body, /<script type="module" src="\/static\/paste\/paste.js"><\/script>/);
    assert.doesNotMatch(view.body, /<script>(?!<\/script>)/);
    assert.match(String(view.headers['content-security-policy']), /script-src 'self'/);
    const script = await page('/static/paste/paste.js');
    assert.equal(script.statusCode, 200);
  });

  test('guesses the language when none was given', async () => {
    const code = [
      'import sys',
      'from pathlib import Path',
      '',
      'class Reader:',
      '    def __init__(self, path: Path) -> None:',
      '        self.path = path',
      '',
      '    def lines(self):',
      '        with open(self.path) as handle:',
      '            for line in handle:',
      '                yield line.rstrip()',
      '',
      'if __name__ == "__main__":',
      '    for line in Reader(Path(sys.argv[1])).lines():',
      '        print(line)',
      '',
    ].join('\n');
    const { short_url } = await createPaste(t.app, { content: code });
    const view = await page(`/${short_url}`);
    assert.match(view.body, /python \(detected\)/);
    assert.match(view.body, /hljs-keyword/);
  });

  test('escapes what it shows: a paste cannot inject markup', async () => {
    const { short_url } = await createPaste(t.app, {
      content: '<script>alert(1)</script><img src=x onerror=alert(2)>',
    });
    const view = await page(`/${short_url}`);
    assert.doesNotMatch(view.body, /<script>alert/);
    assert.doesNotMatch(view.body, /<img src=x/);
    assert.match(view.body, /&lt;/);
  });

  test('a very large paste is shown as plain text (highlighting would take seconds)', async () => {
    const big = 'const value = 1; // a line of code\n'.repeat(8000);
    const { short_url } = await createPaste(t.app, { content: big, syntax: 'javascript' });
    const view = await page(`/${short_url}`);
    assert.equal(view.statusCode, 200);
    assert.doesNotMatch(view.body, /hljs-keyword/);
    assert.match(view.body, /plain text/);
    assert.match(view.body, /\n8000<\/pre>/);
  });

  test('missing, malformed, expired and private cases have their own pages', async () => {
    const missing = await page('/zzzzzz');
    assert.equal(missing.statusCode, 404);
    assert.match(String(missing.headers['content-type']), /text\/html/);
    assert.match(missing.body, /Paste not found/);
    const malformed = await page('/not-an-id');
    assert.equal(malformed.statusCode, 404);
    assert.match(malformed.body, /Paste not found/);
    const short = await createPaste(t.app, { content: 'brief', expires_in: 60 });
    t.clock.advance(61_000);
    const expired = await page(`/${short.short_url}`);
    assert.equal(expired.statusCode, 410);
    assert.match(expired.body, /Paste expired/);
  });

  test('a password-protected paste asks for its password; a wrong one says so', async () => {
    const { short_url } = await createPaste(t.app, { content: 'hidden text', password: 's3cret' });
    const ask = await page(`/${short_url}`);
    assert.equal(ask.statusCode, 401);
    assert.match(ask.body, /type="password" name="password"/);
    assert.doesNotMatch(ask.body, /hidden text/);
    const wrong = await form(`/${short_url}`, { password: 'nope' });
    assert.equal(wrong.statusCode, 401);
    assert.match(wrong.body, /role="alert">Wrong password/);
    const right = await form(`/${short_url}`, { password: 's3cret' });
    assert.equal(right.headers.location, `/${short_url}`);
    const shown = await follow(right);
    assert.equal(shown.statusCode, 200);
    assert.match(shown.body, /hidden text/);
  });

  test('a burn-after-read paste is not burned by opening the link; the button shows and burns it', async () => {
    const { short_url } = await createPaste(t.app, { content: 'self-destructing', burn_after_read: true });
    for (let i = 0; i < 3; i++) {
      const open = await page(`/${short_url}`);
      assert.equal(open.statusCode, 200);
      assert.doesNotMatch(open.body, /self-destructing/);
      assert.match(open.body, /Show it and burn it/);
    }
    const reveal = await form(`/${short_url}`, {});
    assert.equal(reveal.statusCode, 200);
    assert.match(reveal.body, /self-destructing/);
    assert.match(reveal.body, /burned after this read/);
    const after = await page(`/${short_url}`);
    assert.equal(after.statusCode, 410);
    assert.match(after.body, /Paste deleted/);
  });

  test('a burn-after-read paste with a password needs both', async () => {
    const { short_url } = await createPaste(t.app, {
      content: 'both',
      burn_after_read: true,
      password: 'pw',
    });
    const open = await page(`/${short_url}`);
    assert.equal(open.statusCode, 401);
    assert.match(open.body, /name="password"/);
    assert.match(open.body, /deleted after it is read once/);
    assert.equal((await form(`/${short_url}`, { password: 'bad' })).statusCode, 401);
    assert.equal((await page(`/${short_url}`)).statusCode, 401, 'a wrong password burns nothing');
    const right = await form(`/${short_url}`, { password: 'pw' });
    assert.match(right.body, /both/);
    assert.equal((await page(`/${short_url}`)).statusCode, 410);
  });
});

describe('/{short_url} does not shadow other pages', () => {
  test('platform and service paths keep their own handlers', async () => {
    const paths = [
      '/docs',
      '/health/live',
      '/health/ready',
      '/metrics',
      '/openapi.json',
      '/static/paste/paste.css',
      '/static/platform/site.css',
      '/notify',
      '/movies',
      '/parking',
    ];
    for (const path of paths) {
      const response = await page(path);
      assert.equal(response.statusCode, 200, `${path}: ${response.statusCode}`);
      assert.doesNotMatch(response.body, /Paste not found/, path);
    }
    const api = await page('/api/v1/nothing');
    assert.equal(api.statusCode, 404);
    assert.match(api.body, /No route for GET \/api\/v1\/nothing/, 'a browser gets the error as a page');
    const client = await t.app.inject({ url: '/api/v1/nothing' });
    assert.equal(client.statusCode, 404);
    assert.match(String(client.headers['content-type']), /problem\+json/);
  });
});
