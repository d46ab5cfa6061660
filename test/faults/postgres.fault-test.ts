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
} from './harness.ts';
import { assertTicketsKept, enterCar, plate } from './parking-workload.ts';
import {
  assertPastesKept,
  createPaste,
  pasteProbesUntilRecovered,
  startPasteServer,
} from './paste-workload.ts';

test('PostgreSQL backends terminated mid-load: answers stay honest, nothing accepted is lost, the pool recovers', {
  skip: faultSkipReason(),
}, async (t) => {
  const target = await startPasteServer();
  t.after(() => target.stop());
  const load = startLoad(createPaste(target.server), { concurrency: 6, tag: 'pg-fault' });
  const parking = startLoad(enterCar(target.server), { concurrency: 4, tag: 'pg', make: plate('PG') });
  await sleep(1500);
  let terminated = 0;
  for (let round = 0; round < 3; round++) {
    terminated += await terminateBackends(target.applicationName);
    await sleep(700);
  }
  await sleep(1000);
  const answers = await load.stop();
  const entries = await parking.stop();
  t.diagnostic(
    `backends terminated: ${terminated}; pastes: ${JSON.stringify(tally(answers))}; entries: ${JSON.stringify(tally(entries))}`,
  );
  assert.ok(terminated > 0, 'the fault did not hit the server');

  if (
    target.server.process.exitCode !== null ||
    [...answers, ...entries].some((answer) => answer.status === 500)
  )
    t.diagnostic(serverErrors(target.server.output()));
  assertHonest(answers);
  assertHonest(entries);
  const probes = await pasteProbesUntilRecovered(target.server);
  const kept = await assertPastesKept(target.server, target.schema, answers, probes);
  const parked = await assertTicketsKept(target.server, target.schema, entries);
  t.diagnostic(
    `pastes accepted ${kept.accepted}, stored ${kept.stored}; tickets accepted ${parked.accepted}, stored ${parked.stored}`,
  );
});
