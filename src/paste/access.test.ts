import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { assertProblem, createPaste, createUser, freshIp } from '../../test/support/paste.ts';
import { createTestApp, type TestApp } from '../../test/support/platform.ts';

let t: TestApp;
before(async () => {
  t = await createTestApp({ services: ['paste'] });
});
after(async () => {
  await t.close();
});

const get = (url: string, headers: Record<string, string> = {}, remoteAddress = '127.0.0.1') =>
  t.app.inject({ method: 'GET', url, headers, remoteAddress });

describe('users and API keys', () => {
  test('POST /api/v1/users shows the API key once and stores only its SHA-256', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/v1/users',
      payload: { email: 'Ada@Example.com' },
      remoteAddress: freshIp(),
    });
    assert.equal(response.statusCode, 201, response.body);
    const user = response.json();
    assert.deepEqual(Object.keys(user).sort(), ['api_key', 'created_at', 'email', 'id']);
    assert.equal(user.email, 'ada@example.com');
    assert.match(user.api_key, /^pk_[\w-]{43}$/);
    const { rows } = await sql<{ api_key_hash: string }>`
      select api_key_hash from paste_users where id = ${user.id}`.execute(t.adapters.database.db);
    assert.equal(rows[0].api_key_hash, createHash('sha256').update(user.api_key).digest('hex'));
    const dump = JSON.stringify(
      (await sql`select * from paste_users`.execute(t.adapters.database.db)).rows,
      (_key, value) => (typeof value === 'bigint' ? String(value) : value),
    );
    assert.ok(!dump.includes(user.api_key), 'the key itself is nowhere in the table');
  });

  test('the same e-mail twice is 409; a bad e-mail is 400; sign-ups are limited per address', async () => {
    await createUser(t.app, 'twice@example.com');
    const again = await t.app.inject({
      method: 'POST',
      url: '/api/v1/users',
      payload: { email: 'TWICE@example.com' },
      remoteAddress: freshIp(),
    });
    assertProblem(again, 409, 'email_taken');
    assertProblem(
      await t.app.inject({
        method: 'POST',
        url: '/api/v1/users',
        payload: { email: 'nope' },
        remoteAddress: freshIp(),
      }),
      400,
      'validation_failed',
    );
    const ip = freshIp();
    for (let i = 0; i < 10; i++) {
      const ok = await t.app.inject({
        method: 'POST',
        url: '/api/v1/users',
        payload: { email: `burst${i}@example.com` },
        remoteAddress: ip,
      });
      assert.equal(ok.statusCode, 201);
      assert.match(String(ok.headers['ratelimit-policy']), /^"paste\.signup";q=10;w=\d+$/);
      assert.match(String(ok.headers.ratelimit), new RegExp(`^"paste\\.signup";r=${9 - i};t=\\d+$`));
    }
    const refused = await t.app.inject({
      method: 'POST',
      url: '/api/v1/users',
      payload: { email: 'burst10@example.com' },
      remoteAddress: ip,
    });
    assertProblem(refused, 429, 'too_many_signups');
    assert.ok(Number(refused.headers['retry-after']) > 0);
    assert.match(String(refused.headers.ratelimit), /^"paste\.signup";r=0;t=\d+$/);
  });

  test("GET /api/v1/users/me/pastes lists the caller's live pastes, newest first, page by page", async () => {
    const user = await createUser(t.app);
    const other = await createUser(t.app);
    const mine: string[] = [];
    for (let i = 0; i < 5; i++) {
      mine.push(
        (await createPaste(t.app, { content: `mine ${i}`, is_private: i === 0 }, { headers: user.auth }))
          .short_url,
      );
    }
    await createPaste(t.app, { content: 'theirs' }, { headers: other.auth });
    const gone = await createPaste(t.app, { content: 'deleted' }, { headers: user.auth });
    await t.app.inject({ method: 'DELETE', url: `/api/v1/paste/${gone.short_url}`, headers: user.auth });

    const first = await get('/api/v1/users/me/pastes?limit=3', user.auth);
    assert.equal(first.statusCode, 200);
    const page1 = first.json();
    assert.deepEqual(
      page1.pastes.map((p: { short_url: string }) => p.short_url),
      mine.slice(2).reverse(),
    );
    assert.equal(page1.pastes[0].views, 0);
    assert.equal(page1.pastes[0].url, `http://localhost:3000/${mine[4]}`);
    const page2 = (
      await get(`/api/v1/users/me/pastes?limit=3&cursor=${page1.next_cursor}`, user.auth)
    ).json();
    assert.deepEqual(
      page2.pastes.map((p: { short_url: string }) => p.short_url),
      mine.slice(0, 2).reverse(),
    );
    assert.equal(page2.pastes[1].is_private, true);
    assert.equal(page2.next_cursor, null);
  });

  test('401 without a key or with a wrong one, answered by the platform as for any credential', async () => {
    const none = await get('/api/v1/users/me/pastes');
    assertProblem(none, 401, 'unauthorized');
    assert.equal(none.headers['www-authenticate'], 'Bearer');
    assertProblem(
      await get('/api/v1/users/me/pastes', { authorization: 'Bearer pk_wrong' }, freshIp()),
      401,
      'unauthorized',
    );
    // Only `Bearer pk_…` is a paste key: anything else is no key at all.
    assertProblem(await get('/api/v1/users/me/pastes', { authorization: 'Basic abc' }), 401, 'unauthorized');
    const create = await t.app.inject({
      method: 'POST',
      url: '/api/v1/paste',
      payload: { content: 'x' },
      headers: { authorization: 'Bearer pk_wrong' },
      remoteAddress: freshIp(),
    });
    assertProblem(create, 401, 'unauthorized');
    const { short_url } = await createPaste(t.app, { content: 'public' });
    assertProblem(
      await get(`/api/v1/paste/${short_url}`, { authorization: 'Bearer pk_wrong' }, freshIp()),
      401,
      'unauthorized',
    );
  });

  test('wrong paste keys count as failed credentials: one address is refused (429) after the limit', async () => {
    // Imported here: importing the auth module before the config module runs into their import cycle.
    const { FAILED_CREDENTIALS } = await import('../platform/auth/index.ts');
    const ip = freshIp();
    const user = await createUser(t.app);
    for (let i = 0; i < FAILED_CREDENTIALS.points; i++) {
      const guess = await get('/api/v1/users/me/pastes', { authorization: `Bearer pk_guess${i}` }, ip);
      assert.equal(guess.statusCode, 401);
    }
    assertProblem(
      await get('/api/v1/users/me/pastes', { authorization: 'Bearer pk_x' }, ip),
      429,
      'rate_limited',
    );
    const right = await get('/api/v1/users/me/pastes', user.auth, ip);
    assert.equal(right.statusCode, 429, 'a right key from that address tells nothing either');
    assert.equal((await get('/api/v1/users/me/pastes', user.auth, freshIp())).statusCode, 200);
  });

  test('/openapi.json: the pasteKey scheme, and who may call each paste operation', async () => {
    const spec = (await t.app.inject({ url: '/openapi.json' })).json();
    assert.equal(spec.components.securitySchemes.pasteKey.scheme, 'bearer');
    const security = (method: string, path: string) => spec.paths[path][method].security;
    const publicOrOwner = [{}, { pasteKey: [] }];
    for (const [method, path] of [
      ['post', '/api/v1/paste'],
      ['post', '/paste'],
      ['get', '/api/v1/paste/{short_url}'],
      ['get', '/paste/{short_url}'],
      ['get', '/{short_url}/raw'],
      ['delete', '/api/v1/paste/{short_url}'],
    ]) {
      assert.deepEqual(security(method, path), publicOrOwner, `${method} ${path}`);
    }
    assert.deepEqual(security('get', '/api/v1/paste/languages'), []);
    assert.deepEqual(security('post', '/api/v1/users'), []);
    assert.deepEqual(security('get', '/api/v1/users/me/pastes'), [{ pasteKey: [] }]);
  });
});

