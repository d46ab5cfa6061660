import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { lotEnv, lotJson } from '../../../test/support/parking.ts';
import { paymentsApi } from '../../../test/support/payments.ts';
import { createTestApp, type TestApp } from '../../../test/support/platform.ts';
import { createEvents } from '../boards/events.ts';
import { createParkingRepositories, createParkingService } from '../service.ts';
import { parseLotConfig } from './config.ts';

let t: TestApp;
before(async () => {
  t = await createTestApp({ services: ['parking'], env: lotEnv() });
});
after(() => t.close());

/** The service as another process (or a restart with an edited config file) would build it. */
function serviceFor(json: ReturnType<typeof lotJson>) {
  return createParkingService({
    repositories: createParkingRepositories(t.adapters.database.db),
    lot: parseLotConfig(json),
    payments: paymentsApi(t.app),
    events: createEvents(t.adapters.pubsub, t.app.log),
    clock: t.clock,
    log: t.app.log,
  });
}

const spots = async () =>
  (
    await sql<{ id: string; retired: boolean; occupied: boolean }>`
      select id, retired, ticket_id is not null as occupied from parking_spots order by id`.execute(
      t.adapters.database.db,
    )
  ).rows;

test('spots are synced at start-up idempotently; spots removed from the config are retired, never offered again', async () => {
  const initial = await spots();
  assert.equal(initial.length, 10);
  const parked = await t.app.inject({
    method: 'POST',
    url: '/api/v1/parking/entry',
    headers: t.asOperator,
    payload: { licensePlate: 'S1', vehicleType: 'BUS' },
  });
  assert.equal(parked.json().spotId, 'F1-L01');

  // Same config again (a second process, a restart): nothing changes, the vehicle stays.
  const beforeResync = await spots();
  await serviceFor(lotJson()).syncSpots();
  assert.deepEqual(await spots(), beforeResync);
  assert.equal(beforeResync.find((spot) => spot.id === 'F1-L01')?.occupied, true);

  // Floor 1 loses its large spot while a bus stands on it.
  const edited = lotJson({
    floors: [
      { floor: 1, spots: { MOTORCYCLE: 1, COMPACT: 1, HANDICAPPED: 1, ELECTRIC: 1 } },
      { floor: 2, spots: { MOTORCYCLE: 1, COMPACT: 1, LARGE: 1, HANDICAPPED: 1, ELECTRIC: 1 } },
    ],
  });
  const service = serviceFor(edited);
  await service.syncSpots();
  const retired = (await spots()).find((spot) => spot.id === 'F1-L01');
  assert.deepEqual(retired, { id: 'F1-L01', retired: true, occupied: true }, 'the bus is still there');
  assert.equal((await service.availability()).floors[0].large, 0);
  const next = await service.enter({ licensePlate: 'S2', vehicleType: 'BUS' });
  assert.equal(next.spotId, 'F2-L01');

  // Back in the config: offered again once free.
  await serviceFor(lotJson()).syncSpots();
  assert.deepEqual(
    (await spots()).find((spot) => spot.id === 'F1-L01'),
    { id: 'F1-L01', retired: false, occupied: true },
  );
});
