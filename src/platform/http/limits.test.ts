import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTestAdapters, type TestAdapters, testConfig } from '../../../test/support/platform.ts';
import { type App, buildApp } from '../../app.ts';
import { createSseHub } from './sse.ts';

/**
 * The HTTP server's own limits, on a listening server and raw sockets: what a client that is
 * slow, silent or oversized meets before any route runs, and that live streams are not cut off.
 */
let app: App;
let adapters: TestAdapters;
let port: number;
const hub = createSseHub({ maxPerAddress: 10 });

before(async () => {
  const config = testConfig(
    {
      REQUEST_TIMEOUT_MS: '600',
      HEADERS_TIMEOUT_MS: '300',
      CONNECTION_TIMEOUT_MS: '1000',
      KEEP_ALIVE_TIMEOUT_MS: '1000',
      MAX_HEADER_BYTES: '4096',
      MAX_HEADERS_COUNT: '20',
    },
    ['paste'],
  );
  adapters = await createTestAdapters(config);
  app = await buildApp(config, adapters, { logger: false, routes: false });
  app.get('/headers', async (request) => ({ count: Object.keys(request.headers).length }));
  // A handler that keeps the client waiting, without a byte, past the connection timeout.
  app.get('/silent', async () => {
    await sleep(3000);
    return { late: true };
  });
  // A live stream with a heartbeat well inside the connection timeout, and one event per tick.
  app.get('/ticks', async (request, reply) => {
    const stream = hub.open(request, reply, 200);
    let tick = 0;
    const timer = setInterval(() => stream.send('tick', { tick: ++tick }), 250);
    await stream.closed;
    clearInterval(timer);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as { port: number }).port;
});
after(async () => {
  hub.closeAll();
  await app.close();
  await adapters.close();
});

/** Opens a raw connection; `reply()` resolves with everything received once the server closes it. */
function rawClient() {
  const socket: Socket = connect(port, '127.0.0.1');
  const started = Date.now();
  let received = '';
  socket.on('data', (chunk) => {
    received += chunk;
  });
  const closed = new Promise<{ text: string; afterMs: number }>((resolve) => {
    socket.on('close', () => resolve({ text: received, afterMs: Date.now() - started }));
  });
  socket.on('error', () => {});
  return {
    socket,
    write: (text: string) => socket.write(text),
    received: () => received,
    reply: (withinMs = 5000) =>
      Promise.race([
        closed,
        sleep(withinMs).then(() => {
          socket.destroy();
          throw new Error(`the server kept the connection open; received: ${received.slice(0, 200)}`);
        }),
      ]),
  };
}

function parseResponse(text: string) {
  const [head, body] = [text.slice(0, text.indexOf('\r\n\r\n')), text.slice(text.indexOf('\r\n\r\n') + 4)];
  const [statusLine, ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [
      line.slice(0, line.indexOf(':')).toLowerCase(),
      line.slice(line.indexOf(':') + 1).trim(),
    ]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}

/** A problem+json answer written by the HTTP parser's handler: status, code and a request id. */
function assertParserProblem(text: string, status: number, code: string) {
  const response = parseResponse(text);
  assert.equal(response.status, status, text);
  assert.match(response.headers['content-type'], /^application\/problem\+json/);
  const problem = JSON.parse(response.body);
  assert.equal(problem.status, status);
  assert.equal(problem.code, code);
  assert.equal(problem.type, `/problems/${code}`);
  assert.ok(problem.title && problem.detail);
  assert.match(response.headers['x-request-id'], /^[\w-]+-[0-9a-z]+$/);
  assert.equal(problem.requestId, response.headers['x-request-id']);
  assert.equal(problem.instance, `urn:request:${problem.requestId}`);
  return problem;
}

describe('server limits', () => {
  test('timeouts and header limits come from the configuration, with safe defaults', () => {
    assert.equal(app.server.requestTimeout, 600);
    assert.equal(app.server.headersTimeout, 300);
    // The connection timeout is a sweep (connections.ts), not Node's timer re-armed on every write.
    assert.equal(app.server.timeout, 0);
    assert.equal(app.server.keepAliveTimeout, 1000);
    assert.equal(app.server.maxHeadersCount, 20);
    const defaults = testConfig();
    assert.equal(defaults.requestTimeoutMs, 60_000);
    assert.equal(defaults.headersTimeoutMs, 10_000);
    assert.equal(defaults.connectionTimeoutMs, 60_000);
    assert.equal(defaults.keepAliveTimeoutMs, 72_000);
    assert.equal(defaults.maxHeaderBytes, 16_384);
    assert.equal(defaults.maxHeadersCount, 100);
    assert.throws(
      () => testConfig({ REQUEST_TIMEOUT_MS: '1000', HEADERS_TIMEOUT_MS: '2000' }),
      /HEADERS_TIMEOUT_MS/,
    );
  });

  test('a slow-loris client that never finishes its headers is cut off with a 408', async () => {
    const client = rawClient();
    client.write('GET /health/live HTTP/1.1\r\nHost: x\r\n');
    // One more header line every 100 ms: the socket is never idle, the headers never end.
    const trickle = setInterval(() => client.write(`X-Slow-${Date.now()}: a\r\n`), 100);
    try {
      const { text, afterMs } = await client.reply(3000);
      assertParserProblem(text, 408, 'request_timeout');
      assert.ok(afterMs >= 250, `cut off after ${afterMs} ms`);
    } finally {
      clearInterval(trickle);
    }
  });

  test('a connection that sends nothing is closed after the headers timeout', async () => {
    const { text, afterMs } = await rawClient().reply(3000);
    assertParserProblem(text, 408, 'request_timeout');
    assert.ok(afterMs >= 250, `closed after ${afterMs} ms`);
  });

  test('an answer with no traffic for longer than the connection timeout is cut off', async () => {
    const client = rawClient();
    client.write('GET /silent HTTP/1.1\r\nHost: x\r\n\r\n');
    // Not kept open: reply() fails when the connection outlives 10 s.
    const { text, afterMs } = await client.reply(10_000);
    assert.equal(text, '', 'nothing was answered');
    assert.ok(afterMs >= 900, `closed after ${afterMs} ms`);
  });

  test('an idle keep-alive connection is closed after the keep-alive timeout', async () => {
    const client = rawClient();
    client.write('GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n');
    const { text, afterMs } = await client.reply(4000);
    assert.equal(parseResponse(text).status, 200);
    assert.ok(afterMs >= 900, `closed after ${afterMs} ms`);
  });

  test('a request with more headers than MAX_HEADERS_COUNT is refused: 431', async () => {
    const headers = (n: number) => Array.from({ length: n }, (_, i) => `X-Extra-${i}: a\r\n`).join('');
    const within = rawClient();
    within.write(`GET /headers HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${headers(15)}\r\n`);
    const fine = parseResponse((await within.reply()).text);
    assert.equal(fine.status, 200);
    assert.equal(JSON.parse(fine.body).count, 17);
    const over = rawClient();
    over.write(`GET /headers HTTP/1.1\r\nHost: x\r\n${headers(40)}\r\n`);
    assertParserProblem((await over.reply()).text, 431, 'headers_too_large');
  });

  test('an SSE stream outlives the request and headers timeouts: they bound receiving a request, not the answer', async () => {
    const controller = new AbortController();
    const response = await fetch(`http://127.0.0.1:${port}/ticks`, { signal: controller.signal });
    assert.equal(response.status, 200);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const until = Date.now() + 2000; // over three request timeouts, twice the connection timeout
    while (Date.now() < until) {
      const { value, done } = await reader.read();
      assert.equal(done, false, 'the stream ended early');
      text += decoder.decode(value);
    }
    const ticks = [...text.matchAll(/"tick":(\d+)/g)].map((match) => Number(match[1]));
    assert.ok(ticks.length >= 6, `ticks received: ${ticks.length}`);
    controller.abort();
  });
});

describe("the HTTP parser's refusals are problem+json", () => {
  test('headers over MAX_HEADER_BYTES: 431', async () => {
    const client = rawClient();
    client.write(`GET /health/live HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(5000)}\r\n\r\n`);
    assertParserProblem((await client.reply()).text, 431, 'headers_too_large');
  });

  test('a request line over MAX_HEADER_BYTES: 414', async () => {
    const client = rawClient();
    client.write(`GET /health/live?q=${'a'.repeat(5000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    assertParserProblem((await client.reply()).text, 414, 'uri_too_long');
  });

  test('bytes that are not HTTP: 400', async () => {
    const client = rawClient();
    client.write('HELLO THERE\r\n\r\n');
    assertParserProblem((await client.reply()).text, 400, 'bad_request');
  });

  test('the server goes on serving', async () => {
    const response = await fetch(`http://127.0.0.1:${port}/health/live`);
    assert.equal(response.status, 200);
  });
});
