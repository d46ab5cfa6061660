import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { createTestClock } from '../../clock.ts';
import { createDatabase, type Database } from '../../db/index.ts';
import { migrateModule } from '../../db/migrate.ts';
import { platformMigrations } from '../../migrations.ts';
import { type Handler, PermanentError, RetryLater } from '../index.ts';
import { createPostgresQueue } from '../postgres.ts';
import { createMessageLeases } from './lease.ts';
import { createRowProcessor } from './processor.ts';

let database: Database;
before(async () => {
  database = await createDatabase({ dataDir: 'memory://' });
  await migrateModule(database, 'platform', platformMigrations);
});
after(() => database.close());

let topics = 0;

/** Publishes one message, claims it and runs `handler` on it; answers the row afterwards and the outcomes. */
async function processOne(handler: Handler<unknown>, retryDelaysMs = [1000]) {
  const due: number[] = [];
  const topic = `processor-${++topics}`;
  const clock = createTestClock();
  const at = (offsetMs = 0) => new Date(clock.now().getTime() + offsetMs);
  const queue = createPostgresQueue(database.db, clock);
  const leases = createMessageLeases(database.db, at, 30_000);
  const events = new EventEmitter();
  const outcomes: string[] = [];
  events.on('outcome', (_topic, outcome) => outcomes.push(outcome));
  const process = createRowProcessor({
    db: database.db,
    at,
    leases,
    topic,
    handler,
    retryDelaysMs,
    signal: new AbortController().signal,
    events,
    retryDue: (delayMs) => due.push(delayMs),
  });
  await queue.publish(topic, { id: 'm1', key: 'k', payload: { n: 1 } });
  const [row] = await leases.claim(topic, 1);
  await process(row);
  const { rows } = await sql<{
    status: string;
    attempt: number;
    last_error: string | null;
    visible_at: Date;
  }>`
    select status, attempt, last_error, visible_at from queue_messages where topic = ${topic}`.execute(
    database.db,
  );
  await queue.close();
  return { outcomes, row: rows[0], now: clock.now(), due };
}

test('a handled message is deleted', async () => {
  const { outcomes, row } = await processOne(async (d) => {
    assert.deepEqual([d.id, d.key, d.payload, d.attempt], ['m1', 'k', { n: 1 }, 1]);
  });
  assert.deepEqual(outcomes, ['acked']);
  assert.equal(row, undefined);
});

test('a failure becomes visible again after its retry delay, the attempt spent', async () => {
  const { outcomes, row, now, due } = await processOne(async () => {
    throw new Error('provider timeout');
  });
  assert.deepEqual(outcomes, ['retried']);
  assert.deepEqual(due, [1000], 'the claim loop is told when to look again');
  assert.equal(row.status, 'ready');
  assert.equal(row.attempt, 1);
  assert.equal(row.last_error, 'Error: provider timeout');
  assert.equal(row.visible_at.getTime(), now.getTime() + 1000);
});

test('RetryLater gives the attempt back', async () => {
  const { outcomes, row, now, due } = await processOne(async () => {
    throw new RetryLater(5000);
  });
  assert.deepEqual(outcomes, ['deferred']);
  assert.deepEqual(due, [5000]);
  assert.equal(row.attempt, 0);
  assert.equal(row.visible_at.getTime(), now.getTime() + 5000);
});

test('a PermanentError, or the last attempt failing, makes the message dead', async () => {
  const permanent = await processOne(async () => {
    throw new PermanentError('bad address');
  });
  assert.deepEqual(permanent.outcomes, ['dead_lettered']);
  assert.equal(permanent.row.status, 'dead');
  assert.deepEqual(permanent.due, [], 'nothing to look for later');
  const last = await processOne(async () => {
    throw new Error('down');
  }, []);
  assert.deepEqual(last.outcomes, ['dead_lettered']);
  assert.equal(last.row.last_error, 'Error: down');
});
