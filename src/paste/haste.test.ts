import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { gunzipSync, inflateSync } from 'node:zlib';
import { assertProblem, createUser, freshIp } from '../../test/support/paste.ts';
import { createTestApp, type TestApp } from '../../test/support/platform.ts';

/**
 * The haste API against what the published clients send. The `haste` gem (toptal/haste-client,
 * lib/haste/uploader.rb) posts the text, right-stripped, with Faraday over Ruby's net/http:
 * `connection.post('/documents', data)` with no media type of its own, so net/http labels it
 * application/x-www-form-urlencoded; with HASTE_SERVER_TOKEN it adds `Authorization: Bearer`.
 * It then takes the key only from a 200 (`response.status == 200`, `JSON.parse(body)['key']`)
 * and prints `$HASTE_SHARE_SERVER/share/{key}` (older versions `$HASTE_SERVER/{key}`). Other
 * clients and editor plugins send text/plain or no media type at all. Those requests are written
 * to a socket byte for byte, and the answers are read as the client reads them.
 */
let t: TestApp;
let origin: string;
let port: number;

before(async () => {
  t = await createTestApp({ services: ['paste'] });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  assert.ok(address && typeof address === 'object');
  port = address.port;
  origin = `http://127.0.0.1:${port}`;
});
after(() => t.close());

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends `request` as these exact bytes and reads the answer up to the close (the client sends Connection: close). */
function exchange(request: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      try {
        resolve(parseAnswer(Buffer.concat(chunks)));
      } catch (error) {
        reject(error);
      }
    });
    socket.write(request);
  });
}

/** HTTP/1.1 as net/http reads it: status line, headers, a chunked or sized body, gzip/deflate undone. */
function parseAnswer(raw: Buffer): Answer {
  const split = raw.indexOf('\r\n\r\n');
  const [statusLine, ...lines] = raw.subarray(0, split).toString('latin1').split('\r\n');
  const status = Number(statusLine.split(' ')[1]);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = raw.subarray(split + 4);
  if (headers['transfer-encoding'] === 'chunked') {
    const parts: Buffer[] = [];
    let at = 0;
    while (true) {
      const end = body.indexOf('\r\n', at);
      const size = Number.parseInt(body.subarray(at, end).toString(), 16);
      if (size === 0) break;
      parts.push(body.subarray(end + 2, end + 2 + size));
      at = end + 2 + size + 2;
    }
    body = Buffer.concat(parts);
  } else if (headers['content-length'] !== undefined) {
    body = body.subarray(0, Number(headers['content-length']));
  }
  if (headers['content-encoding'] === 'gzip') body = gunzipSync(body);
  if (headers['content-encoding'] === 'deflate') body = inflateSync(body);
  return { status, headers, body: body.toString('utf8') };
}

/** A request as Faraday 0.9 over Ruby's net/http writes it (header names capitalised, Connection: close). */
function hasteGemRequest(
  text: string,
  options: { contentType?: string | null; token?: string } = {},
): Buffer {
  // The gem right-strips what it reads (`data.rstrip!`) before posting it.
  const body = Buffer.from(text.trimEnd(), 'utf8');
  const contentType =
    options.contentType === undefined ? 'application/x-www-form-urlencoded' : options.contentType;
  const head = [
    'POST /documents HTTP/1.1',
    'User-Agent: Faraday v0.9.2',
    ...(options.token ? [`Authorization: Bearer ${options.token}`] : []),
    'Accept-Encoding: gzip;q=1.0,deflate;q=0.6,identity;q=0.3',
    'Accept: */*',
    'Connection: close',
    `Host: 127.0.0.1:${port}`,
    ...(contentType === null ? [] : [`Content-Type: ${contentType}`]),
    `Content-Length: ${body.length}`,
  ];
  return Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1'), body]);
}

