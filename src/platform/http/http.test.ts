import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Type } from 'typebox';
import { resolveRefs } from '../../../test/support/openapi.ts';
import { createTestAdapters, type TestAdapters, testConfig } from '../../../test/support/platform.ts';
import { type App, buildApp } from '../../app.ts';
import { createUserTokens } from '../auth/user-tokens.ts';
import { createDatabase } from '../db/index.ts';
import { platformError } from '../errors.ts';
import { setRateLimitHeaders } from '../ratelimit/headers.ts';
import { databaseCheck } from './health.ts';
import { prefersHtml } from './problem.ts';

let app: App;
let adapters: TestAdapters;
let sideEffects = 0;
let tokens: ReturnType<typeof createUserTokens>;

before(async () => {
  const config = testConfig({ BODY_LIMIT_BYTES: '2048' }, ['paste']);
  tokens = createUserTokens(config.secret);
  adapters = await createTestAdapters(config);
  app = await buildApp(config, adapters, { logger: false, routes: false });
  app.post(
    '/echo',
    {
      schema: {
        body: Type.Object({ name: Type.String({ minLength: 1 }), age: Type.Integer({ minimum: 0 }) }),
      },
    },
    async (request) => request.body,
  );
  app.get('/boom', async () => {
    throw new Error('secret connection string postgres://admin:hunter2@db');
  });
  app.get('/teapot', async () => {
    throw platformError('conflict', { detail: 'Already done', extras: { seats: ['C7'] } });
  });
  app.get('/clash', async () => {
    throw platformError('conflict', {
      detail: 'Extension members named like core ones',
      extras: { status: 'FAILED', type: 'seat', requestId: 'mine', instance: '/seats/C7', seats: ['C7'] },
    });
  });
  const orders = {
    config: { access: { public: true, user: true }, idempotency: { scope: 'orders' } },
  } as const;
  app.post('/orders', orders, async (request, reply) => {
    const body = request.body as { slow?: boolean; fail?: boolean };
    if (body.slow) await sleep(300);
    if (body.fail) throw new Error('database went away');
    sideEffects++;
    return reply.code(201).header('location', `/orders/${sideEffects}`).send({ order: sideEffects });
  });
  app.get('/limited', async (_request, reply) => {
    const policy = { name: 'demo', points: 2, durationSec: 60 };
    const decision = await adapters.limiter.consume(policy, 'client');
    setRateLimitHeaders(reply, policy, decision);
    if (!decision.allowed) throw platformError('rate_limited');
    return { ok: true };
  });
  await app.ready();
});
after(async () => {
  await app.close();
  await adapters.close();
});

function assertProblem(response: Awaited<ReturnType<App['inject']>>, status: number, code: string) {
  assert.equal(response.statusCode, status, response.body);
  assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
  const body = response.json();
  assert.equal(body.status, status);
  assert.equal(body.code, code);
  assert.equal(body.type, `/problems/${code}`);
  assert.ok(body.title);
  assert.ok(body.detail);
  assert.ok(body.requestId);
  assert.equal(body.requestId, response.headers['x-request-id']);
  assert.equal(body.instance, `urn:request:${body.requestId}`);
  return body;
}

