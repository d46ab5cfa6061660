import assert from 'node:assert/strict';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { createSseHub } from '../http/sse.ts';
import { registerProcessGauges } from './instrument.ts';
import { createMetrics } from './metrics.ts';

async function gauge(registry: Registry, name: string): Promise<number> {
  const metric = await registry.getSingleMetric(name)?.get();
  return Number(metric?.values[0]?.value);
}

test('requests in flight: counted while answered, and again free once answered or aborted', async (t) => {
  const waiting: (() => void)[] = [];
  const server = createServer((_request, response) => {
    waiting.push(() => response.end('done'));
  });
  const registry = new Registry();
  registerProcessGauges(registry, {
    server,
    sse: createSseHub({ maxPerAddress: 1 }),
    version: '0.0.0',
    role: 'all',
    services: [],
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const { port } = server.address() as AddressInfo;
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
    while (waiting.length < count) await new Promise((resolve) => setTimeout(resolve, 5));
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
  while ((await gauge(registry, 'http_requests_in_flight')) !== 0) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
});

test('the pool totals are served as counters, read at scrape time', async () => {
  const stats = { total: 4, idle: 1, waiting: 2, acquired: 120, waitSeconds: 1.5, timeouts: 3 };
  const { registry } = createMetrics(
    async () => 0,
    () => stats,
    false,
  );
  const text = await registry.metrics();
  assert.match(text, /^db_pool_acquires_total 120$/m);
  assert.match(text, /^db_pool_wait_seconds_total 1\.5$/m);
  assert.match(text, /^db_pool_timeouts_total 3$/m);
  assert.match(text, /^db_pool_connections\{state="waiting"\} 2$/m);
  stats.timeouts = 4;
  assert.match(await registry.metrics(), /^db_pool_timeouts_total 4$/m);
});
