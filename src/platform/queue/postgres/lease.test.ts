import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTestClock } from '../../clock.ts';
import { createDatabase, type Database } from '../../db/index.ts';
import { migrateModule } from '../../db/migrate.ts';
import { platformMigrations } from '../../migrations.ts';
import { createPostgresQueue } from '../postgres.ts';
import { createMessageLeases } from './lease.ts';

let database: Database;
before(async () => {
  database = await createDatabase({ dataDir: 'memory://' });
  await migrateModule(database, 'platform', platformMigrations);
});
after(() => database.close());

test('a claim takes the oldest ready message of each key and hides it for the lease', async () => {
  const clock = createTestClock();
  const at = (offsetMs = 0) => new Date(clock.now().getTime() + offsetMs);
  const queue = createPostgresQueue(database.db, clock);
  const leases = createMessageLeases(database.db, at, 30_000);
  for (const [id, key] of [
    ['a1', 'a'],
    ['a2', 'a'],
    ['b1', 'b'],
  ])
    await queue.publish('lease-claim', { id, key, payload: { id } });

  const first = await leases.claim('lease-claim', 10);
  assert.deepEqual(
    first.map((r) => [r.dedup_id, r.attempt]),
    [
      ['a1', 1],
      ['b1', 1],
    ],
  );
  assert.deepEqual(await leases.claim('lease-claim', 10), [], 'leased, and a2 waits behind a1');

  clock.advance(30_000);
  const again = await leases.claim('lease-claim', 1);
  assert.deepEqual(
    again.map((r) => [r.dedup_id, r.attempt]),
    [['a1', 2]],
    'an abandoned lease is claimed again, as the next attempt',
  );
  await queue.close();
});

test('keep renews the lease while the handler runs', async () => {
  const clock = createTestClock();
  const at = (offsetMs = 0) => new Date(clock.now().getTime() + offsetMs);
  const queue = createPostgresQueue(database.db, clock);
  const leases = createMessageLeases(database.db, at, 90);
  await queue.publish('lease-keep', { id: 'k1', key: 'k', payload: {} });
  const [row] = await leases.claim('lease-keep', 1);
  const release = leases.keep(row);
  clock.advance(60);
  await new Promise((resolve) => setTimeout(resolve, 100)); // a renewal runs (every 30 ms)
  clock.advance(60); // past the first lease, inside the renewed one
  assert.deepEqual(await leases.claim('lease-keep', 1), []);
  release();
  clock.advance(200);
  assert.equal((await leases.claim('lease-keep', 1)).length, 1);
  await queue.close();
});