describe('problem+json for every failure', () => {
  test('malformed JSON is a 400', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'application/json' },
      payload: '{"name": ',
    });
    assertProblem(response, 400, 'malformed_json');
  });

  test('validation lists every field', async () => {
    const response = await app.inject({ method: 'POST', url: '/echo', payload: { age: -1 } });
    const body = assertProblem(response, 400, 'validation_failed');
    const fields = body.errors.map((e: { field: string }) => e.field).sort();
    assert.deepEqual(fields, ['body.age', 'body.name']);
  });

  test('a NUL character in a path, query or JSON body is a 400 naming the field', async () => {
    const body = assertProblem(
      await app.inject({ method: 'POST', url: '/echo', payload: { name: 'a\u0000b', age: 1 } }),
      400,
      'validation_failed',
    );
    assert.equal(body.errors[0].field, 'body.name');
    const key = assertProblem(
      await app.inject({ method: 'POST', url: '/echo', payload: { name: 'a', age: 1, x: { 'k\u0000': 1 } } }),
      400,
      'validation_failed',
    );
    assert.equal(key.errors[0].field, 'body.x.k\\u0000');
    // Searched at any depth (it stopped at 64 levels).
    let deep: unknown = 'a\u0000b';
    for (let i = 0; i < 100; i++) deep = [deep];
    const nested = assertProblem(
      await app.inject({ method: 'POST', url: '/echo', payload: { name: 'a', age: 1, x: deep } }),
      400,
      'validation_failed',
    );
    assert.equal(nested.errors[0].field, `body.x${'.0'.repeat(100)}`);
    const query = assertProblem(
      await app.inject({ method: 'GET', url: '/teapot?q=%00' }),
      400,
      'validation_failed',
    );
    assert.equal(query.errors[0].field, 'querystring.q');
    const fine = await app.inject({ method: 'POST', url: '/echo', payload: { name: 'a\\u0000b', age: 1 } });
    assert.equal(fine.statusCode, 200, 'an escaped backslash is not a NUL');
  });

  test('an unknown route is a 404', async () => {
    assertProblem(await app.inject({ method: 'GET', url: '/no/such/thing' }), 404, 'not_found');
  });

  test('a wrong method on a known path is a 405 that names the methods it answers in Allow', async () => {
    const response = await app.inject({ method: 'DELETE', url: '/echo?x=1' });
    const problem = assertProblem(response, 405, 'method_not_allowed');
    assert.equal(response.headers.allow, 'POST');
    assert.match(problem.detail, /DELETE is not allowed on \/echo; it answers POST/);
    const teapot = await app.inject({ method: 'PUT', url: '/teapot' });
    assertProblem(teapot, 405, 'method_not_allowed');
    assert.deepEqual(String(teapot.headers.allow).split(', ').sort(), ['GET', 'HEAD']);
    assertProblem(await app.inject({ method: 'PUT', url: '/no/such/thing' }), 404, 'not_found');
  });

  test('a wrong media type is a 415', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'application/xml' },
      payload: '<a/>',
    });
    assertProblem(response, 415, 'unsupported_media_type');
  });

  test('an oversized body is a 413', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/echo',
      payload: { name: 'x'.repeat(5000), age: 1 },
    });
    assertProblem(response, 413, 'payload_too_large');
  });

  test('an unhandled exception is a 500 that leaks nothing, and the app keeps serving', async () => {
    const response = await app.inject({ method: 'GET', url: '/boom' });
    const body = assertProblem(response, 500, 'internal_error');
    assert.doesNotMatch(response.body, /hunter2|postgres:|stack|at /);
    assert.equal(body.detail, 'Something went wrong on our side; the request id helps us find it');
    const next = await app.inject({ method: 'POST', url: '/echo', payload: { name: 'a', age: 1 } });
    assert.equal(next.statusCode, 200);
  });

  test('service errors carry their extras', async () => {
    const body = assertProblem(await app.inject({ method: 'GET', url: '/teapot' }), 409, 'conflict');
    assert.deepEqual(body.seats, ['C7']);
    assert.equal(body.detail, 'Already done');
  });

  test('an extension member never replaces a core member: it moves under `extensions`', async () => {
    const response = await app.inject({ method: 'GET', url: '/clash' });
    const body = assertProblem(response, 409, 'conflict');
    assert.equal(body.status, 409);
    assert.equal(body.type, '/problems/conflict');
    assert.equal(body.requestId, response.headers['x-request-id']);
    assert.equal(body.instance, `urn:request:${body.requestId}`);
    assert.deepEqual(body.seats, ['C7']);
    assert.deepEqual(body.extensions, {
      status: 'FAILED',
      type: 'seat',
      requestId: 'mine',
      instance: '/seats/C7',
    });
  });

  test('a client request id is echoed, a missing one generated', async () => {
    const mine = await app.inject({
      method: 'GET',
      url: '/health/live',
      headers: { 'x-request-id': 'abc-123' },
    });
    assert.equal(mine.headers['x-request-id'], 'abc-123');
    const hostile = await app.inject({
      method: 'GET',
      url: '/health/live',
      headers: { 'x-request-id': '<script>' },
    });
    assert.match(String(hostile.headers['x-request-id']), /^[\w-]+-[0-9a-z]+$/);
    assert.notEqual(hostile.headers['x-request-id'], '<script>');
  });

  test('security headers: nosniff everywhere, CSP and frame denial on pages', async () => {
    const page = await app.inject({ method: 'GET', url: '/' });
    assert.equal(page.headers['x-content-type-options'], 'nosniff');
    assert.equal(page.headers['x-frame-options'], 'DENY');
    assert.match(String(page.headers['content-security-policy']), /script-src 'self';/);
    assert.doesNotMatch(String(page.headers['content-security-policy']), /unsafe-inline/);
    const json = await app.inject({ method: 'GET', url: '/health/live' });
    assert.equal(json.headers['x-content-type-options'], 'nosniff');
    const problem = await app.inject({ method: 'GET', url: '/nowhere' });
    assert.equal(problem.headers['x-content-type-options'], 'nosniff');
  });
});

