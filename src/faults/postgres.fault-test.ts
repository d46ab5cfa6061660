import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  assertHonest,
  faultSkipReason,
  serverErrors,
  startLoad,
  tally,
  terminateBackends,
  waitForRecovery,
} from './harness.ts';
import { assertPastesKept, createPaste, startPasteServer } from './paste-workload.ts';

test('PostgreSQL backends terminated mid-load: answers stay honest, nothing accepted is lost, the pool recovers', {
  skip: faultSkipReason(),
}, async (t) => {
  const target = await startPasteServer();
  t.after(() => target.stop());
  const load = startLoad(createPaste(target.server), { concurrency: 8, tag: 'pg-fault' });
  await sleep(1500);
  let terminated = 0;
  for (let round = 0; round < 3; round++) {
    terminated += await terminateBackends(target.applicationName);
    await sleep(700);
  }
  await sleep(1000);
  const answers = await load.stop();
  t.diagnostic(`backends terminated: ${terminated}; answers: ${JSON.stringify(tally(answers))}`);
  assert.ok(terminated > 0, 'the fault did not hit the server');

  if (target.server.process.exitCode !== null || answers.some((answer) => answer.status === 500))
    t.diagnostic(serverErrors(target.server.output()));
  assertHonest(answers);
  await waitForRecovery(async () => (await createPaste(target.server)('after the fault')).status === 201);
  const kept = await assertPastesKept(target.server, target.schema, answers);
  t.diagnostic(`accepted ${kept.accepted}, stored ${kept.stored}`);
});
