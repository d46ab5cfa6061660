import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { lotEnv } from '../../../test/support/parking.ts';
import { createUser } from '../../../test/support/paste.ts';
import { createTestApp, type TestApp } from '../../../test/support/platform.ts';
import { ConfigError, loadConfig } from '../config.ts';

const LISTED = 'https://app.example.org';
const STRANGER = 'https://elsewhere.example.net';

let t: TestApp;

before(async () => {
  t = await createTestApp({
    services: ['paste', 'parking'],
    env: { ...lotEnv(), CORS_ORIGINS: `${LISTED}, http://localhost:5173` },
  });
});
after(() => t.close());

function preflight(url: string, origin: string, method: string, requestHeaders?: string) {
  return t.app.inject({
    method: 'OPTIONS',
    url,
    headers: {
      origin,
      'access-control-request-method': method,
      ...(requestHeaders ? { 'access-control-request-headers': requestHeaders } : {}),
    },
  });
}

const allowedHeaders = (response: LightMyRequestResponse) =>
  String(response.headers['access-control-allow-headers'] ?? '').split(', ');

function assertNoCors(response: LightMyRequestResponse) {
  for (const name of Object.keys(response.headers)) assert.doesNotMatch(name, /^access-control-/, name);
}

describe('preflight', () => {
  test('a public GET answers any origin: 204, *, no credentials, its method, the headers a page sends, a max-age', async () => {
    const response = await preflight('/api/v1/paste/languages', STRANGER, 'GET', 'content-type');
    assert.equal(response.statusCode, 204, response.body);
    assert.equal(response.body, '');
    assert.equal(response.headers['access-control-allow-origin'], '*');
    assert.equal(response.headers['access-control-allow-credentials'], undefined);
    assert.equal(response.headers['access-control-allow-methods'], 'GET');
    assert.ok(allowedHeaders(response).includes('content-type'));
    assert.ok(allowedHeaders(response).includes('idempotency-key'));
    assert.ok(!allowedHeaders(response).includes('authorization'), 'no credentials from any origin');
    assert.equal(response.headers['access-control-max-age'], '600');
    assert.equal(response.headers.vary, undefined, 'the same answer for every origin');
  });

  test('a credentialed operation from an origin not in CORS_ORIGINS: 204 without CORS headers', async () => {
    const response = await preflight('/api/v1/users/me/pastes', STRANGER, 'GET', 'authorization');
    assert.equal(response.statusCode, 204);
    assertNoCors(response);
    assert.equal(response.headers.vary, 'Origin');
  });

  test('a credentialed operation from a listed origin: the origin echoed, Vary, its credential headers', async () => {
    const response = await preflight('/api/v1/users/me/pastes', LISTED, 'GET', 'authorization');
    assert.equal(response.statusCode, 204);
    assert.equal(response.headers['access-control-allow-origin'], LISTED);
    assert.equal(response.headers.vary, 'Origin');
    assert.equal(response.headers['access-control-allow-methods'], 'GET');
    assert.ok(allowedHeaders(response).includes('authorization'));
    // A pastebin account key is a header, not a cookie: nothing for the browser to attach by itself.
    assert.equal(response.headers['access-control-allow-credentials'], undefined);
    const other = await preflight('/api/v1/users/me/pastes', 'http://localhost:5173', 'GET');
    assert.equal(other.headers['access-control-allow-origin'], 'http://localhost:5173');
  });

  test('an operation that takes the staff session cookie allows credentials to a listed origin only', async () => {
    const listed = await preflight('/api/v1/parking/entry', LISTED, 'POST', 'content-type, x-operator-key');
    assert.equal(listed.statusCode, 204);
    assert.equal(listed.headers['access-control-allow-origin'], LISTED);
    assert.equal(listed.headers['access-control-allow-credentials'], 'true');
    assert.ok(allowedHeaders(listed).includes('x-operator-key'));
    const stranger = await preflight('/api/v1/parking/entry', STRANGER, 'POST', 'x-operator-key');
    assertNoCors(stranger);
  });

  test('public with optional credentials: any origin without them, a listed origin with them', async () => {
    const stranger = await preflight('/api/v1/paste', STRANGER, 'POST', 'authorization, content-type');
    assert.equal(stranger.headers['access-control-allow-origin'], '*');
    assert.ok(!allowedHeaders(stranger).includes('authorization'), 'an anonymous paste, never an account');
    assert.equal(stranger.headers.vary, 'Origin');
    const listed = await preflight('/api/v1/paste', LISTED, 'POST', 'authorization, content-type');
    assert.equal(listed.headers['access-control-allow-origin'], LISTED);
    assert.ok(allowedHeaders(listed).includes('authorization'));
    const remove = await preflight('/api/v1/paste/abcDEF12', STRANGER, 'DELETE', 'x-delete-token');
    assert.equal(remove.headers['access-control-allow-methods'], 'DELETE');
    assert.ok(allowedHeaders(remove).includes('x-delete-token'), 'the delete token is a capability');
  });

  test('OPTIONS that is not a preflight, or about a method or path nothing answers, keeps its 405 or 404', async () => {
    const plain = await t.app.inject({ method: 'OPTIONS', url: '/api/v1/parking/lot' });
    assert.equal(plain.statusCode, 405);
    assert.equal(plain.headers.allow, 'GET, HEAD');
    const withOrigin = await t.app.inject({
      method: 'OPTIONS',
      url: '/api/v1/parking/lot',
      headers: { origin: STRANGER },
    });
    assert.equal(withOrigin.statusCode, 405);
    const wrongMethod = await preflight('/api/v1/parking/lot', STRANGER, 'PUT');
    assert.equal(wrongMethod.statusCode, 405);
    assertNoCors(wrongMethod);
    assert.equal((await preflight('/no/such/thing', STRANGER, 'GET')).statusCode, 404);
  });
});

