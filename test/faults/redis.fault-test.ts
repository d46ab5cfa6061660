import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { assertHonest, faultSkipReason, restartRedis, startLoad, tally } from './harness.ts';
import {
  assertPastesKept,
  createPaste,
  pasteProbesUntilRecovered,
  startPasteServer,
} from './paste-workload.ts';

test('Redis restarted mid-load: answers stay honest, nothing accepted is lost, the app reconnects', {
  skip: faultSkipReason(),
}, async (t) => {
  const target = await startPasteServer();
  t.after(() => target.stop());
  const load = startLoad(createPaste(target.server), { concurrency: 8, tag: 'redis-fault' });
  await sleep(1500);
  await restartRedis(1500);
  await sleep(1500);
  const answers = await load.stop();
  t.diagnostic(`answers: ${JSON.stringify(tally(answers))}`);

  assertHonest(answers);
  const probes = await pasteProbesUntilRecovered(target.server);
  const ready = await fetch(`${target.server.url}/health/ready`);
  assert.equal(ready.status, 200, 'readiness recovers once Redis is back');
  const kept = await assertPastesKept(target.server, target.schema, answers, probes);
  t.diagnostic(`accepted ${kept.accepted}, stored ${kept.stored}`);
});
