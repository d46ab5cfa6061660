import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { assertProblem } from '../../test/support/paste.ts';
import { createTestApp, metricValue, type TestApp } from '../../test/support/platform.ts';
import type { CleanupReport } from './cleanup.ts';
import type { CreateInput } from './service.ts';

let t: TestApp;
before(async () => {
  t = await createTestApp({ services: ['paste'] });
});
after(async () => {
  await t.close();
});

interface PasteApi {
  create(input: CreateInput): Promise<{ short_url: string }>;
  cleanup(): Promise<CleanupReport>;
}

async function count(query: ReturnType<typeof sql<{ n: bigint }>>): Promise<number> {
  const { rows } = await query.execute(t.adapters.database.db);
  return Number(rows[0].n);
}

test('hourly cleanup: 2,500 expired pastes soft-deleted in 3 batches, purged 24 h later with their content; live ones untouched', async () => {
  const api = t.app.platform.modules.get('paste')?.api as PasteApi;
  // Created through the service (the HTTP layer would rate-limit 2,500 creates from one client).
  const expired: string[] = [];
  for (let i = 0; i < 2500; i++) {
    expired.push((await api.create({ content: `expiring paste number ${i}`, expires_in: 3600 })).short_url);
  }
  const live = [
    (await api.create({ content: 'lives forever' })).short_url,
    (await api.create({ content: 'lives a week', expires_in: 7 * 86_400 })).short_url,
    // Same text as an expiring paste: the shared content must survive the purge.
    (await api.create({ content: 'expiring paste number 7' })).short_url,
  ];
  const contentsBefore = await count(sql`select count(*) as n from paste_contents`);
  assert.equal(contentsBefore, 2502);

  // Nothing has expired yet: a tick changes nothing.
  await t.app.platform.scheduler.runTick('paste.cleanup', t.clock.now());
  assert.equal(await count(sql`select count(*) as n from pastes where deleted_at is not null`), 0);

  t.clock.advance(3600_000);
  assertProblem(
    await t.app.inject({ method: 'GET', url: `/api/v1/paste/${expired[0]}` }),
    410,
    'paste_expired',
  );
  const batchesBefore = await metricValue(t.app, 'paste_cleanup_batches_total', 'step="soft_delete"');
  assert.ok(
    await t.app.platform.scheduler.runTick('paste.cleanup', t.clock.now()),
    'this instance ran the tick',
  );
  assert.equal(
    await count(sql`select count(*) as n from pastes where deleted_reason = 'expired'`),
    2500,
    'every expired paste is soft-deleted',
  );
  assert.equal(await metricValue(t.app, 'paste_cleanup_soft_deleted_total'), 2500);
  assert.equal(
    (await metricValue(t.app, 'paste_cleanup_batches_total', 'step="soft_delete"')) - (batchesBefore || 0),
    3,
  );
  assert.equal(await metricValue(t.app, 'job_runs_total', 'job="paste.cleanup",outcome="ok"'), 2);
  // A second instance waking for the same tick does not run it again.
  assert.equal(await t.app.platform.scheduler.runTick('paste.cleanup', t.clock.now()), false);
  // Soft-deleted: 410 until purged, and the content is still there.
  assertProblem(
    await t.app.inject({ method: 'GET', url: `/api/v1/paste/${expired[1]}` }),
    410,
    'paste_expired',
  );
  assert.equal(await count(sql`select count(*) as n from paste_contents`), contentsBefore);

  // Not yet 24 h: nothing is purged.
  t.clock.advance(23 * 3600_000);
  const early = await api.cleanup();
  assert.equal(early.purged, 0);

  t.clock.advance(3600_000 + 1000);
  const report = await api.cleanup();
  assert.deepEqual(report, {
    softDeleted: 0,
    softDeleteBatches: 0,
    purged: 2500,
    purgeBatches: 3,
    contentsRemoved: 2499,
  });
  assert.equal(await count(sql`select count(*) as n from pastes`), 3, 'only the live pastes are left');
  assert.equal(await count(sql`select count(*) as n from paste_contents`), 3, 'orphaned content is gone');
  assert.equal(await metricValue(t.app, 'paste_cleanup_purged_total'), 2500);
  assert.equal(await metricValue(t.app, 'paste_cleanup_contents_removed_total'), 2499);
  assertProblem(
    await t.app.inject({ method: 'GET', url: `/api/v1/paste/${expired[0]}` }),
    404,
    'paste_not_found',
  );
  for (const shortUrl of live) {
    const response = await t.app.inject({ method: 'GET', url: `/api/v1/paste/${shortUrl}` });
    assert.equal(response.statusCode, 200, shortUrl);
  }
  assert.equal(
    (await t.app.inject({ method: 'GET', url: `/api/v1/paste/${live[2]}` })).json().content,
    'expiring paste number 7',
  );
});