const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8';

describe('a browser gets errors as pages, API clients as problem+json', () => {
  test('prefersHtml: text/html ahead of any JSON type, and not q=0', () => {
    assert.ok(prefersHtml(BROWSER));
    assert.ok(prefersHtml('text/html'));
    assert.ok(prefersHtml('text/html, application/json;q=0.5'));
    for (const accept of [undefined, '*/*', 'application/json', 'application/problem+json, text/html']) {
      assert.ok(!prefersHtml(accept), String(accept));
    }
    assert.ok(!prefersHtml('text/html;q=0, */*'));
  });

  test('an unknown page path: a 404 page with the problem in words, the request id and a way back', async () => {
    const response = await app.inject({ url: '/movies/shows/123', headers: { accept: BROWSER } });
    assert.equal(response.statusCode, 404);
    assert.match(String(response.headers['content-type']), /^text\/html/);
    assert.match(String(response.headers['content-security-policy']), /script-src 'self';/);
    assert.match(response.body, /<h1>Not found<\/h1>/);
    assert.match(response.body, /No route for GET \/movies\/shows\/123/);
    assert.ok(response.body.includes(String(response.headers['x-request-id'])));
    assert.match(response.body, /<a href="\/">Back to the home page<\/a>/);
  });

  test('the same errors stay problem+json for fetch, curl and JSON clients; headers such as Allow stay on pages', async () => {
    for (const accept of ['*/*', 'application/json', undefined]) {
      const headers = accept ? { accept } : {};
      assertProblem(await app.inject({ url: '/movies/shows/123', headers }), 404, 'not_found');
    }
    const wrongMethod = await app.inject({ method: 'PUT', url: '/teapot', headers: { accept: BROWSER } });
    assert.equal(wrongMethod.statusCode, 405);
    assert.match(String(wrongMethod.headers['content-type']), /^text\/html/);
    assert.deepEqual(String(wrongMethod.headers.allow).split(', ').sort(), ['GET', 'HEAD']);
    const crash = await app.inject({ url: '/boom', headers: { accept: BROWSER } });
    assert.equal(crash.statusCode, 500);
    assert.doesNotMatch(crash.body, /hunter2|postgres:/);
    assert.match(crash.body, /tell us this request id/);
  });
});

describe('an oversized body is refused before it is read', () => {
  test('the 413 arrives while the client is still holding the body back', async () => {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as { port: number };
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => {
        // Headers only: a server that waited for the body would never answer.
        socket.write(
          'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\n\r\n',
        );
      });
      let data = '';
      socket.on('data', (chunk) => {
        data += chunk;
        if (data.includes('\r\n\r\n') && data.includes('}')) {
          socket.destroy();
          resolve(data);
        }
      });
      socket.on('error', reject);
      setTimeout(() => reject(new Error(`no answer: ${data}`)), 3000);
    });
    assert.match(reply, /^HTTP\/1.1 413/);
    assert.match(reply, /payload_too_large/);
  });
});