describe('the request itself', () => {
  test('a public GET with an Origin: *, and the response headers a page needs exposed', async () => {
    const response = await t.app.inject({
      method: 'GET',
      url: '/api/v1/paste/languages',
      headers: { origin: STRANGER },
    });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['access-control-allow-origin'], '*');
    assert.equal(response.headers['access-control-allow-credentials'], undefined);
    const exposed = String(response.headers['access-control-expose-headers']).split(', ');
    for (const name of ['location', 'etag', 'retry-after', 'ratelimit', 'x-request-id', 'x-delete-token']) {
      assert.ok(exposed.includes(name), name);
    }
  });

  test('a same-origin request (no Origin) carries no CORS headers', async () => {
    assertNoCors(await t.app.inject({ method: 'GET', url: '/api/v1/paste/languages' }));
  });

  test('a credentialed GET: a listed origin may read it (its 401 too), any other may not', async () => {
    const user = await createUser(t.app);
    const listed = await t.app.inject({
      method: 'GET',
      url: '/api/v1/users/me/pastes',
      headers: { origin: LISTED, ...user.auth },
    });
    assert.equal(listed.statusCode, 200);
    assert.equal(listed.headers['access-control-allow-origin'], LISTED);
    assert.equal(listed.headers.vary, 'Origin');
    const refused = await t.app.inject({
      method: 'GET',
      url: '/api/v1/users/me/pastes',
      headers: { origin: LISTED },
    });
    assert.equal(refused.statusCode, 401);
    assert.equal(refused.headers['access-control-allow-origin'], LISTED, 'the page can read why');
    const stranger = await t.app.inject({
      method: 'GET',
      url: '/api/v1/users/me/pastes',
      headers: { origin: STRANGER, ...user.auth },
    });
    assert.equal(stranger.statusCode, 200, 'CORS is for browsers: the server still answers');
    assertNoCors(stranger);
    assert.equal(stranger.headers.vary, 'Origin');
  });

  test('the SSE stream of a public operation carries the CORS headers of its route', async () => {
    const controller = new AbortController();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as { port: number };
    try {
      const response = await fetch(`http://127.0.0.1:${port}/api/v1/parking/boards/stream`, {
        headers: { origin: STRANGER },
        signal: controller.signal,
      });
      assert.equal(response.headers.get('access-control-allow-origin'), '*');
    } finally {
      controller.abort();
    }
  });
});

describe('CORS_ORIGINS', () => {
  test('is empty by default: credentialed operations answer no other origin', () => {
    assert.deepEqual(loadConfig([], {}).corsOrigins, []);
    assert.deepEqual(
      loadConfig([], { CORS_ORIGINS: ' https://a.example, http://localhost:8080 ' }).corsOrigins,
      ['https://a.example', 'http://localhost:8080'],
    );
  });

  test('anything but exact origins is refused, naming the variable', () => {
    for (const bad of [
      '*',
      'app.example.org',
      'https://app.example.org/',
      'https://app.example.org/path',
      'https://App.example.org',
      'https://app.example.org:443',
      'https://*.example.org',
      'null',
      'ftp://files.example.org',
      'https://ok.example.org,https://bad.example.org/',
    ]) {
      assert.throws(
        () => loadConfig([], { CORS_ORIGINS: bad }),
        (error: Error) =>
          error instanceof ConfigError && /^CORS_ORIGINS must list exact origins/.test(error.message),
        bad,
      );
    }
  });

  test('a bad value stops start-up with one line naming it', () => {
    const result = spawnSync(process.execPath, ['src/main.ts'], {
      // Were it accepted, the server would start: on a free port, in memory, until the timeout.
      env: {
        ...process.env,
        CORS_ORIGINS: 'https://app.example.org/',
        DATABASE_URL: '',
        PORT: '0',
        DATA_DIR: 'memory://',
      },
      encoding: 'utf8',
      timeout: 20_000,
      killSignal: 'SIGKILL',
    });
    assert.equal(result.status, 2);
    assert.equal(
      result.stderr.trim(),
      'configuration error: CORS_ORIGINS must list exact origins like https://app.example.org separated by commas ' +
        '(scheme, host and port; no path, no wildcard), got "https://app.example.org/" (did you mean "https://app.example.org"?)',
    );
  });
});
