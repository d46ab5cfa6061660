import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { open, seal } from '../../test/support/envelope.ts';
import { assertProblem, createPaste, freshIp } from '../../test/support/paste.ts';
import { createTestApp, type TestApp } from '../../test/support/platform.ts';

/**
 * End-to-end encrypted pastes on the server's side: the API takes an envelope and checks its
 * shape, stores and serves it as it came, never as text (/raw, the curl answer of /{id}, the haste
 * reads say 409 `paste_encrypted`, and burn nothing), the page carries it to the browser without
 * highlighting, and dedup keeps working on ciphertext.
 */
let t: TestApp;
before(async () => {
  t = await createTestApp({ services: ['paste'] });
});
after(() => t.close());

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const SECRET = 'const password = "hunter2"; // do not share\n';
const countPastes = async () =>
  Number(
    (await sql<{ n: string }>`select count(*) as n from pastes`.execute(t.adapters.database.db)).rows[0].n,
  );

describe('the API', () => {
  test('takes an envelope, answers it back with `encryption`, and a client with the key decrypts it', async () => {
    const { envelope, key } = seal(SECRET);
    const created = await createPaste(t.app, {
      content: envelope,
      encryption: 'aes-256-gcm',
      expires_in: 600,
    });
    const read = await t.app.inject({ url: `/api/v1/paste/${created.short_url}` });
    assert.equal(read.statusCode, 200);
    const body = read.json();
    assert.equal(body.encryption, 'aes-256-gcm');
    assert.equal(body.content, envelope);
    assert.equal(body.syntax, null);
    assert.equal(read.headers['cache-control'], 'no-store');
    assert.equal(open(body.content, key), SECRET);

    // A plain paste's JSON keeps its shape: no `encryption` member.
    const plain = await createPaste(t.app, { content: 'plain' });
    const plainRead = await t.app.inject({ url: `/api/v1/paste/${plain.short_url}` });
    assert.equal('encryption' in plainRead.json(), false);
  });

  test('with a password mixed into the key (flag 1), from a raw body with ?encryption=', async () => {
    const { envelope, key } = seal(SECRET, { password: 'correct horse', iterations: 100_000 });
    const created = await t.app.inject({
      method: 'POST',
      url: '/paste?encryption=aes-256-gcm',
      headers: { 'content-type': 'text/plain' },
      payload: envelope,
      remoteAddress: freshIp(),
    });
    assert.equal(created.statusCode, 201, created.body);
    const id = created.body.trim().split('/').pop();
    const read = await t.app.inject({ url: `/api/v1/paste/${id}` });
    assert.equal(open(read.json().content, key, 'correct horse'), SECRET);
    assert.throws(() => open(read.json().content, key, 'wrong'));
  });

  test('/raw, the curl answer of /{id} and the haste reads say 409 paste_encrypted, and burn nothing', async () => {
    const { envelope, key } = seal(SECRET);
    const { short_url } = await createPaste(t.app, {
      content: envelope,
      encryption: 'aes-256-gcm',
      burn_after_read: true,
    });
    for (const url of [
      `/${short_url}/raw`,
      `/${short_url}`,
      `/raw/${short_url}`,
      `/documents/${short_url}`,
    ]) {
      const answer = await t.app.inject({ url, headers: { accept: '*/*' } });
      const problem = assertProblem(answer, 409, 'paste_encrypted');
      assert.equal(problem.encryption, 'aes-256-gcm');
      assert.match(problem.detail, /end-to-end encrypted/);
      assert.doesNotMatch(answer.body, new RegExp(envelope.slice(0, 20).replace(/[+/]/g, '\\$&')));
    }
    // Still there: the one read that burns it is the browser's (or the API's).
    const burned = await t.app.inject({ url: `/api/v1/paste/${short_url}` });
    assert.equal(burned.statusCode, 200);
    assert.equal(open(burned.json().content, key), SECRET);
    assert.equal((await t.app.inject({ url: `/api/v1/paste/${short_url}` })).statusCode, 410);
  });

  /**
   * An envelope whose base64 has a `+` or `/` (random ciphertext has neither about one time in 25),
   * so its base64url spelling really differs from base64.
   */
  const withUrlUnsafeCharacters = () => {
    for (;;) {
      const { envelope } = seal(SECRET);
      if (/[+/]/.test(envelope)) return envelope;
    }
  };
  const base64url = (text: string) => text.replace(/\+/g, '-').replace(/\//g, '_');

  test('a malformed envelope or a secret the server must not see is a 400, and nothing is stored', async () => {
    const { envelope } = seal(SECRET);
    const bytes = Buffer.from(envelope, 'base64');
    const variant = (change: (copy: Buffer) => Buffer) => change(Buffer.from(bytes)).toString('base64');
    const cases: [string, Record<string, unknown>, string][] = [
      ['not base64', { content: 'hello world' }, 'content'],
      ['base64url', { content: base64url(withUrlUnsafeCharacters()) }, 'content'],
      [
        'version 2',
        {
          content: variant((copy) => {
            copy[0] = 2;
            return copy;
          }),
        },
        'content',
      ],
      [
        'unknown flags',
        {
          content: variant((copy) => {
            copy[1] = 4;
            return copy;
          }),
        },
        'content',
      ],
      ['no ciphertext', { content: variant((copy) => copy.subarray(0, 14 + 16)) }, 'content'],
      [
        'too few iterations',
        { content: seal(SECRET, { password: 'p', iterations: 1000 }).envelope },
        'content',
      ],
      ['a password', { content: envelope, password: 'sent to the server' }, 'password'],
      ['a syntax', { content: envelope, syntax: 'python' }, 'syntax'],
    ];
    const before = await countPastes();
    for (const [label, body, field] of cases) {
      const answer = await t.app.inject({
        method: 'POST',
        url: '/api/v1/paste',
        payload: { encryption: 'aes-256-gcm', ...body },
        remoteAddress: freshIp(),
      });
      const problem = assertProblem(answer, 400, 'invalid_option');
      assert.deepEqual(
        problem.errors.map((error: { field: string }) => error.field),
        [field],
        label,
      );
    }
    const unknown = await t.app.inject({
      method: 'POST',
      url: '/api/v1/paste',
      payload: { encryption: 'rot13', content: envelope },
      remoteAddress: freshIp(),
    });
    assertProblem(unknown, 400, 'validation_failed');
    assert.equal(await countPastes(), before);
  });

  test('dedup works on ciphertext: the same text twice is two blobs, the same envelope twice is one', async () => {
    const first = seal(SECRET);
    const second = seal(SECRET);
    const a = await createPaste(t.app, { content: first.envelope, encryption: 'aes-256-gcm' });
    const b = await createPaste(t.app, { content: second.envelope, encryption: 'aes-256-gcm' });
    const c = await createPaste(t.app, { content: first.envelope, encryption: 'aes-256-gcm' });
    const { rows } = await sql<{ short_url: string; content_hash: string }>`
      select short_url, content_hash from pastes
      where short_url in (${a.short_url}, ${b.short_url}, ${c.short_url})`.execute(t.adapters.database.db);
    const hash = Object.fromEntries(rows.map((row) => [row.short_url, row.content_hash]));
    assert.notEqual(hash[a.short_url], hash[b.short_url]);
    assert.equal(hash[a.short_url], hash[c.short_url]);
    for (const [id, key] of [
      [a.short_url, first.key],
      [b.short_url, second.key],
      [c.short_url, first.key],
    ]) {
      const read = await t.app.inject({ url: `/api/v1/paste/${id}` });
      assert.equal(open(read.json().content, key), SECRET);
    }
  });
});

describe('the page', () => {
  const page = (url: string) => t.app.inject({ url, headers: { accept: BROWSER_ACCEPT } });

  test('carries the envelope to the browser script, unhighlighted, under the same CSP', async () => {
    const { envelope } = seal('function f() { return 1; }\n');
    const { short_url } = await createPaste(t.app, { content: envelope, encryption: 'aes-256-gcm' });
    const answer = await page(`/${short_url}`);
    assert.equal(answer.statusCode, 200);
    assert.match(answer.body, new RegExp(`data-envelope="${envelope.replace(/[+/]/g, '\\$&')}"`));
    assert.match(answer.body, /<script type="module" src="\/static\/paste\/encrypted\.js"><\/script>/);
    assert.doesNotMatch(answer.body, /hljs-keyword|language-/);
    assert.doesNotMatch(answer.body, /href="\/[0-9A-Za-z]+\/raw"/, 'no raw or download links');
    assert.match(String(answer.headers['content-security-policy']), /script-src 'self';/);
    assert.equal(answer.headers['cache-control'], 'private, no-store');
    const script = await t.app.inject({ url: '/static/paste/encrypted.js' });
    assert.equal(script.statusCode, 200);
    assert.match(String(script.headers['content-type']), /javascript/);
  });

  test('a burn-after-read encrypted paste asks first, then the button burns it and carries the envelope', async () => {
    const { envelope } = seal(SECRET);
    const { short_url } = await createPaste(t.app, {
      content: envelope,
      encryption: 'aes-256-gcm',
      burn_after_read: true,
    });
    const asked = await page(`/${short_url}`);
    assert.match(asked.body, /Show it and burn it/);
    assert.match(asked.body, /encrypted\.js/, 'the script keeps the key on the page the button posts to');
    assert.doesNotMatch(asked.body, /data-envelope/);
    const shown = await t.app.inject({
      method: 'POST',
      url: `/${short_url}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: BROWSER_ACCEPT },
      payload: '',
    });
    assert.equal(shown.statusCode, 200);
    assert.match(shown.body, /data-envelope=/);
    assert.match(shown.body, /burned after this read/);
    assert.equal((await page(`/${short_url}`)).statusCode, 410);
  });

  test('expires like any paste', async () => {
    const { envelope } = seal(SECRET);
    const { short_url } = await createPaste(t.app, {
      content: envelope,
      encryption: 'aes-256-gcm',
      expires_in: 60,
    });
    assert.equal((await page(`/${short_url}`)).statusCode, 200);
    t.clock.advance(61_000);
    assert.equal((await page(`/${short_url}`)).statusCode, 410);
    assert.equal((await t.app.inject({ url: `/api/v1/paste/${short_url}` })).statusCode, 410);
  });

  test('the create form offers encryption only through its script: the checkbox has no name and starts hidden', async () => {
    const form = await page('/paste');
    assert.match(
      form.body,
      /<label class="check encrypt-option" hidden><input type="checkbox" id="encrypt">/,
    );
    assert.match(form.body, /src="\/static\/paste\/encrypted\.js"/);
  });
});
