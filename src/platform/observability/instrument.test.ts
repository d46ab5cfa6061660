import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { createMemoryCache } from '../cache/index.ts';
import { systemClock } from '../clock.ts';
import { countedCache } from './instrument.ts';
import { createMetrics, tallyCounter } from './metrics.ts';

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

test('cache lookups are counted by prefix and outcome, and each scrape shows the totals', async () => {
  const registry = new Registry();
  const memory = createMemoryCache(systemClock);
  const failing = { ...memory, get: () => Promise.reject(new Error('down')) };
  const cache = countedCache(memory, registry);
  await cache.set('show:1', { id: 1 }, 60_000);
  await cache.get('show:1');
  await cache.get('show:1');
  await cache.get('show:2');
  await cache.get('bare');
  const text = async () => (await registry.metrics()).split('\n').filter((line) => line.startsWith('cache_'));
  assert.deepEqual(await text(), [
    'cache_lookups_total{cache="show",outcome="hit"} 2',
    'cache_lookups_total{cache="show",outcome="miss"} 1',
    'cache_lookups_total{cache="bare",outcome="miss"} 1',
  ]);
  await cache.get('show:1');
  assert.equal((await text())[0], 'cache_lookups_total{cache="show",outcome="hit"} 3');
  const down = new Registry();
  await assert.rejects(countedCache(failing, down).get('show:1'), /down/);
  assert.match(await down.metrics(), /^cache_lookups_total\{cache="show",outcome="error"\} 1$/m);
});

test('a tally counter shows every value from the start and its totals at each scrape', async () => {
  const registry = new Registry();
  const count = tallyCounter(registry, {
    name: 'gate_total',
    help: 'x',
    label: 'outcome',
    values: ['open', 'shut'],
  });
  const lines = async () => (await registry.metrics()).split('\n').filter((line) => line.startsWith('gate_'));
  assert.deepEqual(await lines(), ['gate_total{outcome="open"} 0', 'gate_total{outcome="shut"} 0']);
  count('open');
  count('open', 2);
  assert.deepEqual(await lines(), ['gate_total{outcome="open"} 3', 'gate_total{outcome="shut"} 0']);
  count('shut');
  assert.deepEqual(await lines(), ['gate_total{outcome="open"} 3', 'gate_total{outcome="shut"} 1']);
});