/** What the gem does with the answer: the key from a 200's JSON, anything else is a failure it prints. */
function keyAsTheGemReadsIt(answer: Answer): string {
  assert.equal(answer.status, 200, `the gem fails: failure uploading: ${answer.body}`);
  const key = JSON.parse(answer.body).key;
  assert.equal(typeof key, 'string');
  return key;
}

async function get(path: string, headers: Record<string, string> = {}) {
  return fetch(`${origin}${path}`, { headers, redirect: 'manual' });
}

const SOURCE = 'def greet(name)\n  puts "héllo, #{name} ✓"\nend\n\n\n';

describe('the haste client flow, replayed byte for byte', () => {
  for (const [label, contentType] of [
    ['the `haste` gem (net/http labels the raw body x-www-form-urlencoded)', undefined],
    ['a raw body without Content-Type', null],
    ['an editor plugin posting text/plain', 'text/plain; charset=utf-8'],
  ] as const) {
    test(`${label}: 200 {"key"}, then the printed links, /documents/{key} and /raw/{key} give the text`, async () => {
      const answer = await exchange(hasteGemRequest(SOURCE, { contentType }));
      const key = keyAsTheGemReadsIt(answer);
      assert.match(key, /^[0-9A-Za-z]{6}$/);
      assert.deepEqual(JSON.parse(answer.body), { key });
      assert.match(answer.headers['content-type'], /^application\/json/);
      assert.equal(answer.headers.location, `/documents/${key}`);
      assert.match(answer.headers['x-delete-token'], /^dt_/);
      const text = SOURCE.trimEnd();

      // The old CLI prints `$HASTE_SERVER/{key}`: curl and browsers open it.
      const printed = await get(`/${key}`, { accept: '*/*' });
      assert.equal(printed.status, 200);
      assert.equal(await printed.text(), text);
      // The current CLI prints `$HASTE_SHARE_SERVER/share/{key}`.
      const shared = await get(`/share/${key}`);
      assert.equal(shared.status, 302);
      assert.equal(shared.headers.get('location'), `/${key}`);

      const document = await get(`/documents/${key}`);
      assert.equal(document.status, 200);
      assert.match(String(document.headers.get('content-type')), /^application\/json/);
      assert.deepEqual(await document.json(), { key, data: text });
      // haste keys may carry an extension (`abc123.rb`); it names the same document.
      assert.deepEqual(await (await get(`/documents/${key}.rb`)).json(), { key, data: text });

      const raw = await get(`/raw/${key}`);
      assert.equal(raw.status, 200);
      assert.match(String(raw.headers.get('content-type')), /^text\/plain/);
      assert.equal(await raw.text(), text);
      assert.equal(await (await get(`/raw/${key}.rb`)).text(), text);
    });
  }

  test("with HASTE_SERVER_TOKEN set to a paste API key, the paste is that account's", async () => {
    const user = await createUser(t.app);
    const key = keyAsTheGemReadsIt(await exchange(hasteGemRequest('mine\n', { token: user.api_key })));
    const mine = await t.app.inject({ url: '/api/v1/users/me/pastes', headers: user.auth });
    assert.deepEqual(
      mine.json().pastes.map((paste: { short_url: string }) => paste.short_url),
      [key],
    );
    // A wrong key is refused as on every route (401), with the haste `message`.
    const wrong = await exchange(hasteGemRequest('x', { token: 'pk_nobody' }));
    assert.equal(wrong.status, 401);
    assert.equal(JSON.parse(wrong.body).message, JSON.parse(wrong.body).detail);
  });

  test('errors are problem+json with the `message` haste clients show', async () => {
    const missing = await get('/documents/nope42');
    assert.equal(missing.status, 404);
    assert.match(String(missing.headers.get('content-type')), /^application\/problem\+json/);
    const problem = await missing.json();
    assert.equal(problem.code, 'paste_not_found');
    assert.equal(problem.message, problem.detail);
    assert.ok(problem.message.length > 0);
    const rawMissing = await (await get('/raw/nope42')).json();
    assert.equal(rawMissing.message, rawMissing.detail);

    // The gem strips trailing whitespace: a blank file posts an empty body.
    const blank = await exchange(hasteGemRequest('\n\n'));
    assert.equal(blank.status, 400);
    assert.equal(JSON.parse(blank.body).code, 'invalid_option');
    assert.equal(JSON.parse(blank.body).message, JSON.parse(blank.body).detail);

    // Over 10 MB: refused on Content-Length before the body is sent.
    const tooLarge = await exchange(
      Buffer.from(
        `POST /documents HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: ${10 * 1024 * 1024 + 1}\r\nConnection: close\r\n\r\n`,
      ),
    );
    assert.equal(tooLarge.status, 413);
    assert.equal(JSON.parse(tooLarge.body).message, JSON.parse(tooLarge.body).detail);

    const binary = await t.app.inject({
      method: 'POST',
      url: '/documents',
      headers: { 'content-type': 'application/octet-stream' },
      payload: Buffer.from([0x41, 0x00, 0x42]),
      remoteAddress: freshIp(),
    });
    assert.equal(assertProblem(binary, 422, 'content_binary').message, binary.json().detail);
  });

  test('the create limits are the paste service’s: 30 per address, then 429 with Retry-After and `message`', async () => {
    const address = freshIp();
    const post = () =>
      t.app.inject({
        method: 'POST',
        url: '/documents',
        headers: { 'content-type': 'text/plain' },
        payload: `spam ${randomUUID()}`,
        remoteAddress: address,
      });
    for (let i = 0; i < 30; i++) assert.equal((await post()).statusCode, 200);
    const refused = await post();
    const problem = assertProblem(refused, 429, 'too_many_pastes');
    assert.equal(problem.message, problem.detail);
    assert.ok(Number(refused.headers['retry-after']) > 0);
    assert.match(String(refused.headers['ratelimit-policy']), /"paste\.create\.anon";q=30;w=600/);
  });

  test('options in the query string, Idempotency-Key replays the same key, burn-after-read burns on /documents', async () => {
    const headers = { 'content-type': 'text/plain', 'idempotency-key': randomUUID() };
    const remoteAddress = freshIp();
    const first = await t.app.inject({
      method: 'POST',
      url: '/documents?burn_after_read=true&expires_in=600',
      headers,
      payload: 'once',
      remoteAddress,
    });
    assert.equal(first.statusCode, 200, first.body);
    const again = await t.app.inject({
      method: 'POST',
      url: '/documents?burn_after_read=true&expires_in=600',
      headers,
      payload: 'once',
      remoteAddress,
    });
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.json(), first.json());
    const { key } = first.json();
    const read = await get(`/documents/${key}`);
    assert.deepEqual(await read.json(), { key, data: 'once' });
    assert.equal(read.headers.get('cache-control'), 'private, no-store');
    const gone = await get(`/documents/${key}`);
    assert.equal(gone.status, 410);
    assert.equal((await gone.json()).code, 'paste_deleted');

    const bad = await t.app.inject({
      method: 'POST',
      url: '/documents?expires_in=5',
      headers: { 'content-type': 'text/plain' },
      payload: 'x',
      remoteAddress: freshIp(),
    });
    assert.equal(assertProblem(bad, 400, 'validation_failed').message, bad.json().detail);
  });

  test('a password paste answers /documents and /raw with X-Paste-Password only', async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: '/documents?password=sesame',
      headers: { 'content-type': 'text/plain' },
      payload: 'locked',
      remoteAddress: freshIp(),
    });
    const { key } = created.json();
    const refused = await get(`/raw/${key}`);
    assert.equal(refused.status, 401);
    assert.equal((await refused.json()).code, 'password_required');
    const opened = await get(`/raw/${key}`, { 'x-paste-password': 'sesame' });
    assert.equal(await opened.text(), 'locked');
  });
});
