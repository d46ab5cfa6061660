import assert from 'node:assert/strict';
import { Agent, createServer, request, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Registry } from 'prom-client';
import { registerProcessGauges } from '../observability/instrument.ts';
import { watchConnections } from './connections.ts';
import { createSseHub } from './sse.ts';

async function gauge(registry: Registry, name: string): Promise<number> {
  const metric = await registry.getSingleMetric(name)?.get();
  return Number(metric?.values[0]?.value);
}

/** A bare Node server watched as the app's is, whose handler `answer` decides. */
async function watchedServer(
  t: test.TestContext,
  silentMs: number,
  answer: (response: ServerResponse) => void,
  now?: () => number,
) {
  const server = createServer((_request, response) => answer(response));
  const connections = watchConnections(server, silentMs, now);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    connections.stop();
    server.closeAllConnections();
    server.close();
  });
  return { server, connections, port: (server.address() as AddressInfo).port };
}

test('requests in flight: counted while answered, and again free once answered or aborted', async (t) => {
  const waiting: (() => void)[] = [];
  const { server, connections, port } = await watchedServer(t, 60_000, (response) => {
    waiting.push(() => response.end('done'));
  });
  const registry = new Registry();
  registerProcessGauges(registry, {
    server,
    inFlight: connections.inFlight,
    sse: createSseHub({ maxPerAddress: 1 }),
    version: '0.0.0',
    role: 'all',
    services: [],
  });
  const send = () => {
    const outgoing = request({ port, path: '/' });
    const answered = new Promise<void>((resolve) =>
      outgoing.on('response', (response) => response.resume().on('end', resolve)),
    );
    outgoing.on('error', () => {});
    outgoing.end();
    return { outgoing, answered };
  };
  const until = async (count: number) => {
    while (waiting.length < count) await sleep(5);
  };

  assert.equal(await gauge(registry, 'http_requests_in_flight'), 0);
  const first = send();
  const second = send();
  await until(2);
  assert.equal(await gauge(registry, 'http_requests_in_flight'), 2);
  waiting[0]();
  await first.answered;
  assert.equal(await gauge(registry, 'http_requests_in_flight'), 1);
  // A client that goes away before its answer: onResponse would never run for it.
  second.outgoing.destroy();
  while ((await gauge(registry, 'http_requests_in_flight')) !== 0) await sleep(5);
});

/** A raw connection that sends one request; `closed` resolves when the server closes it. */
function rawRequest(port: number, options: { read: boolean }) {
  const socket = connect(port, '127.0.0.1');
  const started = Date.now();
  let received = 0;
  if (options.read) socket.on('data', (chunk) => (received += chunk.length));
  else socket.pause();
  socket.on('error', () => {});
  socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now() - started)));
  return { socket, closed, received: () => received };
}

test('a client that stops reading its answer is cut off after the connection timeout', async (t) => {
  let cut: Promise<number> | undefined;
  const { port } = await watchedServer(t, 400, (response) => {
    const started = Date.now();
    cut = new Promise((resolve) => response.on('close', () => resolve(Date.now() - started)));
    // Far more than the socket buffers hold: the writes queue up once the client stops reading.
    const chunk = Buffer.alloc(1 << 20, 'x');
    const write = () => {
      while (response.write(chunk)) {}
    };
    response.on('drain', write);
    write();
  });
  // The client reads nothing (and so never learns of the close: the server's side tells).
  const stalled = rawRequest(port, { read: false });
  t.after(() => stalled.socket.destroy());
  while (cut === undefined) await sleep(5);
  // Cut, not kept open: Infinity when it outlives 10 s.
  const afterMs = await Promise.race([cut, sleep(10_000).then(() => Infinity)]);
  assert.ok(afterMs >= 400 && afterMs < Infinity, `closed after ${afterMs} ms`);
});

test('a slow answer that keeps sending, and an idle keep-alive connection, stay open', async (t) => {
  const { port } = await watchedServer(t, 300, (response) => {
    response.writeHead(200, { 'content-type': 'text/plain' });
    let ticks = 0;
    const timer = setInterval(() => {
      response.write('tick\n');
      if (++ticks === 10) {
        clearInterval(timer);
        response.end();
      }
    }, 100);
  });
  // A second of answer, three times the timeout, with a byte every 100 ms.
  const slow = rawRequest(port, { read: true });
  const ended = await Promise.race([
    new Promise<boolean>((resolve) =>
      slow.socket.on('data', (chunk) => String(chunk).endsWith('0\r\n\r\n') && resolve(true)),
    ),
    slow.closed.then(() => false),
  ]);
  assert.equal(ended, true, 'the answer ran to its end');
  // Now idle between requests (keep-alive): not the sweep's to close.
  const closedEarly = await Promise.race([slow.closed.then(() => true), sleep(900).then(() => false)]);
  slow.socket.destroy();
  assert.equal(closedEarly, false);
});

test('a stall of this process is not blamed on its clients; the silence after it is', async (t) => {
  let clock = 0;
  let asked = false;
  const { port } = await watchedServer(
    t,
    300,
    () => (asked = true),
    () => clock,
  );
  const silent = rawRequest(port, { read: true });
  t.after(() => silent.socket.destroy());
  let closed = false;
  void silent.closed.then(() => (closed = true));
  while (!asked) await sleep(5);
  await sleep(200); // a sweep or two take note of the request's bytes
  // The sweep's clock jumps: to it, the process was stalled for ten seconds.
  clock += 10_000;
  await sleep(400);
  assert.equal(closed, false, 'kept: the silence was the stall');
  // Time passes again at the sweep's pace: the unanswered request is now silent for real.
  const ticking = setInterval(() => (clock += 50), 25);
  try {
    const outcome = await Promise.race([silent.closed.then(() => 'cut'), sleep(10_000).then(() => 'open')]);
    assert.equal(outcome, 'cut');
  } finally {
    clearInterval(ticking);
  }
});

test('the watch adds no listener to a connection (see connections.ts for why)', async (t) => {
  /** Each event's listener count on the server's side of a connection, after one answered request. */
  const listenersAfterOneRequest = async (server: Server) => {
    let socket: Socket | undefined;
    server.on('connection', (accepted: Socket) => (socket = accepted));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => {
      server.closeAllConnections();
      server.close();
    });
    const { port } = server.address() as AddressInfo;
    const agent = new Agent({ keepAlive: true });
    t.after(() => agent.destroy());
    await new Promise<void>((resolve) =>
      request({ port, path: '/', agent }, (response) => response.resume().on('end', resolve)).end(),
    );
    return Object.fromEntries(
      socket!.eventNames().map((name) => [String(name), socket!.listenerCount(name)]),
    );
  };
  const bare = createServer((_request, response) => response.end('done'));
  const watched = createServer((_request, response) => response.end('done'));
  const connections = watchConnections(watched, 60_000);
  t.after(() => connections.stop());
  assert.deepEqual(await listenersAfterOneRequest(watched), await listenersAfterOneRequest(bare));
});
