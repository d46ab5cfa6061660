import { after, before, describe, test } from 'node:test';
import {
  fuzzOperation,
  installWriteCounter,
  type Operation,
  operationsOf,
} from '../test/support/fuzz/index.ts';
import { createTestApp, type TestApp } from '../test/support/platform.ts';

/**
 * Hostile input on every endpoint of every service (from the OpenAPI document): 200 cases each
 * with a fixed seed in CI, more with FUZZ_RUNS; FUZZ_SEED picks another sequence.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 200);
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);

let harness: TestApp;
let operations: Operation[] = [];
let writes: () => Promise<bigint>;

before(async () => {
  // Every service, plus the internal modules they pull in (payments).
  harness = await createTestApp({
    env: { LOG_LEVEL: 'silent' },
    modules: ['paste', 'notify', 'booking', 'parking', 'payments'],
  });
  operations = operationsOf(harness.app);
  writes = await installWriteCounter(harness.adapters.database.db, harness.adapters.database.schema);
});
after(() => harness?.close());

describe(`fuzz: every endpoint, ${RUNS} cases each, seed ${SEED}`, { timeout: 30 * 60_000 }, () => {
  test('every endpoint answers hostile input with a 4xx problem and changes nothing', async (t) => {
    t.diagnostic(`${operations.length} operations`);
    for (const operation of operations) {
      await t.test(`${operation.method} ${operation.path}`, async (st) => {
        const { statuses } = await fuzzOperation(harness.app, writes, operation, {
          runs: RUNS,
          seed: SEED,
          credentials: { ...harness.asAdmin, ...harness.asService, ...harness.asOperator },
        });
        st.diagnostic(JSON.stringify(statuses));
      });
    }
  });
});
