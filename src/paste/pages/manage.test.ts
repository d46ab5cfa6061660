import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createPaste, createUser, freshIp } from '../../../test/support/paste.ts';
import { createTestApp, type TestApp } from '../../../test/support/platform.ts';

/**
 * The pages around a paste's life (issue 26): the create form answers with a redirect (a reload
 * creates nothing), the delete token reaches the creator in a cookie rather than a URL, the delete
 * button, Raw and Download of a password paste after its page took the password, the favicon and
 * the navigation's current-page marker.
 */
let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
type Jar = Record<string, string>;

/** Keeps the cookies an answer sets (a Max-Age=0 one is removed), as a browser does. */
function keep(jar: Jar, response: { headers: Record<string, unknown> }): Jar {
  for (const line of [response.headers['set-cookie'] ?? []].flat()) {
    const [pair, ...attributes] = String(line).split(';');
    const name = pair.slice(0, pair.indexOf('='));
    if (attributes.some((attribute) => attribute.trim() === 'Max-Age=0')) delete jar[name];
    else jar[name] = pair.slice(pair.indexOf('=') + 1);
  }
  return jar;
}
const cookie = (jar: Jar) =>
  Object.entries(jar)
    .map(([name, value]) => `${name}=${value}`)
    .join('; ');

const get = (url: string, jar: Jar = {}, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'GET', url, headers: { accept: BROWSER_ACCEPT, cookie: cookie(jar), ...headers } });
const post = (url: string, fields: Record<string, string>, jar: Jar = {}) =>
  t.app.inject({
    method: 'POST',
    url,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      accept: BROWSER_ACCEPT,
      cookie: cookie(jar),
    },
    payload: new URLSearchParams(fields).toString(),
    remoteAddress: freshIp(),
  });

async function pasteCount(): Promise<number> {
  const [row] = await t.adapters.database.db
    .withTables<{ pastes: { id: bigint } }>()
    .selectFrom('pastes')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .execute();
  return Number(row.n);
}

describe('the create form: POST, redirect, GET', () => {
  test('the answer is a redirect; reloading "Paste created" shows the token again and makes no paste', async () => {
    const before = await pasteCount();
    const jar: Jar = {};
    const posted = await post('/', { content: 'made once' });
    assert.equal(posted.statusCode, 303, posted.body);
    const location = String(posted.headers.location);
    const [, shortUrl] = /^\/([0-9A-Za-z]{6})\/created$/.exec(location) ?? [];
    assert.ok(shortUrl, location);
    keep(jar, posted);
    assert.match(String(posted.headers['set-cookie']), /HttpOnly; SameSite=Strict; Max-Age=600/);
    assert.match(String(posted.headers['set-cookie']), new RegExp(`Path=/${shortUrl}/created`));

    let token = '';
    for (let reload = 0; reload < 3; reload++) {
      const shown = await get(location, jar);
      assert.equal(shown.statusCode, 200, shown.body);
      assert.equal(shown.headers['cache-control'], 'no-store');
      assert.match(shown.body, /<h1>Paste created<\/h1>/);
      assert.match(shown.body, new RegExp(`class="paste-url" href="http://localhost:3000/${shortUrl}"`));
      token = /class="delete-token">(dt_[\w-]+)</.exec(shown.body)?.[1] ?? '';
      assert.ok(token, 'the delete token is on the page');
    }
    assert.equal(await pasteCount(), before + 1, 'one paste, however often the page is reloaded');
    const api = (await t.app.inject({ url: `/api/v1/paste/${shortUrl}` })).json();
    assert.equal(api.content, 'made once');
  });

  test('without the creator’s cookie, or once it has expired or been altered, the page is the paste', async () => {
    const jar = keep({}, await post('/', { content: 'flash' }));
    const [name, value] = Object.entries(jar)[0];
    const id = (JSON.parse(Buffer.from(value.split('.')[0], 'base64url').toString()) as { short_url: string })
      .short_url;
    const nobody = await get(`/${id}/created`);
    assert.equal(nobody.statusCode, 303);
    assert.equal(nobody.headers.location, `/${id}`);
    const [payload, until, signature] = value.split('.');
    const forged = Buffer.from(
      JSON.stringify({ short_url: id, expires_at: null, delete_token: 'dt_forged' }),
    );
    const altered = await get(`/${id}/created`, {
      [name]: `${forged.toString('base64url')}.${until}.${signature}`,
    });
    assert.equal(altered.statusCode, 303, 'a payload the server did not sign is not shown');
    const otherPaste = await createPaste(t.app, { content: 'another' });
    const elsewhere = await get(`/${otherPaste.short_url}/created`, jar);
    assert.equal(elsewhere.statusCode, 303, 'the cookie names its own paste only');
    assert.equal(
      (await get(`/${id}/created`, { [name]: `${payload}.${until}.${signature}` })).statusCode,
      200,
    );
    t.clock.advance(601_000);
    assert.equal((await get(`/${id}/created`, jar)).statusCode, 303, 'ten minutes later it is over');
  });
});