describe('private pastes', () => {
  test('only the owner can read one; everybody else gets 404, as for a paste that does not exist', async () => {
    const owner = await createUser(t.app);
    const stranger = await createUser(t.app);
    const { short_url } = await createPaste(
      t.app,
      { content: 'my secret notes', is_private: true },
      { headers: owner.auth },
    );
    assertProblem(await get(`/api/v1/paste/${short_url}`), 404, 'paste_not_found');
    assertProblem(await get(`/api/v1/paste/${short_url}`, stranger.auth), 404, 'paste_not_found');
    assertProblem(await get(`/${short_url}/raw`, stranger.auth), 404, 'paste_not_found');
    const page = await get(`/${short_url}`);
    assert.equal(page.statusCode, 404);
    assert.doesNotMatch(page.body, /my secret notes/);
    const mine = await get(`/api/v1/paste/${short_url}`, owner.auth);
    assert.equal(mine.statusCode, 200);
    assert.equal(mine.json().content, 'my secret notes');
    assert.equal(mine.json().is_private, true);
    assert.equal(mine.headers['cache-control'], 'no-store');
    const raw = await get(`/${short_url}/raw`, owner.auth);
    assert.equal(raw.body, 'my secret notes');
    assert.equal(raw.headers['cache-control'], 'private, no-store');
    const ownPage = await get(`/${short_url}`, owner.auth);
    assert.equal(ownPage.statusCode, 200, 'the page answers the owner key too');
    assert.match(ownPage.body, /my secret notes/);
    assert.equal((await get(`/${short_url}`, stranger.auth)).statusCode, 404);
  });
});

