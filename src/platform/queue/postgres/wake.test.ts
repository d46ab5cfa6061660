import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { realServices, uniqueName } from '../../../../test/support/platform.ts';
import { createTestClock, systemClock } from '../../clock.ts';
import { createDatabase, type Database } from '../../db/index.ts';
import { migrateModule } from '../../db/migrate.ts';
import { platformMigrations } from '../../migrations.ts';
import { createMemoryPubSub, createRedisPubSub, type PubSub } from '../../pubsub/index.ts';
import type { Delivery } from '../index.ts';
import { createPostgresQueue } from '../postgres.ts';

/**
 * An idle consumer of the PostgreSQL queue polls rarely; what it must not wait for comes as an
 * event. Every queue here polls once a minute, so only a wake can make these tests pass in time.
 */
const RARELY = 60_000;
let database: Database;
const connections: Redis[] = [];
before(async () => {
  database = await createDatabase({ dataDir: 'memory://' });
  await migrateModule(database, 'platform', platformMigrations);
});
after(async () => {
  for (const connection of connections) connection.disconnect();
  await database.close();
});

async function until(check: () => boolean, what: string, ms = 5000) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/**
 * Two pub/sub handles that reach each other, as two processes' would: Redis on the real
 * services; otherwise the in-process one, presented as shared (it is one object for both).
 */
function sharedPubSubs(): [PubSub, PubSub] {
  if (realServices.redisUrl) {
    const prefix = uniqueName('wake');
    const open = () => {
      const connection = new Redis(realServices.redisUrl!, { maxRetriesPerRequest: 1 });
      connections.push(connection);
      return connection;
    };
    return [createRedisPubSub(open(), open(), prefix), createRedisPubSub(open(), open(), prefix)];
  }
  const bus: PubSub = { ...createMemoryPubSub(), kind: 'redis' };
  return [bus, bus];
}

test('a retry wakes its consumer when it comes due, not at the next poll', async () => {
  const clock = createTestClock();
  const queue = createPostgresQueue(database.db, clock, { pollMs: RARELY });
  const attempts: number[] = [];
  queue.consume('wake-retry', { group: 'g', retryDelaysMs: [5000] }, async (delivery: Delivery<unknown>) => {
    attempts.push(delivery.attempt);
    if (delivery.attempt === 1) throw new Error('provider down');
  });
  await queue.publish('wake-retry', { id: 'r1', key: 'k', payload: {} });
  await until(() => attempts.length === 1, 'the first attempt');
  await sleep(50); // the failure is stored and its retry scheduled
  clock.advance(4000);
  await sleep(100);
  assert.deepEqual(attempts, [1], 'not before its delay');
  clock.advance(1000);
  await until(() => attempts.length === 2, 'the retry');
  assert.deepEqual(attempts, [1, 2]);
  await queue.close();
});

test("a publish in another process wakes this one's idle consumers through the shared pub/sub", async () => {
  const [here, there] = sharedPubSubs();
  const consumer = createPostgresQueue(database.db, systemClock, { pollMs: RARELY, pubsub: here });
  const publisher = createPostgresQueue(database.db, systemClock, { pollMs: RARELY, pubsub: there });
  const handled: string[] = [];
  consumer.consume('wake-remote', { group: 'g', retryDelaysMs: [] }, async (delivery) => {
    handled.push(delivery.id);
  });
  await sleep(200); // idle now, and subscribed
  for (const id of ['m1', 'm2', 'm3']) await publisher.publish('wake-remote', { id, key: id, payload: {} });
  await until(() => handled.length === 3, 'the other process’s messages');
  assert.deepEqual(handled.sort(), ['m1', 'm2', 'm3']);
  await publisher.close();
  await consumer.close();
});
