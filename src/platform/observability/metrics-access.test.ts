import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createTestAdapters, type TestAdapters, testConfig } from '../../../test/support/platform.ts';
import { type App, buildApp } from '../../app.ts';
import { listenMetrics } from '../../server.ts';

/** `/metrics` limited to a token (METRICS_TOKEN) and/or moved to a port of its own (METRICS_PORT). */
const TOKEN = 'scrape-token-0123456789abcdef';
const built: { app: App; adapters: TestAdapters }[] = [];

async function appWith(env: Record<string, string>) {
  const config = testConfig(env, ['paste']);
  const adapters = await createTestAdapters(config);
  const app = await buildApp(config, adapters, { logger: false, routes: false });
  await app.ready();
  built.push({ app, adapters });
  return { app, config };
}

after(async () => {
  for (const { app, adapters } of built) {
    await app.close();
    await adapters.close();
  }
});

function assertUnauthorized(response: Awaited<ReturnType<App['inject']>>) {
  assert.equal(response.statusCode, 401);
  assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
  assert.equal(response.json().code, 'unauthorized');
  assert.match(String(response.headers['www-authenticate']), /^Bearer/);
}

describe('METRICS_TOKEN', () => {
  let app: App;
  before(async () => {
    ({ app } = await appWith({ METRICS_TOKEN: TOKEN }));
  });

  test('without the token, or with a wrong one, /metrics is a 401 problem', async () => {
    assertUnauthorized(await app.inject('/metrics'));
    for (const authorization of [`Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, TOKEN, 'Bearer ']) {
      assertUnauthorized(await app.inject({ url: '/metrics', headers: { authorization } }));
    }
  });

  test('with the token, the scraper reads the metrics', async () => {
    const response = await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(response.statusCode, 200);
    assert.match(response.body, /# TYPE http_request_duration_seconds histogram/);
  });

  test('the rest of the app needs no token', async () => {
    assert.equal((await app.inject('/health/live')).statusCode, 200);
  });

  test('a short token is refused at start-up', () => {
    assert.throws(() => testConfig({ METRICS_TOKEN: 'short' }), /METRICS_TOKEN/);
  });
});

describe('METRICS_PORT', () => {
  test('the metrics are served on their own port only, behind the token', async () => {
    const { app, config } = await appWith({
      METRICS_PORT: '0',
      METRICS_HOST: '127.0.0.1',
      METRICS_TOKEN: TOKEN,
    });
    assert.equal((await app.inject('/metrics')).statusCode, 404, 'not on the API port');
    const metrics = await listenMetrics(config, app);
    try {
      const { port } = metrics.server.address() as { port: number };
      const url = `http://127.0.0.1:${port}/metrics`;
      assert.equal((await fetch(url)).status, 401);
      const response = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(response.status, 200);
      assert.match(await response.text(), /# TYPE queue_messages_total counter/);
      assert.equal((await fetch(`http://127.0.0.1:${port}/health/live`)).status, 404, 'nothing else there');
      // What the HTTP parser refuses there is problem+json with a request id too.
      const refused = await rawRequest(
        port,
        `GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(config.maxHeaderBytes + 1)}\r\n\r\n`,
      );
      const [head, body] = refused.split('\r\n\r\n');
      assert.match(head, /^HTTP\/1\.1 431 /, refused);
      assert.match(head, /\r\ncontent-type: application\/problem\+json/i);
      const requestId = /\r\nx-request-id: (\S+)/i.exec(head)?.[1];
      assert.ok(requestId, head);
      const problem = JSON.parse(body);
      assert.equal(problem.status, 431);
      assert.equal(problem.code, 'headers_too_large');
      assert.equal(problem.requestId, requestId);
    } finally {
      await metrics.close();
    }
  });
});

/** Writes `text` on a raw connection and resolves with all it received once the server closed it. */
function rawRequest(port: number, text: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk;
    });
    socket.on('close', () => resolve(received));
    // A reset after the answer is the server closing early; what arrived is what is asserted.
    socket.on('error', () => {});
    socket.setTimeout(5000, () => socket.destroy());
    socket.write(text);
  });
}
