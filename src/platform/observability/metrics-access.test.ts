import assert from 'node:assert/strict';
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
    } finally {
      await metrics.close();
    }
  });
});