describe('Idempotency-Key', () => {
  test('the first response is replayed byte for byte', async () => {
    const before = sideEffects;
    const send = () =>
      app.inject({
        method: 'POST',
        url: '/orders',
        headers: { 'idempotency-key': 'k-1' },
        payload: { item: 'a' },
      });
    const first = await send();
    const second = await send();
    assert.equal(first.statusCode, 201);
    assert.equal(second.statusCode, 201);
    assert.equal(second.body, first.body);
    assert.equal(second.headers.location, first.headers.location);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.equal(first.headers['idempotent-replayed'], undefined);
    assert.equal(sideEffects, before + 1);
  });

  test('the same key with another body is a 422', async () => {
    await app.inject({
      method: 'POST',
      url: '/orders',
      headers: { 'idempotency-key': 'k-2' },
      payload: { item: 'a' },
    });
    const reused = await app.inject({
      method: 'POST',
      url: '/orders',
      headers: { 'idempotency-key': 'k-2' },
      payload: { item: 'b' },
    });
    assertProblem(reused, 422, 'idempotency_key_reused');
  });

  test('while the first is in flight, a second is a 409', async () => {
    const payload = { item: 'c', slow: true };
    const first = app.inject({
      method: 'POST',
      url: '/orders',
      headers: { 'idempotency-key': 'k-3' },
      payload,
    });
    await sleep(50);
    const second = await app.inject({
      method: 'POST',
      url: '/orders',
      headers: { 'idempotency-key': 'k-3' },
      payload,
    });
    assertProblem(second, 409, 'idempotency_in_progress');
    assert.equal((await first).statusCode, 201);
  });

  test('a 5xx is not stored: the retry runs again', async () => {
    const failing = await app.inject({
      method: 'POST',
      url: '/orders',
      headers: { 'idempotency-key': 'k-4' },
      payload: { fail: true },
    });
    assert.equal(failing.statusCode, 500);
    const again = await app.inject({
      method: 'POST',
      url: '/orders',
      headers: { 'idempotency-key': 'k-4' },
      payload: { fail: true },
    });
    assert.equal(again.statusCode, 500);
    assert.equal(again.headers['idempotent-replayed'], undefined);
  });

  test('keys are scoped by the proven caller', async () => {
    const payload = { item: 'd' };
    const as = (user: string) =>
      app.inject({
        method: 'POST',
        url: '/orders',
        headers: { 'idempotency-key': 'shared', authorization: `Bearer ${tokens.issue(user)}` },
        payload,
      });
    const alice = await as('alice');
    const bob = await as('bob');
    assert.notEqual(alice.json().order, bob.json().order);
    assert.equal((await as('alice')).json().order, alice.json().order, "alice's own retry is replayed");
    // A forged token is refused before the idempotency step, so it can neither claim nor replay a key.
    const forged = await app.inject({
      method: 'POST',
      url: '/orders',
      headers: { 'idempotency-key': 'shared', authorization: 'Bearer UT1.alice.forged' },
      payload,
    });
    assert.equal(forged.statusCode, 401);
  });

  test('a key is kept 24 hours, then it may be used again', async () => {
    const clock = adapters.clock as ReturnType<typeof import('../clock.ts').createTestClock>;
    const send = () =>
      app.inject({
        method: 'POST',
        url: '/orders',
        headers: { 'idempotency-key': 'k-day' },
        payload: { item: 'e' },
      });
    const first = await send();
    clock.advance(23 * 3600_000);
    assert.equal((await send()).headers['idempotent-replayed'], 'true');
    clock.advance(3600_000 + 1);
    const fresh = await send();
    assert.equal(fresh.headers['idempotent-replayed'], undefined);
    assert.notEqual(fresh.json().order, first.json().order);
  });

  test('a malformed key is a 400', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/orders',
      headers: { 'idempotency-key': 'x'.repeat(300) },
      payload: {},
    });
    assertProblem(response, 400, 'validation_failed');
  });
});

