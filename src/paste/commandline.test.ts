import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { createTestApp, type TestApp } from '../../test/support/platform.ts';
import { MAX_CONTENT_BYTES } from './settings.ts';

/**
 * The command-line forms of issue 24, typed as users type them, with the real curl against a
 * listening server: what curl sends (its Content-Type, the URL `-T` makes, Expect: 100-continue
 * on uploads) is the point, so nothing here is simulated with inject.
 */

let t: TestApp;
let base: string;
let dir: string;
before(async () => {
  t = await createTestApp({ services: ['paste'] });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  dir = mkdtempSync(join(tmpdir(), 'paste-curl-'));
});
after(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

interface CurlAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Runs /usr/bin/curl (asynchronously: the server answering it runs in this process). */
function curl(args: string[], stdin?: string | Buffer): Promise<CurlAnswer> {
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/curl', ['-sS', '-D', '-', ...args]);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk) => out.push(chunk));
    child.stderr.on('data', (chunk) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`curl ${args.join(' ')}: exit ${code}: ${Buffer.concat(err)}`));
      // -D - prints every head (a 100 Continue first on uploads); the last one is the answer's.
      const text = Buffer.concat(out).toString('utf8');
      const heads = text.split('\r\n\r\n');
      let index = 0;
      while (/^HTTP\/[\d.]+ 100/.test(heads[index] ?? '')) index++;
      const [statusLine, ...lines] = heads[index].split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({
        status: Number(statusLine.split(' ')[1]),
        headers,
        body: heads.slice(index + 1).join('\r\n\r\n'),
      });
    });
    child.stdin.end(stdin);
  });
}

