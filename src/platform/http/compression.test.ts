import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { lotEnv } from '../../../test/support/parking.ts';
import { createPaste } from '../../../test/support/paste.ts';
import {
  createTestAdapters,
  createTestApp,
  type TestAdapters,
  testConfig,
} from '../../../test/support/platform.ts';
import { sseEvents } from '../../../test/support/sse-reader.ts';
import { type App, buildApp } from '../../app.ts';
import { ConfigError, loadConfig } from '../config.ts';

let app: App;
let adapters: TestAdapters;
let base: string;
let orders = 0;

before(async () => {
  const config = testConfig(lotEnv(), ['paste', 'parking']);
  adapters = await createTestAdapters(config);
  app = await buildApp(config, adapters, { logger: false });
  // An idempotent answer over the threshold: its stored copy must be the body, not its gzip.
  app.post(
    '/big-orders',
    { config: { access: { public: true }, idempotency: { scope: 'big-orders' } }, compress: {} },
    async (_request, reply) => {
      orders++;
      return reply
        .code(201)
        .send({ order: orders, lines: Array.from({ length: 200 }, (_, i) => `line ${i}`) });
    },
  );
  // A command that did not ask for compression: answered as it is, however large.
  app.post('/big-command', { config: { access: { public: true } } }, async () => ({
    lines: Array.from({ length: 200 }, (_, i) => `line ${i}`),
  }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
});
after(async () => {
  await app.close();
  await adapters.close();
});

const get = (url: string, headers: Record<string, string> = {}) =>
  app.inject({ method: 'GET', url, headers });

describe('compression', () => {
  test('/openapi.json with Accept-Encoding gzip comes back gzip and decodes to the same JSON', async () => {
    const plain = await get('/openapi.json');
    assert.equal(plain.headers['content-encoding'], undefined);
    const zipped = await get('/openapi.json', { 'accept-encoding': 'gzip' });
    assert.equal(zipped.statusCode, 200);
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    assert.match(String(zipped.headers.vary), /accept-encoding/i);
    const decoded = gunzipSync(zipped.rawPayload);
    assert.ok(zipped.rawPayload.length < decoded.length / 4, 'it got smaller');
    assert.deepEqual(JSON.parse(decoded.toString('utf8')), plain.json());
  });

  test('br and deflate when the client prefers them; identity when it asks for nothing', async () => {
    const plain = (await get('/openapi.json')).json();
    const br = await get('/openapi.json', { 'accept-encoding': 'br;q=1, gzip;q=0.5' });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.deepEqual(JSON.parse(brotliDecompressSync(br.rawPayload).toString('utf8')), plain);
    const deflate = await get('/openapi.json', { 'accept-encoding': 'deflate' });
    assert.equal(deflate.headers['content-encoding'], 'deflate');
    assert.deepEqual(JSON.parse(inflateSync(deflate.rawPayload).toString('utf8')), plain);
    const identity = await get('/openapi.json', { 'accept-encoding': 'identity' });
    assert.equal(identity.headers['content-encoding'], undefined);
  });

  test('a small response is sent as it is', async () => {
    const response = await get('/health/live', { 'accept-encoding': 'gzip' });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-encoding'], undefined);
  });

  test('the raw paste decodes to the same bytes, keeps its ETag and 304, and HEAD and benchmarks get identity', async () => {
    const content = `naïve café — ${'0123456789abcdef\r\n'.repeat(400)}\ttab, emoji 🐘, trailing spaces   `;
    const { short_url } = await createPaste(app, { content });
    const url = `/${short_url}/raw`;
    const plain = await get(url);
    assert.equal(plain.headers['content-encoding'], undefined, 'no Accept-Encoding (autocannon): identity');
    assert.equal(plain.body, content);
    const zipped = await get(url, { 'accept-encoding': 'gzip, deflate, br' });
    assert.equal(zipped.statusCode, 200);
    assert.equal(zipped.headers['content-encoding'], 'br');
    assert.ok(zipped.rawPayload.length < Buffer.byteLength(content) / 4);
    assert.ok(brotliDecompressSync(zipped.rawPayload).equals(Buffer.from(content, 'utf8')), 'byte for byte');
    assert.equal(zipped.headers['content-type'], plain.headers['content-type']);
    assert.ok(plain.headers.etag);
    assert.equal(zipped.headers.etag, plain.headers.etag);
    const again = await get(url, { 'accept-encoding': 'gzip', 'if-none-match': String(zipped.headers.etag) });
    assert.equal(again.statusCode, 304);
    assert.equal(again.rawPayload.length, 0);
    const head = await app.inject({ method: 'HEAD', url, headers: { 'accept-encoding': 'gzip' } });
    assert.equal(head.statusCode, 200);
    assert.equal(head.rawPayload.length, 0);
    assert.equal(head.headers.etag, plain.headers.etag);
  });

  test("a paste's JSON compresses itself: same codings, Vary, its ETag and 304, identity without Accept-Encoding", async () => {
    const { short_url } = await createPaste(app, { content: 'let x = 1;\n'.repeat(400) });
    const url = `/api/v1/paste/${short_url}`;
    const plain = await get(url);
    assert.equal(plain.headers['content-encoding'], undefined);
    const withoutViews = (json: Record<string, unknown>) => ({ ...json, views: 0 });
    const decoders = { br: brotliDecompressSync, gzip: gunzipSync, deflate: inflateSync };
    for (const [accept, encoding] of [
      ['gzip, deflate, br', 'br'],
      ['gzip', 'gzip'],
      ['x-gzip', 'gzip'],
      ['br;q=0.1, deflate', 'deflate'],
    ] as const) {
      const coded = await get(url, { 'accept-encoding': accept });
      assert.equal(coded.statusCode, 200);
      assert.equal(coded.headers['content-encoding'], encoding, accept);
      assert.match(String(coded.headers.vary), /accept-encoding/);
      assert.equal(coded.headers.etag, plain.headers.etag);
      assert.ok(coded.rawPayload.length < plain.rawPayload.length / 4);
      const decoded = JSON.parse(decoders[encoding](coded.rawPayload).toString('utf8'));
      assert.deepEqual(withoutViews(decoded), withoutViews(plain.json()));
    }
    for (const accept of ['identity', 'gzip;q=0, br;q=0, deflate;q=0']) {
      const identity = await get(url, { 'accept-encoding': accept });
      assert.equal(identity.headers['content-encoding'], undefined, accept);
      assert.equal(identity.json().content, plain.json().content);
    }
    const again = await get(url, { 'accept-encoding': 'br', 'if-none-match': String(plain.headers.etag) });
    assert.equal(again.statusCode, 304);
    assert.equal(again.rawPayload.length, 0);
    const off = await createTestApp({ services: ['paste'], env: { COMPRESSION_MIN_BYTES: 'off' } });
    try {
      const created = await createPaste(off.app, { content: 'let x = 1;\n'.repeat(400) });
      const response = await off.app.inject({
        url: `/api/v1/paste/${created.short_url}`,
        headers: { 'accept-encoding': 'gzip' },
      });
      assert.equal(response.headers['content-encoding'], undefined);
    } finally {
      await off.close();
    }
  });

  test('a command (POST) is compressed only when its route asks', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/big-command',
      headers: { 'accept-encoding': 'gzip', 'content-type': 'application/json' },
      payload: '{}',
    });
    assert.equal(response.statusCode, 200);
    assert.ok(response.rawPayload.length > 2048);
    assert.equal(response.headers['content-encoding'], undefined);
    assert.equal(response.json().lines.length, 200);
  });

  test('an idempotent replay of a compressed answer is the same answer', async () => {
    const headers = {
      'accept-encoding': 'gzip',
      'idempotency-key': 'compressed-1',
      'content-type': 'application/json',
    };
    const first = await app.inject({ method: 'POST', url: '/big-orders', headers, payload: '{}' });
    assert.equal(first.statusCode, 201);
    assert.equal(first.headers['content-encoding'], 'gzip');
    const replay = await app.inject({ method: 'POST', url: '/big-orders', headers, payload: '{}' });
    assert.equal(replay.statusCode, 201);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.deepEqual(
      JSON.parse(gunzipSync(replay.rawPayload).toString('utf8')),
      JSON.parse(gunzipSync(first.rawPayload).toString('utf8')),
    );
    const plain = await app.inject({
      method: 'POST',
      url: '/big-orders',
      headers: { ...headers, 'accept-encoding': 'identity' },
      payload: '{}',
    });
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(plain.json().order, 1);
    assert.equal(orders, 1);
  });

  test('an SSE stream is never compressed: each event goes out as it happens', async () => {
    const controller = new AbortController();
    try {
      const response = await fetch(`${base}/api/v1/parking/boards/stream`, {
        headers: { 'accept-encoding': 'gzip, deflate, br' },
        signal: controller.signal,
      });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'text/event-stream; charset=utf-8');
      assert.equal(response.headers.get('content-encoding'), null);
      assert.deepEqual((await sseEvents(response).next()).event, 'boards');
    } finally {
      controller.abort();
    }
  });
});

