import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { type Counter, Registry } from 'prom-client';
import { assertProblem, createPaste } from '../../test/support/paste.ts';
import { createTestApp, type TestApp } from '../../test/support/platform.ts';
import { createPasteReads } from './reads.ts';
import { createPasteRepository } from './repository.ts';

let t: TestApp;
before(async () => {
  t = await createTestApp({ services: ['paste'] });
});
after(async () => {
  await t.close();
});

const DAY_MS = 86_400_000;
const cacheKey = (shortUrl: string) => `paste:${shortUrl}`;
const read = (shortUrl: string) => t.app.inject({ method: 'GET', url: `/api/v1/paste/${shortUrl}` });

async function databaseLoads(): Promise<number> {
  const metric = t.app.platform.metrics.registry.getSingleMetric('paste_cache_loads_total') as Counter;
  return (await metric.get()).values[0]?.value ?? 0;
}

async function viewsInDatabase(shortUrl: string): Promise<number> {
  const { rows } = await sql<{
    views: bigint;
  }>`select views from pastes where short_url = ${shortUrl}`.execute(t.adapters.database.db);
  return Number(rows[0].views);
}

describe('read-through cache', () => {
  test('a new paste is in the cache at once, with a TTL of min(24 h, time to expiry)', async () => {
    const soon = await createPaste(t.app, { content: 'ten minutes', expires_in: 600 });
    const ttl = await t.adapters.cache.ttl(cacheKey(soon.short_url));
    assert.ok(ttl !== undefined && ttl <= 600_000 && ttl > 590_000, `ttl ${ttl}`);
    const never = await createPaste(t.app, { content: 'forever' });
    const longTtl = await t.adapters.cache.ttl(cacheKey(never.short_url));
    assert.ok(longTtl !== undefined && longTtl <= DAY_MS && longTtl > DAY_MS - 10_000, `ttl ${longTtl}`);
    const week = await createPaste(t.app, { content: 'a week', expires_in: 7 * 86_400 });
    const weekTtl = await t.adapters.cache.ttl(cacheKey(week.short_url));
    assert.ok(weekTtl !== undefined && weekTtl <= DAY_MS, `ttl ${weekTtl} is capped at 24 h`);

    const before = await databaseLoads();
    assert.equal((await read(soon.short_url)).statusCode, 200);
    assert.equal(await databaseLoads(), before, 'the first read is served from the cache');
  });

  test('a miss refills the cache with the TTL capped at the expiry as it is then', async () => {
    const { short_url } = await createPaste(t.app, { content: 'refill', expires_in: 3600 });
    await t.adapters.cache.delete(cacheKey(short_url));
    t.clock.advance(3000_000);
    const before = await databaseLoads();
    assert.equal((await read(short_url)).statusCode, 200);
    assert.equal(await databaseLoads(), before + 1);
    const ttl = await t.adapters.cache.ttl(cacheKey(short_url));
    assert.ok(ttl !== undefined && ttl <= 600_000 && ttl > 590_000, `ttl ${ttl}`);
    t.clock.advance(600_000);
    assertProblem(await read(short_url), 410, 'paste_expired');
  });

  test('50 concurrent misses cost one database load', async () => {
    const { short_url } = await createPaste(t.app, { content: 'popular\n'.repeat(1000) });
    await t.adapters.cache.delete(cacheKey(short_url));
    const before = await databaseLoads();
    const responses = await Promise.all(Array.from({ length: 50 }, () => read(short_url)));
    assert.ok(responses.every((response) => response.statusCode === 200));
    assert.ok(responses.every((response) => response.json().content === 'popular\n'.repeat(1000)));
    assert.equal(await databaseLoads(), before + 1);
    // Negative control: misses one after another load once each.
    const control = await createPaste(t.app, { content: 'control' });
    const start = await databaseLoads();
    const api = t.app.platform.modules.get('paste')?.api as { invalidate(shortUrl: string): Promise<void> };
    for (let i = 0; i < 3; i++) {
      await api.invalidate(control.short_url);
      await read(control.short_url);
    }
    assert.equal(await databaseLoads(), start + 3);
  });

  test('a delete drops the cached copy everywhere: the next read is 410', async () => {
    const { short_url, delete_token } = await createPaste(t.app, { content: 'cached, then deleted' });
    assert.equal((await read(short_url)).statusCode, 200);
    assert.ok(await t.adapters.cache.get(cacheKey(short_url)));
    const deleted = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/paste/${short_url}`,
      headers: { 'x-delete-token': delete_token },
    });
    assert.equal(deleted.statusCode, 204);
    assert.equal(await t.adapters.cache.get(cacheKey(short_url)), undefined);
    assertProblem(await read(short_url), 410, 'paste_deleted');
    assertProblem(await t.app.inject({ method: 'GET', url: `/${short_url}/raw` }), 410, 'paste_deleted');
  });

  test('the cleanup drops cached copies of what it removes (one written by an instance whose clock lags, say)', async () => {
    const { short_url } = await createPaste(t.app, {
      content: 'expires, cache says otherwise',
      expires_in: 60,
    });
    assert.equal((await read(short_url)).statusCode, 200);
    t.clock.advance(61_000);
    const stale = await t.adapters.cache.get(cacheKey(short_url));
    if (!stale) {
      // The memory cache expired it with the test clock; put back what a lagging instance would have written.
      await t.adapters.cache.set(cacheKey(short_url), { planted: true }, 3600_000);
    }
    await t.app.platform.scheduler.runTick('paste.cleanup', t.clock.now());
    assert.equal(await t.adapters.cache.get(cacheKey(short_url)), undefined);
    assertProblem(await read(short_url), 410, 'paste_expired');
  });
});

describe('batched view counting', () => {
  test('reads do not write; the flush adds them in one go and refreshes the count readers see', async () => {
    const { short_url } = await createPaste(t.app, { content: 'counted' });
    for (let i = 0; i < 7; i++) await read(short_url);
    assert.equal(await viewsInDatabase(short_url), 0, 'no write per read');
    assert.equal((await read(short_url)).json().views, 8, 'readers see their own views at once');
    const api = t.app.platform.modules.get('paste')?.api as { flushViews(): Promise<void> };
    await api.flushViews();
    assert.equal(await viewsInDatabase(short_url), 8);
    // Another instance's views reach the database; the next flush brings them into this one's answers.
    await sql`update pastes set views = views + 100 where short_url = ${short_url}`.execute(
      t.adapters.database.db,
    );
    await read(short_url);
    await api.flushViews();
    assert.equal((await read(short_url)).json().views, 110);
  });

  test('counts not yet flushed are written when the app shuts down', async () => {
    const local = await createTestApp({ services: ['paste'] });
    const { short_url } = await createPaste(local.app, { content: 'shutdown' });
    for (let i = 0; i < 5; i++) await local.app.inject({ method: 'GET', url: `/${short_url}/raw` });
    await local.app.close();
    const { rows } = await sql<{
      views: bigint;
    }>`select views from pastes where short_url = ${short_url}`.execute(local.adapters.database.db);
    assert.equal(Number(rows[0].views), 5);
    await local.adapters.close();
  });
});

test('a cached entry answers its JSON head plus the current views count', async () => {
  const reads = createPasteReads({
    repository: createPasteRepository(t.adapters.database),
    cache: t.adapters.cache,
    pubsub: t.adapters.pubsub,
    clock: t.clock,
    registry: new Registry(),
    localCacheBytes: 1_000_000,
    viewFlushMs: 60_000,
    onFlushError: () => {},
  });
  await reads.start();
  try {
    const { short_url } = await createPaste(t.app, { content: 'a small paste' });
    const found = await reads.lookup(short_url);
    assert.equal(found?.state, 'live');
    const entry = reads.peek(short_url)!;
    assert.match(reads.json(entry), /^\{"content":"a small paste".*"views":0\}$/);
    reads.countView(entry);
    assert.equal(JSON.parse(reads.json(entry)).views, 1);
  } finally {
    await reads.close();
  }
});