function file(name: string, content: string | Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

/** The answer is the paste's URL and a newline, as text; returns its short_url. */
function createdUrl(answer: CurlAnswer): string {
  assert.equal(answer.status, 201, answer.body);
  assert.equal(answer.headers['content-type'], 'text/plain; charset=utf-8');
  const match = /^http:\/\/localhost:3000\/([0-9A-Za-z]{6})\n$/.exec(answer.body);
  assert.ok(match, answer.body);
  assert.match(answer.headers['x-delete-token'], /^dt_/);
  assert.equal(answer.headers.location, `/api/v1/paste/${match[1]}`);
  return match[1];
}

async function storedText(shortUrl: string): Promise<string> {
  const raw = await t.app.inject({ method: 'GET', url: `/${shortUrl}/raw` });
  assert.equal(raw.statusCode, 200);
  return raw.body;
}

async function pasteCount(): Promise<number> {
  const { rows } = await sql<{ n: string }>`select count(*) as n from pastes`.execute(t.adapters.database.db);
  return Number(rows[0].n);
}

/** Text that a careless parser would change: CRLF, a line like a multipart boundary, no final newline. */
const TRICKY = 'first line\r\n--not-a-boundary\r\n\r\nünïcödé ✓ 100% & a=b\n\tlast line, no newline';

describe('curl -F (multipart/form-data, as 0x0.st users type it)', () => {
  test('curl -F file=@f to / and to /paste stores the exact bytes and answers the URL as text', async () => {
    const path = file('notes.txt', TRICKY);
    for (const url of [`${base}/`, `${base}/paste`]) {
      const id = createdUrl(await curl(['-F', `file=@${path}`, url]));
      assert.equal(await storedText(id), TRICKY, url);
    }
    // The JSON API takes the upload too, and answers JSON whatever the body (one 201 type).
    const api = await curl(['-F', `file=@${path}`, `${base}/api/v1/paste`]);
    assert.equal(api.status, 201, api.body);
    assert.match(api.headers['content-type'], /^application\/json/);
    assert.equal(await storedText(JSON.parse(api.body).short_url), TRICKY);
  });

  test('the options come from the other fields or the query string', async () => {
    const path = file('script.py', 'print("hi")\n');
    const id = createdUrl(
      await curl([
        '-F',
        `file=@${path}`,
        '-F',
        'syntax=py',
        '-F',
        'expires_in=3600',
        `${base}/?burn_after_read=false`,
      ]),
    );
    const read = (await t.app.inject({ method: 'GET', url: `/api/v1/paste/${id}` })).json();
    assert.equal(read.content, 'print("hi")\n');
    assert.equal(read.syntax, 'python');
    assert.equal(read.expires_at, new Date(t.clock.now().getTime() + 3_600_000).toISOString());
    const query = createdUrl(await curl(['-F', `file=@${path}`, `${base}/paste?syntax=python`]));
    assert.equal(
      (await t.app.inject({ method: 'GET', url: `/api/v1/paste/${query}` })).json().syntax,
      'python',
    );
  });

  test("a text field works too: -F 'content=<f' and sprunge's -F 'sprunge=<-' from stdin", async () => {
    const path = file('field.txt', 'from a field\n');
    const fromFile = createdUrl(await curl(['-F', `content=<${path}`, `${base}/`]));
    assert.equal(await storedText(fromFile), 'from a field\n');
    const fromStdin = createdUrl(await curl(['-F', 'sprunge=<-', `${base}/`], 'piped in\n'));
    assert.equal(await storedText(fromStdin), 'piped in\n');
  });

  test('oversized, empty, textless or doubled uploads are problem+json and nothing is written', async () => {
    const before = await pasteCount();
    const oneTooMany = file('big.txt', Buffer.alloc(MAX_CONTENT_BYTES + 1, 'a'));
    const tooBig = await curl(['-F', `file=@${oneTooMany}`, `${base}/`]);
    assert.equal(tooBig.status, 413, tooBig.body);
    assert.equal(tooBig.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.equal(JSON.parse(tooBig.body).code, 'content_too_large');
    // Further over: refused on its Content-Length, the rest read and dropped, so curl gets the answer.
    const huge = file('huge.txt', Buffer.alloc(MAX_CONTENT_BYTES + 200 * 1024, 'a'));
    const refused = await curl(['-F', `file=@${huge}`, `${base}/paste`]);
    assert.equal(refused.status, 413, refused.body);
    assert.equal(JSON.parse(refused.body).code, 'content_too_large');

    const empty = await curl(['-F', `file=@${file('empty.txt', '')}`, `${base}/`]);
    assert.equal(empty.status, 400, empty.body);
    assert.equal(empty.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.equal(JSON.parse(empty.body).errors[0].field, 'body.content');
    const textless = await curl(['-F', 'syntax=py', `${base}/paste`]);
    assert.equal(textless.status, 400, textless.body);
    const both = await curl(['-F', `file=@${file('a.txt', 'a')}`, '-F', 'content=b', `${base}/`]);
    assert.equal(both.status, 400, both.body);
    const unknown = await curl(['-F', `file=@${file('b.txt', 'b')}`, '-F', 'colour=red', `${base}/`]);
    assert.equal(unknown.status, 400, unknown.body);
    assert.match(unknown.body, /colour/);
    const binary = await curl([
      '-F',
      `file=@${file('bin.dat', Buffer.from([0x89, 0x50, 0, 0]))}`,
      `${base}/`,
    ]);
    assert.equal(binary.status, 422, binary.body);
    assert.equal(await pasteCount(), before);
  });
});

/**
 * Sends `head`, waits for an answer, sends `body` and then `next` on the same connection; answers
 * the status lines of every response that came before the connection closed.
 */
function answersOnOneConnection(head: string, body: Buffer, next: string): Promise<string[]> {
  return new Promise((resolve) => {
    const socket = connect(Number(new URL(base).port), '127.0.0.1');
    let received = '';
    let sent = false;
    const statuses = () => [...received.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => match[1]);
    const done = () => {
      socket.destroy();
      resolve(statuses());
    };
    socket.on('error', done);
    socket.on('close', done);
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
      if (statuses().length === 1 && !sent) {
        sent = true;
        socket.write(body);
        socket.write(next);
      }
      if (statuses().length === 2) done();
    });
    socket.write(head);
  });
}

test('an upload a little over the limit is refused on its length, read to its end, and the connection goes on', {
  timeout: 60_000,
}, async () => {
  // What curl does after Node's automatic 100 Continue: it sends the whole body while the 413 is
  // on its way. Closing the connection then would show curl's user "Broken pipe", not the answer.
  const size = MAX_CONTENT_BYTES + 200 * 1024;
  const head = `POST /paste HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\nContent-Length: ${size}\r\n\r\n`;
  const statuses = await answersOnOneConnection(
    head,
    Buffer.alloc(size, 'a'),
    'GET /health/live HTTP/1.1\r\nHost: localhost\r\n\r\n',
  );
  assert.deepEqual(statuses, ['413', '200']);
  // Far over, the connection is closed after the answer: nobody's 1 GB is read to be dropped.
  const farOver = head.replace(String(size), String(3 * MAX_CONTENT_BYTES));
  assert.deepEqual(await answersOnOneConnection(farOver, Buffer.alloc(0), ''), ['413']);
});

describe('curl --data-binary @f (x-www-form-urlencoded that is no form)', () => {
  test('to / the file is the text, byte for byte, even when it looks a little like a form', async () => {
    const text = 'a=1&b=2\r\nnot a form: 100% raw, content=inside\n';
    const id = createdUrl(await curl(['--data-binary', `@${file('form-ish.txt', text)}`, `${base}/`]));
    assert.equal(await storedText(id), text);
    const tricky = createdUrl(await curl(['--data-binary', `@${file('tricky.txt', TRICKY)}`, `${base}/`]));
    assert.equal(await storedText(tricky), TRICKY);
  });

  test("the create form's own fields are the form: curl -d 'content=…&syntax=…' to /", async () => {
    const id = createdUrl(await curl(['-d', 'content=x%20%3D%201&syntax=python', `${base}/`]));
    const read = (await t.app.inject({ method: 'GET', url: `/api/v1/paste/${id}` })).json();
    assert.equal(read.content, 'x = 1');
    assert.equal(read.syntax, 'python');
    const empty = await curl(['-d', 'content=', `${base}/`]);
    assert.equal(empty.status, 400, empty.body);
    assert.equal(empty.headers['content-type'], 'application/problem+json; charset=utf-8');
  });
});

describe('curl -T f (PUT)', () => {
  test('to host/paste, host/paste/ (curl appends the name), host/ (the same) and stdin to host/', async () => {
    const path = file('upload.txt', TRICKY);
    for (const url of [`${base}/paste`, `${base}/paste/`, `${base}/`]) {
      const id = createdUrl(await curl(['-T', path, url]));
      assert.equal(await storedText(id), TRICKY, url);
    }
    const piped = createdUrl(await curl(['-T', '-', `${base}/?syntax=python`], 'x = 1\n'));
    const read = (await t.app.inject({ method: 'GET', url: `/api/v1/paste/${piped}` })).json();
    assert.equal(read.content, 'x = 1\n');
    assert.equal(read.syntax, 'python');
  });

  test('too large is 413 and empty 400, problem+json, nothing written', async () => {
    const before = await pasteCount();
    const tooBig = await curl([
      '-T',
      file('big-put.txt', Buffer.alloc(MAX_CONTENT_BYTES + 1, 'a')),
      `${base}/paste`,
    ]);
    assert.equal(tooBig.status, 413, tooBig.body);
    assert.equal(JSON.parse(tooBig.body).code, 'content_too_large');
    const empty = await curl(['-T', file('empty-put.txt', ''), `${base}/paste`]);
    assert.equal(empty.status, 400, empty.body);
    assert.equal(empty.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.equal(await pasteCount(), before);
  });

  test('PUT on a page path or a paste stays a 405 naming what the path answers', async () => {
    for (const path of ['/movies', '/abc123']) {
      const answer = await curl(['-X', 'PUT', '--data-binary', 'x', `${base}${path}`]);
      assert.equal(answer.status, 405, path);
      assert.equal(answer.headers.allow, 'GET, HEAD, POST', path);
    }
  });
});

describe('reading with curl', () => {
  test('curl GET /{id} answers the raw text; a browser gets the page; both vary on Accept', async () => {
    const id = createdUrl(await curl(['--data-binary', `@${file('read.txt', TRICKY)}`, `${base}/paste`]));
    const text = await curl([`${base}/${id}`]);
    assert.equal(text.status, 200);
    assert.equal(text.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(text.body, TRICKY);
    assert.equal(text.headers.vary, 'Accept');
    assert.ok(text.headers.etag);
    const browser = await curl(['-H', 'Accept: text/html,application/xhtml+xml,*/*;q=0.8', `${base}/${id}`]);
    assert.equal(browser.status, 200);
    assert.match(browser.headers['content-type'], /^text\/html/);
    assert.match(browser.body, /<html/);
    assert.equal(browser.headers.vary, 'Accept');
    const missing = await curl([`${base}/zzzzzz`]);
    assert.equal(missing.status, 404);
    assert.equal(missing.headers['content-type'], 'application/problem+json; charset=utf-8');
  });

  test('a burn-after-read paste is not burned by curl GET /{id}: it points to /raw, which reads it once', async () => {
    const id = createdUrl(await curl(['--data-binary', 'secret', `${base}/paste?burn_after_read=true`]));
    const notice = await curl([`${base}/${id}`]);
    assert.equal(notice.status, 200);
    assert.match(notice.body, new RegExp(`curl http://localhost:3000/${id}/raw`));
    assert.equal((await curl([`${base}/${id}/raw`])).body, 'secret');
    assert.equal((await curl([`${base}/${id}`])).status, 410);
  });
});