describe('the delete button', () => {
  test('on "Paste created" it deletes with the token the page holds; the link then says deleted', async () => {
    const jar = keep({}, await post('/', { content: 'delete me' }));
    const id = JSON.parse(Buffer.from(Object.values(jar)[0].split('.')[0], 'base64url').toString()).short_url;
    const shown = await get(`/${id}/created`, jar);
    assert.match(shown.body, new RegExp(`<form method="post" action="/${id}/delete"`));
    const token = /name="token" value="(dt_[\w-]+)"/.exec(shown.body)?.[1];
    assert.ok(token);
    const deleted = await post(`/${id}/delete`, { token }, jar);
    assert.equal(deleted.statusCode, 200, deleted.body);
    assert.match(deleted.body, /<h1>Paste deleted<\/h1>/);
    keep(jar, deleted);
    assert.deepEqual(jar, {}, 'the created page’s cookie goes with it');
    assert.equal((await get(`/${id}`)).statusCode, 410);
    assert.equal((await t.app.inject({ url: `/api/v1/paste/${id}` })).statusCode, 410);
  });

  test('on the paste page it takes the token or the owner’s API key; a wrong one deletes nothing', async () => {
    const anonymous = await createPaste(t.app, { content: 'by token' });
    const view = await get(`/${anonymous.short_url}`);
    assert.match(view.body, /<summary>Delete this paste<\/summary>/);
    const empty = await post(`/${anonymous.short_url}/delete`, { token: '' });
    assert.equal(empty.statusCode, 400);
    const wrong = await post(`/${anonymous.short_url}/delete`, { token: 'dt_wrong' });
    assert.equal(wrong.statusCode, 403);
    assert.match(wrong.body, /<h1>Not deleted<\/h1>/);
    const stranger = await createUser(t.app);
    const notOwner = await post(`/${anonymous.short_url}/delete`, { token: stranger.api_key });
    assert.equal(notOwner.statusCode, 403);
    assert.equal((await get(`/${anonymous.short_url}`)).statusCode, 200, 'still there');
    const right = await post(`/${anonymous.short_url}/delete`, { token: anonymous.delete_token });
    assert.equal(right.statusCode, 200);
    assert.equal((await get(`/${anonymous.short_url}`)).statusCode, 410);

    const owner = await createUser(t.app);
    const owned = await createPaste(t.app, { content: 'by key' }, { headers: owner.auth });
    const byKey = await post(`/${owned.short_url}/delete`, { token: owner.api_key });
    assert.equal(byKey.statusCode, 200, byKey.body);
    assert.equal((await get(`/${owned.short_url}`)).statusCode, 410);
    assert.equal((await post('/zzzzzz/delete', { token: 'dt_x' })).statusCode, 404);
  });
});

describe('a password paste after its page took the password', () => {
  test('Raw and Download open from the unlock cookie of that paste only, never from the URL', async () => {
    const locked = await createPaste(t.app, { content: 'SELECT 1;\n', password: 'open sesame' });
    const other = await createPaste(t.app, { content: 'other', password: 'other pw' });
    const jar: Jar = {};
    const unlocked = await post(`/${locked.short_url}`, { password: 'open sesame' });
    assert.equal(unlocked.statusCode, 303);
    assert.equal(unlocked.headers.location, `/${locked.short_url}`);
    assert.match(String(unlocked.headers['set-cookie']), new RegExp(`Path=/${locked.short_url};`));
    assert.doesNotMatch(String(unlocked.headers['set-cookie']), /open sesame|open%20sesame/);
    keep(jar, unlocked);

    const page = await get(`/${locked.short_url}`, jar);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /SELECT 1;/);
    assert.match(page.body, new RegExp(`class="raw" href="/${locked.short_url}/raw"`));
    assert.match(page.body, new RegExp(`class="download" href="/${locked.short_url}/raw\\?download=1"`));
    const raw = await get(`/${locked.short_url}/raw`, jar);
    assert.equal(raw.statusCode, 200);
    assert.equal(raw.body, 'SELECT 1;\n');
    const download = await get(`/${locked.short_url}/raw?download=1`, jar);
    assert.equal(download.statusCode, 200);
    assert.match(String(download.headers['content-disposition']), /attachment/);

    assert.equal((await get(`/${locked.short_url}/raw`)).statusCode, 401, 'no cookie, no text');
    assert.equal((await get(`/${other.short_url}/raw`, jar)).statusCode, 401, 'another paste stays locked');
    const [name, value] = Object.entries(jar)[0];
    const [payload, until, signature] = value.split('.');
    const later = { [name]: `${payload}.${Number(until) + 3600}.${signature}` };
    assert.equal((await get(`/${locked.short_url}/raw`, later)).statusCode, 401, 'an altered expiry');
    t.clock.advance(601_000);
    assert.equal((await get(`/${locked.short_url}/raw`, jar)).statusCode, 401, 'ten minutes later');
  });
});

describe('around the pages', () => {
  test('/favicon.ico is the site’s icon, not a "Paste not found" page', async () => {
    const icon = await get('/favicon.ico');
    assert.equal(icon.statusCode, 200);
    assert.match(String(icon.headers['content-type']), /^image\//);
    assert.doesNotMatch(icon.body, /Paste not found/);
  });

  test('the navigation marks the part of the site a page belongs to (aria-current="page")', async () => {
    const current = (body: string) =>
      [...body.matchAll(/<a href="([^"]+)" aria-current="page">/g)].map((m) => m[1]);
    const paste = await createPaste(t.app, { content: 'x' });
    assert.deepEqual(current((await get('/paste')).body), ['/paste']);
    assert.deepEqual(current((await get(`/${paste.short_url}`)).body), ['/paste']);
    assert.deepEqual(current((await get('/parking')).body), ['/parking']);
    assert.deepEqual(current((await get('/')).body), [], 'the home page is no service’s');
  });

  test('the form explains Private and the API key, and offers Ctrl+Enter', async () => {
    const body = (await get('/paste')).body;
    assert.match(body, /name="is_private" aria-describedby="private-help"/);
    assert.match(body, /id="private-help"><strong>Private<\/strong>: only the owner can open it/);
    assert.match(body, /name="api_key"[^>]*aria-describedby="api-key-help"/);
    assert.match(body, /Ctrl\+Enter/);
  });
});
