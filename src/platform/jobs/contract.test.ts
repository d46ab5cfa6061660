import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTestAdapters, realServices, testConfig, uniqueName } from '../../../test/support/platform.ts';
import { createTestClock, systemClock } from '../clock.ts';
import { createDatabase, type Database } from '../db/index.ts';
import { migrateModule } from '../db/migrate.ts';
import { platformMigrations } from '../migrations.ts';
import { createScheduler } from './index.ts';

/** Two handles on one database, as two scheduler processes would have. */
async function databases(): Promise<{ first: Database; second: Database; close(): Promise<void> }> {
  const url = realServices.databaseUrl;
  const schema = url ? uniqueName('j') : undefined;
  const open = async () => {
    const database = await createDatabase({ databaseUrl: url, dataDir: 'memory://', schema });
    await migrateModule(database, 'platform', platformMigrations);
    return database;
  };
  const first = await open();
  const second = url ? await open() : first;
  return {
    first,
    second,
    async close() {
      if (second !== first) await second.close();
      await first.close();
      if (schema)
        await (
          await createTestAdapters(testConfig({ REDIS_URL: '', NATS_URL: '' }), systemClock, { schema })
        ).close();
    },
  };
}

describe(`scheduler contract on ${realServices.databaseUrl ? 'PostgreSQL' : 'PGlite'}`, () => {
  let handles: Awaited<ReturnType<typeof databases>>;
  after(() => handles?.close());

  test('a tick runs once across two schedulers, and the next tick runs again', async () => {
    handles = await databases();
    const clock = createTestClock();
    const runs: string[] = [];
    const make = (who: string, database: Database) => {
      const scheduler = createScheduler(database.db, clock, who);
      scheduler.add({
        name: 'cleanup',
        schedule: '0 * * * *',
        run: async ({ tickAt }) => {
          await sleep(20);
          runs.push(`${who}@${tickAt.toISOString()}`);
        },
      });
      return scheduler;
    };
    const a = make('a', handles.first);
    const b = make('b', handles.second);
    const tick1 = new Date('2026-01-05T13:00:00Z');
    const tick2 = new Date('2026-01-05T14:00:00Z');
    const first = await Promise.all([a.runTick('cleanup', tick1), b.runTick('cleanup', tick1)]);
    assert.deepEqual(first.filter(Boolean).length, 1);
    // A late instance waking after the first finished still does not run the tick again.
    assert.equal(await b.runTick('cleanup', tick1), false);
    const second = await Promise.all([b.runTick('cleanup', tick2), a.runTick('cleanup', tick2)]);
    assert.equal(second.filter(Boolean).length, 1);
    assert.equal(runs.length, 2);
    assert.match(runs[0], /@2026-01-05T13:00:00.000Z$/);
    assert.match(runs[1], /@2026-01-05T14:00:00.000Z$/);
  });

  test('two started schedulers on a per-second cron run each tick once', async () => {
    const runs: string[] = [];
    const make = (who: string, database: Database) => {
      const scheduler = createScheduler(database.db, systemClock, who);
      scheduler.add({
        name: 'every_second',
        schedule: '* * * * * *',
        run: async ({ tickAt }) => {
          runs.push(tickAt.toISOString());
        },
      });
      return scheduler;
    };
    const a = make('a', handles.first);
    const b = make('b', handles.second);
    a.start();
    b.start();
    await sleep(3300);
    await Promise.all([a.stop(), b.stop()]);
    assert.ok(runs.length >= 3, `ran ${runs.length} times`);
    assert.equal(new Set(runs).size, runs.length, `a tick ran twice: ${runs.join(', ')}`);
  });

  test('a failing job is recorded and does not stop the scheduler', async () => {
    const clock = createTestClock();
    const scheduler = createScheduler(handles.first.db, clock, 'c');
    const errors: string[] = [];
    scheduler.events.on('error', (name: string) => errors.push(name));
    const outcomes: string[] = [];
    scheduler.events.on('ran', (_name: string, outcome: string) => outcomes.push(outcome));
    let calls = 0;
    scheduler.add({
      name: 'flaky',
      schedule: '0 * * * *',
      run: async () => {
        calls++;
        if (calls === 1) throw new Error('boom');
      },
    });
    await scheduler.runTick('flaky', new Date('2026-01-05T13:00:00Z'));
    await scheduler.runTick('flaky', new Date('2026-01-05T14:00:00Z'));
    assert.deepEqual(errors, ['flaky']);
    assert.deepEqual(outcomes, ['error', 'ok']);
  });
});