describe('password protection', () => {
  test('401 without or with a wrong password, 200 with the right one; the hash is scrypt', async () => {
    const { short_url } = await createPaste(t.app, {
      content: 'behind a password',
      password: 'correct horse',
    });
    const { rows } = await sql<{ password_hash: string }>`
      select password_hash from pastes where short_url = ${short_url}`.execute(t.adapters.database.db);
    assert.match(rows[0].password_hash, /^scrypt\$32768\$8\$1\$/);
    assert.doesNotMatch(rows[0].password_hash, /correct horse/);
    assertProblem(await get(`/api/v1/paste/${short_url}`), 401, 'password_required');
    assertProblem(
      await get(`/api/v1/paste/${short_url}`, { 'x-paste-password': 'wrong' }, freshIp()),
      401,
      'wrong_password',
    );
    const ok = await get(`/api/v1/paste/${short_url}`, { 'x-paste-password': 'correct horse' });
    assert.equal(ok.statusCode, 200);
    assert.equal(ok.json().content, 'behind a password');
    const raw = await get(`/${short_url}/raw`, { 'x-paste-password': 'correct horse' });
    assert.equal(raw.body, 'behind a password');
  });

  test('wrong passwords are limited per IP: after 10, even the right one waits (429); other IPs are unaffected', async () => {
    const { short_url } = await createPaste(t.app, { content: 'guarded', password: 'pw' });
    const ip = freshIp();
    for (let i = 0; i < 10; i++) {
      const body = assertProblem(
        await get(`/api/v1/paste/${short_url}`, { 'x-paste-password': `guess${i}` }, ip),
        401,
        'wrong_password',
      );
      assert.equal(body.attempts_left, 9 - i);
    }
    const guessed = await get(`/api/v1/paste/${short_url}`, { 'x-paste-password': 'guess-again' }, freshIp());
    assert.match(String(guessed.headers['ratelimit-policy']), /^"paste\.password";q=10;w=\d+$/);
    assert.match(String(guessed.headers.ratelimit), /^"paste\.password";r=9;t=\d+$/);
    const blocked = await get(`/api/v1/paste/${short_url}`, { 'x-paste-password': 'pw' }, ip);
    assertProblem(blocked, 429, 'too_many_password_attempts');
    assert.ok(Number(blocked.headers['retry-after']) > 0);
    assert.match(String(blocked.headers.ratelimit), /"paste\.password";r=0;/);
    assert.equal(
      (await get(`/api/v1/paste/${short_url}`, { 'x-paste-password': 'pw' }, freshIp())).statusCode,
      200,
    );
  });

  test('a burst of concurrent wrong guesses runs at most the limit of password checks; the rest are 429', async () => {
    const { short_url } = await createPaste(t.app, { content: 'guarded', password: 'pw' });
    const checked = async () => {
      const metric = await t.app.platform.metrics.registry
        .getSingleMetric('paste_password_checks_total')
        ?.get();
      return (metric?.values ?? [])
        .filter((value) => value.labels.outcome === 'right' || value.labels.outcome === 'wrong')
        .reduce((sum, value) => sum + value.value, 0);
    };
    const before = await checked();
    const ip = freshIp();
    const guesses = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        get(`/api/v1/paste/${short_url}`, { 'x-paste-password': `guess${i}` }, ip),
      ),
    );
    const statuses = guesses.map((response) => response.statusCode);
    assert.equal(statuses.filter((status) => status === 401).length, 10, statuses.join(' '));
    assert.equal(statuses.filter((status) => status === 429).length, 30, statuses.join(' '));
    assert.equal((await checked()) - before, 10, 'scrypt ran for 10 guesses, not for all 40');
  });

  test('a right password gives its attempt back: it never uses up the allowance', async () => {
    const { short_url } = await createPaste(t.app, { content: 'guarded', password: 'pw' });
    const ip = freshIp();
    for (let i = 0; i < 12; i++) {
      const read = await get(`/api/v1/paste/${short_url}`, { 'x-paste-password': 'pw' }, ip);
      assert.equal(read.statusCode, 200);
    }
    const wrong = await get(`/api/v1/paste/${short_url}`, { 'x-paste-password': 'nope' }, ip);
    assert.equal(assertProblem(wrong, 401, 'wrong_password').attempts_left, 9);
  });
});

