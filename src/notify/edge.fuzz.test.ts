import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fuzzOperation, installWriteCounter, operationsOf } from '../platform/fuzz/index.ts';
import { createEdgeHarness, type EdgeHarness } from './edge-testing.ts';
import { providerRoutes } from './providers/index.ts';
import { createTemplateRenderer, templateRoutes } from './templates/index.ts';

/**
 * The platform's fuzzer on this branch's JSON endpoints (templates CRUD and preview, receipts
 * webhook, dev inbox API): hostile input gets a 4xx problem, never a 5xx, and commits nothing.
 * The merged app's src/fuzz.test.ts covers them again once they are wired into notify.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 40);
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
let h: EdgeHarness;
let writes: () => Promise<bigint>;

before(async () => {
  h = await createEdgeHarness({ openapi: true });
  const env = { APP_SECRET: 'fuzz-secret-of-some-length' };
  templateRoutes(h.app, {
    db: h.db,
    renderer: createTemplateRenderer(h.db),
    clock: h.clock,
  });
  await providerRoutes(h.app, {
    env,
    db: h.db,
    clock: h.clock,
    onReceipt: () => {},
  });
  await h.app.ready();
  writes = await installWriteCounter(h.db, h.database.schema);
});
after(() => h.close());

test('every edge endpoint answers hostile input with a 4xx problem and changes nothing', async (t) => {
  const operations = operationsOf(h.app);
  assert.ok(operations.length >= 8, `${operations.length} operations`);
  for (const operation of operations) {
    await t.test(`${operation.method} ${operation.path}`, async (st) => {
      const { statuses } = await fuzzOperation(h.app, writes, operation, {
        runs: RUNS,
        seed: SEED,
        credentials: { 'x-admin-key': 'dev-admin-key', 'x-api-key': 'dev-service-key' },
      });
      st.diagnostic(JSON.stringify(statuses));
    });
  }
});
