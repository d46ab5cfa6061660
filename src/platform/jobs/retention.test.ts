import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { createTestApp, metricValue, type TestApp } from '../../../test/support/platform.ts';
import { createTestClock } from '../clock.ts';
import { createMetrics } from '../observability/metrics.ts';
import { DEAD_LETTER_KEEP_MS } from '../queue/index.ts';
import { type RetentionPolicy, retentionJob } from './retention.ts';

const HOUR = 3600_000;

/** An in-memory table of row times: the loop's own behaviour, apart from any SQL. */
function rowsPolicy(times: number[], keepMs: number): RetentionPolicy & { rows: number[]; calls: number } {
  const policy = {
    table: 'rows',
    keepMs,
    rows: [...times].sort((a, b) => a - b),
    calls: 0,
    async removeBatch(cutoff: Date, limit: number) {
      policy.calls++;
      const old = policy.rows.filter((at) => at < cutoff.getTime()).slice(0, limit);
      policy.rows = policy.rows.slice(old.length);
      return old.length;
    },
    async oldest() {
      return policy.rows.length ? new Date(policy.rows[0]) : undefined;
    },
  };
  return policy;
}

describe('retention job', () => {
  const run = (job: ReturnType<typeof retentionJob>, signal = new AbortController().signal) =>
    job.run({ tickAt: new Date(), signal });

  test('removes in batches until one comes back short, and reports no lag once caught up', async () => {
    const clock = createTestClock('2026-03-01T00:00:00Z');
    const now = clock.now().getTime();
    const policy = rowsPolicy(
      [...Array.from({ length: 25 }, (_, i) => now - 48 * HOUR - i), now - HOUR],
      24 * HOUR,
    );
    const metrics = createMetrics(
      async () => 0,
      () => ({ total: 0, idle: 0, waiting: 0, acquired: 0, waitSeconds: 0, timeouts: 0 }),
      false,
    );
    await run(retentionJob('t.retention', '* * * * *', [policy], { clock, metrics }, { batch: 10 }));
    assert.deepEqual(policy.rows, [now - HOUR]);
    assert.equal(policy.calls, 3);
    const removed = await metrics.retentionRemoved.get();
    assert.equal(removed.values[0].value, 25);
    assert.equal((await metrics.retentionLag.get()).values[0].value, 0);
  });

  test('a run out of time leaves the rest for the next tick and shows it as lag', async () => {
    const clock = createTestClock('2026-03-01T00:00:00Z');
    const now = clock.now().getTime();
    const policy = rowsPolicy([now - 30 * HOUR, now - 27 * HOUR], 24 * HOUR);
    const metrics = createMetrics(
      async () => 0,
      () => ({ total: 0, idle: 0, waiting: 0, acquired: 0, waitSeconds: 0, timeouts: 0 }),
      false,
    );
    await run(retentionJob('t.retention', '* * * * *', [policy], { clock, metrics }, { budgetMs: 0 }));
    assert.equal(policy.rows.length, 2);
    assert.equal((await metrics.retentionLag.get()).values[0].value, 6 * 3600);
    const stopped = new AbortController();
    stopped.abort();
    await run(retentionJob('t.retention', '* * * * *', [policy], { clock, metrics }), stopped.signal);
    assert.equal(policy.calls, 0, 'a stopping process starts no batch');
  });
});

describe('platform retention: idempotency keys and dead letters on a moved clock', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ services: ['paste'] });
  });
  after(() => t?.close());

  test('expired idempotency keys and dead letters past their window go; the rest stays', async () => {
    const db = t.adapters.database.db;
    const now = t.clock.now().getTime();
    const key = (name: string, expiresInMs: number) =>
      sql`insert into idempotency_keys (scope, key, request_hash, status, created_at, expires_at)
        values ('test', ${name}, 'h', 'done', ${new Date(now)}, ${new Date(now + expiresInMs)})`.execute(db);
    for (let i = 0; i < 5; i++) await key(`expired-${i}`, 24 * HOUR);
    await key('fresh', 48 * HOUR);
    const message = (id: string, status: 'ready' | 'dead', deadAgoMs: number) =>
      sql`insert into queue_messages (topic, key, dedup_id, payload, status, visible_at, created_at, dead_at)
        values ('t', 'k', ${id}, '{}', ${status}, ${new Date(now)}, ${new Date(now)},
          ${status === 'dead' ? new Date(now + 25 * HOUR - deadAgoMs) : null})`.execute(db);
    await message('old-dead', 'dead', DEAD_LETTER_KEEP_MS + HOUR);
    await message('new-dead', 'dead', HOUR);
    await message('ready', 'ready', 0);

    t.clock.advance(25 * HOUR);
    assert.equal(await t.app.platform.scheduler.runTick('platform.retention', t.clock.now()), true);

    const { rows: keys } = await sql<{ key: string }>`select key from idempotency_keys order by key`.execute(
      db,
    );
    assert.deepEqual(
      keys.map((row) => row.key),
      ['fresh'],
    );
    const { rows: messages } = await sql<{ dedup_id: string }>`
      select dedup_id from queue_messages order by dedup_id`.execute(db);
    assert.deepEqual(
      messages.map((row) => row.dedup_id),
      ['new-dead', 'ready'],
    );
    assert.equal(await metricValue(t.app, 'retention_rows_removed_total', 'table="idempotency_keys"'), 5);
    assert.equal(await metricValue(t.app, 'retention_rows_removed_total', 'table="queue_messages"'), 1);
    assert.equal(await metricValue(t.app, 'retention_lag_seconds', 'table="idempotency_keys"'), 0);
  });
});