test('HEAD requests do not count as views', async () => {
  const { short_url } = await createPaste(t.app, { content: 'counted carefully' });
  await t.app.inject({ method: 'HEAD', url: `/api/v1/paste/${short_url}` });
  await t.app.inject({ method: 'HEAD', url: `/${short_url}/raw` });
  assert.equal((await get(`/api/v1/paste/${short_url}`)).json().views, 1);
});

test('the raw text and the alias answer the same errors: 400, 401, 404, 410, 429', async () => {
  const { short_url, delete_token } = await createPaste(t.app, {
    content: 'raw and guarded',
    password: 'pw',
  });
  assertProblem(await get('/not-an-id!/raw'), 400, 'validation_failed');
  assertProblem(await get(`/${short_url}/raw`), 401, 'password_required');
  assertProblem(await get(`/paste/${short_url}`), 401, 'password_required');
  const ip = freshIp();
  for (let i = 0; i < 10; i++) {
    assertProblem(await get(`/${short_url}/raw`, { 'x-paste-password': 'no' }, ip), 401, 'wrong_password');
  }
  assertProblem(
    await get(`/${short_url}/raw`, { 'x-paste-password': 'pw' }, ip),
    429,
    'too_many_password_attempts',
  );
  assertProblem(await get('/paste/zzzzzz'), 404, 'paste_not_found');
  await t.app.inject({
    method: 'DELETE',
    url: `/api/v1/paste/${short_url}`,
    headers: { 'x-delete-token': delete_token },
  });
  assertProblem(await get(`/paste/${short_url}`), 410, 'paste_deleted');
  const user = await createUser(t.app);
  assertProblem(await get('/api/v1/users/me/pastes?limit=0', user.auth), 400, 'validation_failed');
  assertProblem(await get('/api/v1/users/me/pastes?cursor=!!', user.auth), 400, 'validation_failed');
});

