import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { book, hold, recordingNotify, seedShow } from '../../../test/support/booking.ts';
import {
  createTestAdapters,
  createTestApp,
  realServices,
  type TestApp,
  testConfig,
} from '../../../test/support/platform.ts';
import { buildApp } from '../../app.ts';
import { TEST_CARDS } from '../../payments/api.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { readTracingSettings } from './tracing.ts';

describe('settings', () => {
  test('off unless TRACING=otlp; the OTLP endpoint variables are the standard ones', () => {
    assert.deepEqual(loadConfig([], {}).tracing, { exporter: 'off' });
    assert.deepEqual(
      readTracingSettings({ TRACING: 'off', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }, 'api'),
      {
        exporter: 'off',
      },
    );
    assert.deepEqual(loadConfig(['--role=worker'], { TRACING: 'otlp' }).tracing, {
      exporter: 'otlp',
      url: 'http://localhost:4318/v1/traces',
      serviceName: 'four-services-worker',
      sampler: { root: 'always_on', parentBased: true, ratio: 1 },
    });
    assert.deepEqual(
      readTracingSettings({ TRACING: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }, 'api'),
      {
        exporter: 'otlp',
        url: 'http://collector:4318/v1/traces',
        serviceName: 'four-services-api',
        sampler: { root: 'always_on', parentBased: true, ratio: 1 },
      },
    );
    assert.deepEqual(
      readTracingSettings(
        {
          TRACING: 'otlp',
          OTEL_EXPORTER_OTLP_ENDPOINT: 'http://ignored:4318',
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://collector/traces',
          OTEL_SERVICE_NAME: 'tickets',
        },
        'all',
      ),
      {
        exporter: 'otlp',
        url: 'https://collector/traces',
        serviceName: 'tickets',
        sampler: { root: 'always_on', parentBased: true, ratio: 1 },
      },
    );
  });

  test('the standard sampler variables: a share of root traces, an incoming decision followed', () => {
    const sampler = (env: Record<string, string>) => {
      const settings = readTracingSettings({ TRACING: 'otlp', ...env }, 'api');
      return settings.exporter === 'otlp' ? settings.sampler : undefined;
    };
    assert.deepEqual(
      sampler({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.05' }),
      {
        root: 'traceidratio',
        parentBased: true,
        ratio: 0.05,
      },
    );
    assert.deepEqual(sampler({ OTEL_TRACES_SAMPLER: 'always_off' }), {
      root: 'always_off',
      parentBased: false,
      ratio: 1,
    });
  });

  test('a wrong setting stops start-up naming the variable', () => {
    const refused = (env: Record<string, string>, name: RegExp) =>
      assert.throws(
        () => loadConfig([], env),
        (error: Error) => error instanceof ConfigError && name.test(error.message),
      );
    refused({ TRACING: 'jaeger' }, /^TRACING must be one of off\|otlp/);
    refused(
      { TRACING: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' },
      /^OTEL_EXPORTER_OTLP_ENDPOINT must be/,
    );
    refused({ TRACING: 'otlp', OTEL_TRACES_SAMPLER: 'sometimes' }, /^OTEL_TRACES_SAMPLER must be one of/);
    refused(
      { TRACING: 'otlp', OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' },
      /^OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1/,
    );
    refused(
      { TRACING: 'otlp', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'grpc://c' },
      /^OTEL_EXPORTER_OTLP_TRACES_ENDPOINT/,
    );
    // An endpoint alone would have exported nothing, in silence.
    refused(
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' },
      /OTEL_EXPORTER_OTLP_ENDPOINT is set but TRACING/,
    );
  });
});

describe('a booking traced end to end', () => {
  const exporter = new InMemorySpanExporter();
  let t: TestApp;

  before(async () => {
    t = await createTestApp({
      services: ['booking', 'notify'],
      workers: true,
      spanExporter: exporter,
      env: { TRACING: 'otlp', BOOKING_DEMO: 'false', BOOKING_PAYMENT_WAIT_MS: '300' },
    });
  });
  after(() => t.close());

  /**
   * The finished spans, once `done` finds what it waits for (the worker runs on its own: on a
   * loaded CI machine with NATS its delivery once took longer than the 5 s this waited before).
   */
  async function spansWhen(done: (spans: ReadableSpan[]) => boolean): Promise<ReadableSpan[]> {
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; ) {
      await t.adapters.tracing?.forceFlush();
      const spans = exporter.getFinishedSpans();
      if (done(spans)) return spans;
      await sleep(25);
    }
    return exporter.getFinishedSpans();
  }

  const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
  /** True when `ancestor` is `span`'s parent, grandparent, … */
  function descends(spans: ReadableSpan[], span: ReadableSpan, ancestor: ReadableSpan): boolean {
    const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
    for (let parent = parentOf(span); parent; parent = parentOf(byId.get(parent) as ReadableSpan)) {
      if (parent === ancestor.spanContext().spanId) return true;
      if (!byId.has(parent)) return false;
    }
    return false;
  }

  test('hold and book: HTTP → SQL → queue publish → the delivery worker, one trace', async () => {
    const { showId } = await seedShow({ ...t, notify: recordingNotify() });
    exporter.reset();
    const held = await hold(t, showId, ['A1', 'A2']);
    assert.equal(held.statusCode, 201, held.body);
    const booked = await book(t, held.json(), TEST_CARDS.success, undefined, {
      contact: { email: 'rahul@example.com' },
    });
    assert.equal(booked.statusCode, 201, booked.body);

    const spans = await spansWhen((all) => all.some((s) => s.name.startsWith('process notifications')));
    const server = (name: string) => {
      const found = spans.find((s) => s.name === name && s.kind === 1 /* SERVER */);
      assert.ok(found, `no server span ${name} in ${spans.map((s) => s.name).join(', ')}`);
      return found;
    };
    const holdSpan = server('POST /api/v1/shows/:id/hold');
    const bookSpan = server('POST /api/v1/bookings');
    assert.equal(holdSpan.attributes['http.route'], '/api/v1/shows/:id/hold');
    assert.equal(bookSpan.attributes['http.response.status_code'], 201);
    assert.notEqual(
      holdSpan.spanContext().traceId,
      bookSpan.spanContext().traceId,
      'two requests, two traces',
    );
    assert.equal(parentOf(bookSpan), undefined, 'no traceparent came in: a root span');

    const sql = spans.filter((s) => s.attributes['db.system.name'] === 'postgresql');
    assert.ok(
      sql.some((s) => descends(spans, s, holdSpan)) && sql.some((s) => descends(spans, s, bookSpan)),
      'statements of both requests are their children',
    );
    assert.ok(sql.every((s) => typeof s.attributes['db.query.text'] === 'string'));

    const send = spans.find((s) => s.name.startsWith('send notifications') && descends(spans, s, bookSpan));
    assert.ok(
      send,
      `the confirmation's publish is inside the booking: ${spans.map((s) => s.name).join(', ')}`,
    );
    assert.equal(send.kind, 3 /* PRODUCER */);
    assert.equal(send.attributes['messaging.system'], realServices.natsUrl ? 'nats' : 'postgresql_table');
    const processed = spans.find(
      (s) => s.name === `process ${send.attributes['messaging.destination.name']}`,
    );
    assert.ok(processed, 'the delivery attempt has its span');
    assert.equal(processed.kind, 4 /* CONSUMER */);
    assert.equal(
      processed.spanContext().traceId,
      bookSpan.spanContext().traceId,
      'the delivery joins the trace',
    );
    assert.equal(parentOf(processed), send.spanContext().spanId, 'child of the publish');
    assert.ok(
      sql.some((s) => descends(spans, s, processed)),
      "the worker's statements are the delivery's children",
    );
    if (realServices.redisUrl) {
      const redis = spans.filter((s) => s.attributes['db.system.name'] === 'redis');
      assert.ok(
        redis.some((s) => descends(spans, s, holdSpan)),
        'the rate limit of the hold, on Redis',
      );
    }
  });

  test('an incoming traceparent is continued: same trace id, its span as parent', async () => {
    exporter.reset();
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpan = '00f067aa0ba902b7';
    const response = await t.app.inject({
      url: '/api/v1/movies',
      headers: { traceparent: `00-${traceId}-${callerSpan}-01` },
    });
    assert.equal(response.statusCode, 200, response.body);
    const spans = await spansWhen((all) => all.some((s) => s.kind === 1));
    const request = spans.find((s) => s.kind === 1);
    assert.ok(request);
    assert.equal(request.name, 'GET /api/v1/movies');
    assert.equal(request.spanContext().traceId, traceId);
    assert.equal(parentOf(request), callerSpan);
    assert.ok(
      spans.filter((s) => s.kind === 2 /* CLIENT */).every((s) => s.spanContext().traceId === traceId),
    );
  });
});

test('sampling: with a ratio of 0 a request of its own is not exported, one whose caller kept its trace is', async () => {
  const exporter = new InMemorySpanExporter();
  const t = await createTestApp({
    services: ['paste'],
    spanExporter: exporter,
    env: { TRACING: 'otlp', OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' },
  });
  try {
    assert.equal((await t.app.inject({ url: '/api/v1/paste/nope0000' })).statusCode, 404);
    await t.adapters.tracing?.forceFlush();
    assert.deepEqual(
      exporter.getFinishedSpans().map((s) => s.name),
      [],
    );
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    await t.app.inject({
      url: '/api/v1/paste/nope0000',
      headers: { traceparent: `00-${traceId}-b7ad6b7169203331-01` },
    });
    await t.adapters.tracing?.forceFlush();
    const kept = exporter.getFinishedSpans();
    assert.ok(kept.some((s) => s.kind === 1 /* SERVER */));
    assert.ok(kept.every((s) => s.spanContext().traceId === traceId));
  } finally {
    await t.close();
  }
});

test('log lines written inside a request carry its trace_id and span_id, also after the body is read from a socket', async () => {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  const exporter = new InMemorySpanExporter();
  const config = testConfig({ TRACING: 'otlp' }, ['paste']);
  const adapters = await createTestAdapters(config, undefined, { spanExporter: exporter });
  const app = await buildApp(config, adapters, { logger: { level: 'info', stream } });
  app.get('/test/log', async (request) => {
    request.log.info('inside');
    return {};
  });
  app.post('/test/log', async (request) => {
    request.log.info('after the body');
    return request.body;
  });
  try {
    await app.ready();
    app.log.info('outside');
    assert.equal((await app.inject('/test/log')).statusCode, 200);
    await adapters.tracing?.forceFlush();
    const span = exporter.getFinishedSpans().find((s) => s.name === 'GET /test/log');
    assert.ok(span);
    const inside = lines.find((line) => line.msg === 'inside');
    assert.equal(inside?.trace_id, span.spanContext().traceId);
    assert.equal(inside?.span_id, span.spanContext().spanId);
    assert.equal(lines.find((line) => line.msg === 'outside')?.trace_id, undefined);

    // Over a real socket, the body read from its events (which run in the connection's context):
    // the handler is still inside the request's span.
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const posted = await fetch(`${address}/test/log`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ n: 1 }),
    });
    assert.equal(posted.status, 200);
    await adapters.tracing?.forceFlush();
    const post = exporter.getFinishedSpans().find((s) => s.name === 'POST /test/log');
    assert.ok(post);
    const afterBody = lines.find((line) => line.msg === 'after the body');
    assert.equal(afterBody?.trace_id, post.spanContext().traceId);
    assert.equal(afterBody?.span_id, post.spanContext().spanId);
  } finally {
    await app.close();
    await adapters.close();
  }
});

/**
 * A fresh process builds an app, serves a request and closes, recording every module it loads:
 * with tracing off no SDK, exporter or context manager is loaded and nobody listens on ioredis's
 * channel.
 * The same run with TRACING=otlp is the negative control (it does load the SDK).
 */
function loadedInFreshProcess(tracing: 'off' | 'otlp') {
  const script = `
    import { registerHooks } from 'node:module';
    import { hasSubscribers } from 'node:diagnostics_channel';
    const loaded = new Set();
    registerHooks({
      resolve(specifier, context, next) {
        const result = next(specifier, context);
        if (/@opentelemetry|observability\\/tracing-/.test(result.url)) loaded.add(result.url.replace(/^.*node_modules\\//, ''));
        return result;
      },
    });
    const { createTestApp } = await import(${JSON.stringify(new URL('../../../test/support/platform.ts', import.meta.url).href)});
    const t = await createTestApp({ services: ['paste'], env: { TRACING: '${tracing}' } });
    const response = await t.app.inject('/health/live');
    const redis = hasSubscribers('tracing:ioredis:command:start');
    await t.close();
    process.stdout.write(JSON.stringify({ status: response.statusCode, loaded: [...loaded], redis }));
  `;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    env: { ...process.env, TRACING: undefined, OTEL_EXPORTER_OTLP_ENDPOINT: undefined },
  });
  assert.equal(child.status, 0, child.stderr);
  return JSON.parse(child.stdout) as { status: number; loaded: string[]; redis: boolean };
}

test('tracing off: no SDK loaded, no channel subscribed', () => {
  const off = loadedInFreshProcess('off');
  assert.equal(off.status, 200);
  // prom-client loads the API itself (its CPU counter's exemplars): the no-op API, no SDK.
  assert.deepEqual(
    off.loaded.filter((url) => !url.startsWith('@opentelemetry/api/')),
    [],
  );
  assert.equal(off.redis, false);
  const on = loadedInFreshProcess('otlp');
  assert.ok(
    on.loaded.some((url) => url.startsWith('@opentelemetry/sdk-trace/')),
    on.loaded.join(', '),
  );
  assert.ok(on.loaded.some((url) => url.includes('tracing-sdk.ts')));
  assert.equal(on.redis, true);
});