describe('COMPRESSION_MIN_BYTES', () => {
  test('is 1024 by default, off leaves compression to the proxy, anything else is refused naming it', () => {
    assert.equal(loadConfig([], {}).compressionMinBytes, 1024);
    assert.equal(loadConfig([], { COMPRESSION_MIN_BYTES: '4096' }).compressionMinBytes, 4096);
    assert.equal(loadConfig([], { COMPRESSION_MIN_BYTES: 'off' }).compressionMinBytes, undefined);
    for (const bad of ['1k', '-1', 'no']) {
      assert.throws(
        () => loadConfig([], { COMPRESSION_MIN_BYTES: bad }),
        (error: Error) =>
          error instanceof ConfigError && /^COMPRESSION_MIN_BYTES must be/.test(error.message),
      );
    }
  });

  test('the health probes run no compression hooks, however low the threshold', async () => {
    const t = await createTestApp({ services: ['paste'], env: { COMPRESSION_MIN_BYTES: '1' } });
    try {
      const headers = { 'accept-encoding': 'gzip' };
      for (const url of ['/health/live', '/health/ready']) {
        const probe = await t.app.inject({ url, headers });
        assert.equal(probe.statusCode, 200, url);
        assert.equal(probe.headers['content-encoding'], undefined, url);
        assert.equal(probe.json().status, 'ok', url);
      }
      // The same threshold compresses any other small read.
      const read = await t.app.inject({ url: '/api/v1/paste/languages', headers });
      assert.equal(read.statusCode, 200);
      assert.equal(read.headers['content-encoding'], 'gzip');
    } finally {
      await t.close();
    }
  });

  test('off: nothing is compressed', async () => {
    const t = await createTestApp({ services: ['paste'], env: { COMPRESSION_MIN_BYTES: 'off' } });
    try {
      const response = await t.app.inject({ url: '/openapi.json', headers: { 'accept-encoding': 'gzip' } });
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['content-encoding'], undefined);
      assert.ok(response.json().openapi);
    } finally {
      await t.close();
    }
  });
});