describe('burn after read', () => {
  test('HEAD and link-preview bots do not burn it; the first real read gets it, later ones 410', async () => {
    const { short_url } = await createPaste(t.app, { content: 'read me once', burn_after_read: true });
    const head = await t.app.inject({ method: 'HEAD', url: `/api/v1/paste/${short_url}` });
    assert.equal(head.statusCode, 200);
    const headRaw = await t.app.inject({ method: 'HEAD', url: `/${short_url}/raw` });
    assert.equal(headRaw.statusCode, 200);
    for (const agent of [
      'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
      'facebookexternalhit/1.1',
      'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)',
      'TelegramBot (like TwitterBot)',
      'WhatsApp/2.23.20.0',
    ]) {
      const preview = await get(`/api/v1/paste/${short_url}`, { 'user-agent': agent });
      assert.equal(preview.statusCode, 200);
      assert.doesNotMatch(preview.body, /read me once/, agent);
    }
    const page = await get(`/${short_url}`);
    assert.equal(page.statusCode, 200);
    assert.doesNotMatch(page.body, /read me once/, 'the page asks before it burns');

    const read = await get(`/api/v1/paste/${short_url}`, { 'user-agent': 'curl/8.5.0' });
    assert.equal(read.statusCode, 200);
    assert.equal(read.json().content, 'read me once');
    assert.equal(read.headers['cache-control'], 'no-store');
    const again = assertProblem(await get(`/api/v1/paste/${short_url}`), 410, 'paste_deleted');
    assert.equal(again.reason, 'burned');
    const { rows } = await sql<{ views: bigint; deleted_reason: string }>`
      select views, deleted_reason from pastes where short_url = ${short_url}`.execute(
      t.adapters.database.db,
    );
    assert.equal(rows[0].deleted_reason, 'burned');
    assert.equal(Number(rows[0].views), 1);
  });

  test('of 20 simultaneous readers exactly one gets the content', async () => {
    const { short_url } = await createPaste(t.app, { content: 'only one of you', burn_after_read: true });
    const responses = await Promise.all(Array.from({ length: 20 }, () => get(`/${short_url}/raw`)));
    const winners = responses.filter((response) => response.statusCode === 200);
    assert.equal(winners.length, 1);
    assert.equal(winners[0].body, 'only one of you');
    assert.ok(responses.every((response) => response.statusCode === 200 || response.statusCode === 410));
  });
});

describe('delete', () => {
  test('with the delete token: 204, then 410; without credentials 401; with a wrong token 403', async () => {
    const { short_url, delete_token } = await createPaste(t.app, { content: 'delete me' });
    await get(`/api/v1/paste/${short_url}`);
    const del = (headers: Record<string, string>) =>
      t.app.inject({ method: 'DELETE', url: `/api/v1/paste/${short_url}`, headers });
    assertProblem(await del({}), 401, 'credentials_required');
    assertProblem(await del({ 'x-delete-token': 'dt_wrong' }), 403, 'not_allowed');
    assert.equal((await get(`/api/v1/paste/${short_url}`)).statusCode, 200, 'refused deletes change nothing');
    const ok = await del({ 'x-delete-token': delete_token });
    assert.equal(ok.statusCode, 204);
    assertProblem(await get(`/api/v1/paste/${short_url}`), 410, 'paste_deleted');
    assertProblem(await get(`/${short_url}/raw`), 410, 'paste_deleted');
    assertProblem(await del({ 'x-delete-token': delete_token }), 410, 'paste_deleted');
  });

  test("with the owner's key; another user's key is 403, or 404 on a private paste", async () => {
    const owner = await createUser(t.app);
    const stranger = await createUser(t.app);
    const open = await createPaste(t.app, { content: 'public, owned' }, { headers: owner.auth });
    const hidden = await createPaste(
      t.app,
      { content: 'private, owned', is_private: true },
      { headers: owner.auth },
    );
    const del = (shortUrl: string, headers: Record<string, string>) =>
      t.app.inject({ method: 'DELETE', url: `/api/v1/paste/${shortUrl}`, headers });
    assertProblem(await del(open.short_url, stranger.auth), 403, 'not_allowed');
    assertProblem(await del(hidden.short_url, stranger.auth), 404, 'paste_not_found');
    assertProblem(await del(hidden.short_url, {}), 404, 'paste_not_found');
    assert.equal((await del(open.short_url, owner.auth)).statusCode, 204);
    assert.equal((await del(hidden.short_url, owner.auth)).statusCode, 204);
    assertProblem(await del('zzzzzz', owner.auth), 404, 'paste_not_found');
    assertProblem(await del('bad-id', owner.auth), 400, 'validation_failed');
  });
});
