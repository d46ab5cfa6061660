import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServer } from '../support/browser.ts';
import { uniqueName } from '../support/platform.ts';
import { assertHonest, faultSkipReason, startLoad, tally } from './harness.ts';
import { assertTicketsKept, enterCar, plate } from './parking-workload.ts';
import { assertPastesKept, createPaste, startPasteServer } from './paste-workload.ts';

test('an API process SIGKILLed mid-load: the other keeps serving, and every accepted paste is kept', {
  skip: faultSkipReason(),
}, async (t) => {
  const first = await startPasteServer();
  t.after(() => first.stop());
  // A second API process on the same database, cache and limits, as behind a load balancer.
  const second = await startServer({
    SERVICES: 'paste,parking',
    ROLE: 'api',
    DATABASE_SCHEMA: first.schema,
    NAMESPACE: uniqueName('b'),
    PASTE_RATE_ANON: '1000000/600',
    PARKING_LOT_CONFIG: first.env.PARKING_LOT_CONFIG,
  });
  t.after(() => second.stop());

  const doomed = startLoad(createPaste(second), { concurrency: 4, tag: 'doomed' });
  const survivor = startLoad(createPaste(first.server), { concurrency: 4, tag: 'survivor' });
  const doomedCars = startLoad(enterCar(second), { concurrency: 2, tag: 'doomed', make: plate('D') });
  const survivorCars = startLoad(enterCar(first.server), {
    concurrency: 2,
    tag: 'survivor',
    make: plate('S'),
  });
  await sleep(1500);
  second.process.kill('SIGKILL');
  await sleep(1500);
  const [lost, kept] = [await doomed.stop(), await survivor.stop()];
  const [lostCars, keptCars] = [await doomedCars.stop(), await survivorCars.stop()];
  t.diagnostic(`killed process: ${JSON.stringify(tally(lost))}; survivor: ${JSON.stringify(tally(kept))}`);

  // The killed process could not answer what it held; the survivor answered everything.
  assertHonest(lost, { allowNetworkErrors: true });
  assertHonest(kept);
  assertHonest(lostCars, { allowNetworkErrors: true });
  assertHonest(keptCars);
  assert.ok(
    kept.slice(-20).every((answer) => answer.status === 201),
    'the survivor kept serving',
  );
  // What the killed process acknowledged before it died is durable: the survivor serves it.
  const all = [...lost, ...kept];
  const counts = await assertPastesKept(first.server, first.schema, all);
  const tickets = await assertTicketsKept(first.server, first.schema, [...lostCars, ...keptCars]);
  t.diagnostic(
    `pastes accepted ${counts.accepted}, stored ${counts.stored}; tickets accepted ${tickets.accepted}, stored ${tickets.stored}`,
  );
});