describe('platform routes', () => {
  test('rate limit headers and a 429 with Retry-After', async () => {
    const first = await app.inject({ method: 'GET', url: '/limited' });
    assert.equal(first.headers['ratelimit-policy'], '"demo";q=2;w=60');
    assert.match(String(first.headers.ratelimit), /^"demo";r=1;t=\d+$/);
    await app.inject({ method: 'GET', url: '/limited' });
    const refused = await app.inject({ method: 'GET', url: '/limited' });
    assertProblem(refused, 429, 'rate_limited');
    assert.ok(Number(refused.headers['retry-after']) >= 1);
  });

  test('/health/live and /health/ready check every adapter', async () => {
    assert.deepEqual((await app.inject('/health/live')).json(), { status: 'ok' });
    const ready = await app.inject('/health/ready');
    assert.equal(ready.statusCode, 200);
    const body = ready.json();
    assert.equal(body.status, 'ok');
    for (const name of ['database', 'cache', 'rate_limiter', 'pubsub', 'queue']) {
      assert.equal(body.checks[name].status, 'ok', name);
    }
    // The embedded database reports its size; a PostgreSQL server is watched by its own tools.
    assert.equal(
      typeof body.checks.database.size_bytes,
      adapters.database.kind === 'pglite' ? 'number' : 'undefined',
    );
  });

  test('an embedded database past its comfortable size is degraded, still ready, and says what to do', async () => {
    const database = await createDatabase({ dataDir: 'memory://' });
    try {
      const small = await databaseCheck(database);
      assert.equal(small.status, 'ok');
      assert.ok(Number(small.size_bytes) > 0);
      const large = await databaseCheck(database, 1024);
      assert.equal(large.status, 'degraded');
      assert.match(
        String(large.warning),
        /^The embedded database holds \d+ MB, past the 0 MB .*set DATABASE_URL/,
      );
    } finally {
      await database.close();
    }
  });

  test("a route's requests are counted under each status it answered", async () => {
    const count = async (status: number) => {
      const text = (await app.inject('/metrics')).body;
      const line = new RegExp(
        `http_request_duration_seconds_count\\{method="POST",route="/echo",status="${status}"\\} (\\d+)`,
      ).exec(text);
      return Number(line?.[1] ?? 0);
    };
    const before = { ok: await count(200), bad: await count(400) };
    const echo = (payload: object) => app.inject({ method: 'POST', url: '/echo', payload });
    assert.equal((await echo({ name: 'a', age: 1 })).statusCode, 200);
    assert.equal((await echo({ name: '', age: 1 })).statusCode, 400);
    assert.equal((await echo({ name: 'b', age: 2 })).statusCode, 200);
    assert.deepEqual(
      { ok: await count(200), bad: await count(400) },
      { ok: before.ok + 2, bad: before.bad + 1 },
    );
  });

  test('/metrics exposes request histograms, queue and job series', async () => {
    await app.inject('/health/live');
    await app.inject('/no/such/route');
    const text = (await app.inject('/metrics')).body;
    assert.match(text, /http_request_duration_seconds_bucket\{.*route="\/health\/live".*\}/);
    // A request no route matched is recorded under one label, never its raw URL.
    assert.match(
      text,
      /http_request_duration_seconds_count\{method="GET",route="unmatched",status="404"\} [1-9]/,
    );
    assert.doesNotMatch(text, /no\/such\/route/);
    assert.match(text, /# TYPE queue_messages_total counter/);
    assert.match(text, /# TYPE queue_depth gauge/);
    assert.match(text, /# TYPE job_runs_total counter/);
    assert.match(text, /db_pool_connections\{state="idle"\}/);
    assert.match(text, /nodejs_eventloop_lag_seconds/);
  });

  test('/openapi.json describes the routes and /docs serves the UI', async () => {
    const document = (await app.inject('/openapi.json')).json();
    const spec = resolveRefs(document, document);
    assert.equal(spec.openapi, '3.1.0');
    assert.ok(spec.paths['/health/ready']);
    // One problem schema, and every operation says it may answer with it, as problem+json.
    const problem = spec.components.schemas.Problem;
    assert.deepEqual([...problem.required].sort(), [
      'code',
      'detail',
      'instance',
      'requestId',
      'status',
      'title',
      'type',
    ]);
    for (const [path, item] of Object.entries<Record<string, { responses: Record<string, unknown> }>>(
      spec.paths,
    )) {
      for (const [method, operation] of Object.entries(item)) {
        assert.deepEqual(
          operation.responses.default,
          {
            description: 'A problem (RFC 9457)',
            content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
          },
          `${method} ${path}`,
        );
      }
    }
    const docs = await app.inject('/docs/');
    assert.equal(docs.statusCode, 200);
    assert.match(docs.body, /swagger/i);
  });

  test('the home page links the four services and the docs', async () => {
    const home = await app.inject('/');
    assert.equal(home.statusCode, 200);
    for (const href of ['/paste', '/notify', '/movies', '/parking', '/docs']) {
      assert.match(home.body, new RegExp(`href="${href}"`));
    }
  });
});
