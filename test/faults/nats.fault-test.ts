import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  assertHonest,
  faultSkipReason,
  restartNats,
  serverErrors,
  startLoad,
  tally,
  waitForRecovery,
} from './harness.ts';
import { assertNotificationsDelivered, sendNotification, startNotifyServer } from './notify-workload.ts';

test('NATS restarted mid-load: sends stay honest, every accepted notification arrives once, the queue reconnects', {
  skip: faultSkipReason(),
}, async (t) => {
  const target = await startNotifyServer();
  t.after(() => target.stop());
  const load = startLoad(sendNotification(target.server), { concurrency: 6, tag: 'nats-fault' });
  await sleep(1500);
  await restartNats(2000);
  await sleep(2000);
  const answers = await load.stop();
  t.diagnostic(`answers: ${JSON.stringify(tally(answers))}`);
  if (answers.some((answer) => answer.status === 500)) t.diagnostic(serverErrors(target.server.output()));

  assertHonest(answers);
  await waitForRecovery(
    async () => (await sendNotification(target.server)('after the fault')).status === 202,
  );
  const ready = await fetch(`${target.server.url}/health/ready`);
  assert.equal(ready.status, 200, 'readiness recovers once NATS is back');
  const counts = await assertNotificationsDelivered(target.schema, answers);
  t.diagnostic(`accepted ${counts.accepted}, delivered ${counts.delivered}`);
});
