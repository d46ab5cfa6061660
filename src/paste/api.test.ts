import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { resolveRefs } from '../../test/support/openapi.ts';
import { assertProblem, createPaste, createUser, freshIp } from '../../test/support/paste.ts';
import { createTestApp, type TestApp } from '../../test/support/platform.ts';

let t: TestApp;
before(async () => {
  t = await createTestApp({ services: ['paste'] });
});
after(async () => {
  await t.close();
});

describe('create and read', () => {
  test('POST /api/v1/paste answers the spec fields plus delete_token, and GET returns the paste', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/v1/paste',
      payload: { content: 'print("hi")\n', syntax: 'py', expires_in: 3600 },
      remoteAddress: freshIp(),
    });
    assert.equal(response.statusCode, 201, response.body);
    const created = response.json();
    assert.deepEqual(Object.keys(created).sort(), ['delete_token', 'expires_at', 'short_url', 'url']);
    assert.match(created.short_url, /^[0-9A-Za-z]{6}$/);
    assert.equal(created.url, `http://localhost:3000/${created.short_url}`);
    assert.equal(created.expires_at, '2026-01-05T13:00:00.000Z');
    assert.equal(response.headers.location, `/api/v1/paste/${created.short_url}`);
    assert.match(String(response.headers['ratelimit-policy']), /"paste\.create\.anon";q=30;w=600/);

    const read = await t.app.inject({ method: 'GET', url: `/api/v1/paste/${created.short_url}` });
    assert.equal(read.statusCode, 200);
    assert.match(String(read.headers['content-type']), /^application\/json/);
    assert.deepEqual(read.json(), {
      content: 'print("hi")\n',
      syntax: 'python',
      created_at: '2026-01-05T12:00:00.000Z',
      expires_at: '2026-01-05T13:00:00.000Z',
      views: 1,
      content_type: 'text/plain',
      is_private: false,
      size: 12,
    });
    const alias = await t.app.inject({ method: 'GET', url: `/paste/${created.short_url}` });
    assert.equal(alias.json().views, 2);
  });

  test('without options: no expiry, no syntax; POST /paste is an alias', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/paste',
      payload: { content: 'plain words' },
      remoteAddress: freshIp(),
    });
    assert.equal(response.statusCode, 201);
    assert.equal(response.json().expires_at, null);
    const read = await t.app.inject({ method: 'GET', url: `/api/v1/paste/${response.json().short_url}` });
    assert.equal(read.json().syntax, null);
    assert.equal(read.json().expires_at, null);
  });

  test('consecutive pastes get unrelated ids', async () => {
    const a = await createPaste(t.app, { content: 'one' });
    const b = await createPaste(t.app, { content: 'two' });
    let same = 0;
    for (let i = 0; i < 6; i++) if (a.short_url[i] === b.short_url[i]) same++;
    assert.ok(same <= 2, `${a.short_url} and ${b.short_url} share ${same} positions`);
  });

  test('50 simultaneous creates (some with the same text) all succeed with distinct ids', async () => {
    const texts = Array.from({ length: 50 }, (_, i) => `concurrent paste ${i % 10}`);
    const created = await Promise.all(texts.map((content) => createPaste(t.app, { content })));
    assert.equal(new Set(created.map((paste) => paste.short_url)).size, 50);
    for (const [i, paste] of created.entries()) {
      const read = await t.app.inject({ method: 'GET', url: `/${paste.short_url}/raw` });
      assert.equal(read.body, texts[i]);
    }
  });

  test('content is stored once per SHA-256, zstd-compressed', async () => {
    const text = 'the same text, pasted twice\n'.repeat(200);
    const a = await createPaste(t.app, { content: text });
    const b = await createPaste(t.app, { content: text });
    assert.notEqual(a.short_url, b.short_url);
    const hash = createHash('sha256').update(text).digest('hex');
    const { rows } = await sql<{ data: Uint8Array; size: number; refs: bigint }>`
      select c.data, c.size, (select count(*) from pastes p where p.content_hash = c.hash) as refs
      from paste_contents c where c.hash = ${hash}`.execute(t.adapters.database.db);
    assert.equal(rows.length, 1);
    assert.equal(Number(rows[0].refs), 2);
    assert.equal(rows[0].size, Buffer.byteLength(text));
    assert.ok(
      rows[0].data.length < text.length / 10,
      `stored ${rows[0].data.length} bytes for ${text.length}`,
    );
    assert.deepEqual([...rows[0].data.subarray(0, 4)], [0x28, 0xb5, 0x2f, 0xfd], 'zstd frame magic');
  });

  test('GET /{short_url}/raw serves text/plain with an ETag; caches must revalidate, so a deletion shows at once', async () => {
    const { short_url, delete_token } = await createPaste(t.app, {
      content: 'raw text\r\nline two',
      expires_in: 600,
    });
    const raw = await t.app.inject({ method: 'GET', url: `/${short_url}/raw` });
    assert.equal(raw.statusCode, 200);
    assert.equal(raw.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(raw.body, 'raw text\r\nline two');
    assert.equal(raw.headers['cache-control'], 'public, no-cache');
    const etag = String(raw.headers.etag);
    assert.match(etag, /^"[0-9a-f]{32}"$/);
    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const again = await t.app.inject({
        method: 'GET',
        url: `/${short_url}/raw`,
        headers: { 'if-none-match': ifNoneMatch },
      });
      assert.equal(again.statusCode, 304, ifNoneMatch);
      assert.equal(again.body, '');
      assert.equal(again.headers.etag, etag);
    }
    const other = await t.app.inject({ url: `/${short_url}/raw`, headers: { 'if-none-match': '"other"' } });
    assert.equal(other.statusCode, 200);
    const download = await t.app.inject({ method: 'GET', url: `/${short_url}/raw?download=1` });
    assert.equal(download.headers['content-disposition'], `attachment; filename="${short_url}.txt"`);
    // A cache revalidating after the delete learns it at once: no max-age let it keep the text.
    const deleted = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/paste/${short_url}`,
      headers: { 'x-delete-token': delete_token },
    });
    assert.equal(deleted.statusCode, 204);
    const revalidated = await t.app.inject({ url: `/${short_url}/raw`, headers: { 'if-none-match': etag } });
    assert.equal(revalidated.statusCode, 410);
  });

  test('GET /api/v1/paste/{short_url}: a weak ETag (the views move, the paste does not) and 304 on a match', async () => {
    const { short_url } = await createPaste(t.app, { content: 'json read' });
    const url = `/api/v1/paste/${short_url}`;
    // The first read loads the paste (the uncached path), the next ones come from this process.
    const first = await t.app.inject({ url });
    assert.equal(first.statusCode, 200);
    assert.equal(first.headers['cache-control'], 'public, no-cache');
    const etag = String(first.headers.etag);
    assert.match(etag, /^W\/"[0-9a-f]{32}"$/);
    const second = await t.app.inject({ url });
    assert.equal(second.headers.etag, etag, 'the same validator although the views count moved');
    const again = await t.app.inject({ url, headers: { 'if-none-match': etag } });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');
    const alias = await t.app.inject({ url: `/paste/${short_url}`, headers: { 'if-none-match': etag } });
    assert.equal(alias.statusCode, 304);
  });

  test('an expired paste is 410 (the API, the raw text and the page)', async () => {
    const { short_url } = await createPaste(t.app, { content: 'short-lived', expires_in: 60 });
    assert.equal((await t.app.inject({ method: 'GET', url: `/api/v1/paste/${short_url}` })).statusCode, 200);
    t.clock.advance(61_000);
    assertProblem(
      await t.app.inject({ method: 'GET', url: `/api/v1/paste/${short_url}` }),
      410,
      'paste_expired',
    );
    assertProblem(await t.app.inject({ method: 'GET', url: `/${short_url}/raw` }), 410, 'paste_expired');
    const page = await t.app.inject({
      method: 'GET',
      url: `/${short_url}`,
      headers: { accept: 'text/html' },
    });
    assert.equal(page.statusCode, 410);
    assert.match(page.body, /Paste expired/);
    // curl (no text/html in Accept) gets the problem, as from /raw.
    assertProblem(await t.app.inject({ method: 'GET', url: `/${short_url}` }), 410, 'paste_expired');
  });

  test('unknown ids are 404, malformed ones 400', async () => {
    assertProblem(await t.app.inject({ method: 'GET', url: '/api/v1/paste/zzzzzz' }), 404, 'paste_not_found');
    assertProblem(await t.app.inject({ method: 'GET', url: '/zzzzzz/raw' }), 404, 'paste_not_found');
    assertProblem(
      await t.app.inject({ method: 'GET', url: '/api/v1/paste/ab-cd' }),
      400,
      'validation_failed',
    );
    assertProblem(
      await t.app.inject({ method: 'GET', url: '/api/v1/paste/abcdefghi' }),
      400,
      'validation_failed',
    );
  });

  test('GET /api/v1/paste/languages lists what syntax accepts', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/api/v1/paste/languages' });
    assert.equal(response.statusCode, 200);
    const { languages } = response.json();
    assert.ok(
      languages.includes('python') && languages.includes('typescript') && languages.includes('plaintext'),
    );
  });
});

describe('raw bodies (the curl one-liner)', () => {
  test('curl --data-binary @file (x-www-form-urlencoded) stores the bytes as they are and answers the URL as text', async () => {
    const file = 'a=1&b=2\nnot a form, a file: 100% raw\n';
    const response = await t.app.inject({
      method: 'POST',
      url: '/paste',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: file,
      remoteAddress: freshIp(),
    });
    assert.equal(response.statusCode, 201, response.body);
    assert.equal(response.headers['content-type'], 'text/plain; charset=utf-8');
    const match = /^http:\/\/localhost:3000\/([0-9A-Za-z]{6})\n$/.exec(response.body);
    assert.ok(match, response.body);
    assert.match(String(response.headers['x-delete-token']), /^dt_/);
    const raw = await t.app.inject({ method: 'GET', url: `/${match[1]}/raw` });
    assert.equal(raw.body, file);
  });

  test('text/plain and octet-stream bodies take their options from the query string', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/v1/paste?syntax=python&expires_in=600',
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      payload: 'x = 1\n',
      remoteAddress: freshIp(),
    });
    assert.equal(response.statusCode, 201, response.body);
    // The JSON API answers JSON whatever the body (the /paste alias answers text).
    assert.match(String(response.headers['content-type']), /^application\/json/);
    const shortUrl = response.json().short_url;
    const read = (await t.app.inject({ method: 'GET', url: `/api/v1/paste/${shortUrl}` })).json();
    assert.equal(read.syntax, 'python');
    assert.equal(read.expires_at, new Date(t.clock.now().getTime() + 600_000).toISOString());
    const binaryType = await t.app.inject({
      method: 'POST',
      url: '/paste',
      headers: { 'content-type': 'application/octet-stream' },
      payload: Buffer.from('héllo wörld'),
      remoteAddress: freshIp(),
    });
    assert.equal(binaryType.statusCode, 201);
  });

  test('options in the query string are validated too', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/paste?expires_in=5',
      headers: { 'content-type': 'text/plain' },
      payload: 'x',
      remoteAddress: freshIp(),
    });
    assertProblem(response, 400, 'validation_failed');
  });
});

describe('refusals', () => {
  test('400: missing content, unknown fields, bad options, unknown syntax, private without an account', async () => {
    const post = (payload: unknown) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/paste',
        payload: payload as object,
        remoteAddress: freshIp(),
      });
    const missing = assertProblem(await post({ syntax: 'js' }), 400, 'validation_failed');
    assert.deepEqual(
      missing.errors.map((e: { field: string }) => e.field),
      ['body.content'],
    );
    assertProblem(await post({ content: '' }), 400, 'validation_failed');
    assertProblem(await post({ content: 'x', colour: 'red' }), 400, 'validation_failed');
    assertProblem(await post({ content: 'x', expires_in: 59 }), 400, 'validation_failed');
    assertProblem(await post({ content: 'x', expires_in: 6 * 365 * 86_400 }), 400, 'validation_failed');
    const syntax = assertProblem(await post({ content: 'x', syntax: 'klingon' }), 400, 'invalid_option');
    assert.equal(syntax.errors[0].field, 'syntax');
    assertProblem(await post({ content: 'x', is_private: true }), 400, 'invalid_option');
    const bodiless = await t.app.inject({ method: 'POST', url: '/paste', remoteAddress: freshIp() });
    assertProblem(bodiless, 400, 'invalid_option');
    assertProblem(
      await t.app.inject({
        method: 'POST',
        url: '/api/v1/paste',
        headers: { 'content-type': 'application/json' },
        payload: '{"content": ',
        remoteAddress: freshIp(),
      }),
      400,
      'malformed_json',
    );
  });

  test('400 for empty content lists the same errors, in the same order, as a minLength: 1 schema did', async () => {
    const errors = async (payload: unknown, url = '/api/v1/paste') => {
      const response = await t.app.inject({
        method: 'POST',
        url,
        payload: payload as object,
        remoteAddress: freshIp(),
      });
      return assertProblem(response, 400, 'validation_failed').errors;
    };
    const empty = { field: 'body.content', message: 'must NOT have fewer than 1 characters' };
    assert.deepEqual(await errors({ content: '' }), [empty]);
    // A JSON body is not coerced: null and [''] are not text, so they are not empty text either.
    const notText = { field: 'body.content', message: 'must be string' };
    assert.deepEqual(await errors({ content: null }), [notText]);
    assert.deepEqual(await errors({ content: [''] }), [notText]);
    assert.deepEqual(await errors({ content: '', colour: 'red', syntax: 'x'.repeat(51), expires_in: 59 }), [
      { field: 'body.colour', message: 'must NOT have additional properties' },
      empty,
      { field: 'body.syntax', message: 'must NOT have more than 50 characters' },
      { field: 'body.expires_in', message: 'must be >= 60' },
    ]);
    // The body is checked before the query string, so its error is the one reported.
    assert.deepEqual(await errors({ content: '' }, '/api/v1/paste?expires_in=1'), [empty]);
    assert.deepEqual(await errors({ content: 'x' }, '/api/v1/paste?expires_in=1'), [
      { field: 'querystring.expires_in', message: 'must be >= 60' },
    ]);
  });

  test('413: more than 10 MB of UTF-8 is refused; exactly 10 MB is accepted', async () => {
    const limit = 10 * 1024 * 1024;
    // 'é' is two bytes in UTF-8: 5 Mi of them are exactly 10 MB, though only 5 Mi characters.
    const exact = 'é'.repeat(limit / 2);
    const ok = await t.app.inject({
      method: 'POST',
      url: '/api/v1/paste',
      payload: { content: exact },
      remoteAddress: freshIp(),
    });
    assert.equal(ok.statusCode, 201, ok.body);
    const tooBig = await t.app.inject({
      method: 'POST',
      url: '/api/v1/paste',
      payload: { content: `${exact}x` },
      remoteAddress: freshIp(),
    });
    const body = assertProblem(tooBig, 413, 'content_too_large');
    assert.equal(body.limit_bytes, limit);
    const raw = await t.app.inject({
      method: 'POST',
      url: '/paste',
      headers: { 'content-type': 'text/plain' },
      payload: Buffer.alloc(limit + 1, 'a'),
      remoteAddress: freshIp(),
    });
    assertProblem(raw, 413, 'content_too_large');
  });

  test('413 comes before the body is read: a client announcing 20 MB gets its answer after sending a few bytes', async () => {
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = new URL(address);
    const socket = connect(Number(port), '127.0.0.1');
    const answer = await new Promise<string>((resolve, reject) => {
      let received = '';
      socket.on('data', (chunk) => {
        received += chunk;
        if (received.includes('\r\n\r\n') && received.includes('}')) resolve(received);
      });
      socket.on('error', reject);
      socket.write(
        'POST /paste HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 20971520\r\n\r\nonly the first bytes',
      );
    });
    socket.destroy();
    assert.match(answer, /^HTTP\/1\.1 413/);
    assert.match(answer, /content_too_large/);
  });

  test('415: media types other than JSON and text, and charsets other than UTF-8', async () => {
    const post = (type: string, payload: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/paste',
        headers: { 'content-type': type },
        payload,
        remoteAddress: freshIp(),
      });
    assertProblem(await post('application/xml', '<a/>'), 415, 'unsupported_media_type');
    assertProblem(await post('image/png', 'png'), 415, 'unsupported_media_type');
    assertProblem(await post('text/plain; charset=iso-8859-1', 'caf\xe9'), 415, 'unsupported_media_type');
  });

  test('422: invalid UTF-8, NUL bytes (binary files), unpaired surrogates', async () => {
    const post = (payload: Buffer | string, type = 'application/octet-stream') =>
      t.app.inject({
        method: 'POST',
        url: '/paste',
        headers: { 'content-type': type },
        payload,
        remoteAddress: freshIp(),
      });
    const latin1 = assertProblem(await post(Buffer.from([0x63, 0x61, 0x66, 0xe9])), 422, 'content_not_utf8');
    assert.match(latin1.detail, /UTF-8/);
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d]);
    assertProblem(await post(png), 422, 'content_not_utf8');
    assertProblem(await post(Buffer.from('text\u0000with a NUL')), 422, 'content_binary');
    assertProblem(await post('{"content": "a\\u0000b"}', 'application/json'), 422, 'content_binary');
    assertProblem(
      await post('{"content": "half a pair: \\ud800"}', 'application/json'),
      422,
      'content_not_utf8',
    );
  });

  test('429: the 31st paste from one address in 10 minutes, with Retry-After and RateLimit headers', async () => {
    const ip = freshIp();
    const post = () =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/paste',
        payload: { content: 'spam?' },
        remoteAddress: ip,
      });
    // A refused paste spends nothing from the allowance.
    assertProblem(
      await t.app.inject({
        method: 'POST',
        url: '/api/v1/paste',
        payload: { content: 'x', syntax: 'nope' },
        remoteAddress: ip,
      }),
      400,
      'invalid_option',
    );
    for (let i = 0; i < 30; i++) assert.equal((await post()).statusCode, 201, `create ${i + 1}`);
    const refused = await post();
    assertProblem(refused, 429, 'too_many_pastes');
    assert.ok(Number(refused.headers['retry-after']) > 0);
    assert.match(String(refused.headers.ratelimit), /"paste\.create\.anon";r=0;t=\d+/);
    // Another address is not affected.
    assert.equal(
      (
        await t.app.inject({
          method: 'POST',
          url: '/api/v1/paste',
          payload: { content: 'x' },
          remoteAddress: freshIp(),
        })
      ).statusCode,
      201,
    );
  });

  test('creates with an API key are limited per key, at the larger allowance', async () => {
    const user = await createUser(t.app);
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/v1/paste',
      payload: { content: 'mine' },
      headers: user.auth,
      remoteAddress: freshIp(),
    });
    assert.equal(response.statusCode, 201);
    assert.match(String(response.headers['ratelimit-policy']), /"paste\.create\.key";q=300;w=600/);
    assert.match(String(response.headers.ratelimit), /r=299;/);
  });

  test('Idempotency-Key replays the first answer instead of creating a second paste', async () => {
    const ip = freshIp();
    const send = () =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/paste',
        payload: { content: 'once' },
        headers: { 'idempotency-key': 'k-1' },
        remoteAddress: ip,
      });
    const first = await send();
    const second = await send();
    assert.equal(first.statusCode, 201);
    assert.equal(second.statusCode, 201);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.equal(second.json().short_url, first.json().short_url);
  });

  test("two anonymous clients with the same key and content each get their own paste, not the other's delete token", async () => {
    const send = (ip: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/paste',
        payload: { content: 'same words' },
        headers: { 'idempotency-key': 'k-shared' },
        remoteAddress: ip,
      });
    const [one, two] = [freshIp(), freshIp()];
    const first = await send(one);
    const second = await send(two);
    assert.equal(second.statusCode, 201, second.body);
    assert.equal(second.headers['idempotent-replayed'], undefined);
    assert.notEqual(second.json().short_url, first.json().short_url);
    assert.notEqual(second.json().delete_token, first.json().delete_token);
    assert.equal((await send(one)).body, first.body, 'the first client still replays its own');
  });

  test('a body refused as invalid never claims its Idempotency-Key (checked before the idempotency hook)', async () => {
    const ip = freshIp();
    const send = (payload: object, key: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/paste',
        payload,
        headers: { 'idempotency-key': key },
        remoteAddress: ip,
      });
    for (const [key, payload] of [
      ['k-empty', { content: '' }],
      ['k-schema', { content: 'x', expires_in: 59 }],
    ] as const) {
      assertProblem(await send(payload, key), 400, 'validation_failed');
      const again = await send(payload, key);
      assertProblem(again, 400, 'validation_failed');
      assert.equal(again.headers['idempotent-replayed'], undefined, key);
      // The key is still free for a valid request.
      const valid = await send({ content: `valid after ${key}` }, key);
      assert.equal(valid.statusCode, 201, valid.body);
    }
  });
});

describe('docs', () => {
  test('every endpoint is in /openapi.json with its success and error responses', async () => {
    const document = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const spec = resolveRefs(document, document);
    const expected: [string, string, string[]][] = [
      ['/api/v1/paste', 'post', ['201', '400', '401', '413', '415', '422', '429']],
      ['/paste', 'post', ['201', '400', '413', '415', '422', '429']],
      ['/', 'post', ['201', '400', '413', '415', '422', '429']],
      ['/', 'put', ['201', '400', '413', '422', '429']],
      ['/paste', 'put', ['201', '400', '413', '422', '429']],
      ['/api/v1/paste/{short_url}', 'get', ['200', '400', '401', '404', '410', '429']],
      ['/paste/{short_url}', 'get', ['200', '404', '410']],
      ['/{short_url}/raw', 'get', ['200', '401', '404', '410']],
      ['/api/v1/paste/{short_url}', 'delete', ['204', '401', '403', '404', '410']],
      ['/api/v1/users', 'post', ['201', '400', '409', '429']],
      ['/api/v1/users/me/pastes', 'get', ['200', '401']],
      ['/api/v1/paste/languages', 'get', ['200']],
    ];
    for (const [path, method, statuses] of expected) {
      const operation = spec.paths[path]?.[method];
      assert.ok(operation, `${method.toUpperCase()} ${path} is documented`);
      for (const status of statuses)
        assert.ok(operation.responses[status], `${method} ${path} documents ${status}`);
      // Its errors as they are sent: the platform's one problem schema, as problem+json.
      for (const status of statuses.filter((code) => code >= '400')) {
        assert.deepEqual(
          operation.responses[status].content,
          { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
          `${method} ${path} ${status}`,
        );
      }
    }
    assert.ok(spec.paths['/api/v1/paste'].post.requestBody.content['text/plain']);
    for (const path of ['/api/v1/paste', '/paste', '/']) {
      const upload = spec.paths[path].post.requestBody.content['multipart/form-data'];
      assert.ok(upload.schema.properties.content, `${path} documents curl -F`);
    }
    const docs = await t.app.inject({ method: 'GET', url: '/docs' });
    assert.equal(docs.statusCode, 200);
  });
});
