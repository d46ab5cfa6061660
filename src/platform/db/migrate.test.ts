import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { createTestAdapters, realServices, testConfig, uniqueName } from '../../../test/support/platform.ts';
import { createDatabase, type Database } from './index.ts';
import { type Migrations, migrateModule } from './migrate.ts';

const schema = realServices.databaseUrl ? uniqueName('m') : undefined;
const open = () => createDatabase({ databaseUrl: realServices.databaseUrl, dataDir: 'memory://', schema });

/** Migrations that record each run in `runs`, so a test sees what ran and how often. */
function recording(names: string[], fail?: string): Migrations {
  return Object.fromEntries(
    names.map((name) => [
      name,
      {
        async up(db) {
          await sql`create table if not exists runs (name text not null)`.execute(db);
          await sql`insert into runs (name) values (${name})`.execute(db);
          if (name === fail) throw new Error('boom');
        },
      },
    ]),
  );
}

const runs = async (database: Database) =>
  (await sql<{ name: string }>`select name from runs order by name`.execute(database.db)).rows.map(
    (row) => row.name,
  );

describe('migrations', () => {
  let database: Database;
  before(async () => {
    database = await open();
  });
  after(async () => {
    await database.close();
    if (schema)
      await (
        await createTestAdapters(testConfig({ REDIS_URL: '', NATS_URL: '' }), undefined, { schema })
      ).close();
  });

  test('pending migrations run once, in name order; later ones run alone', async () => {
    await migrateModule(database, 'one', recording(['002_b', '001_a']));
    await migrateModule(database, 'one', recording(['002_b', '001_a']));
    assert.deepEqual(await runs(database), ['001_a', '002_b']);
    await migrateModule(database, 'one', recording(['001_a', '002_b', '003_c']));
    assert.deepEqual(await runs(database), ['001_a', '002_b', '003_c']);
  });

  test('a failing migration names itself and leaves nothing of that run behind', async () => {
    await assert.rejects(
      migrateModule(database, 'two', recording(['001_x', '002_y'], '002_y')),
      /migration 002_y of module "two" failed: Error: boom/,
    );
    assert.deepEqual(await runs(database), ['001_a', '002_b', '003_c']);
    await migrateModule(database, 'two', recording(['001_x']));
    assert.deepEqual(await runs(database), ['001_a', '001_x', '002_b', '003_c']);
  });

  test('processes starting at once migrate exactly once', {
    skip: !schema && 'one PGlite handle',
  }, async () => {
    const others = await Promise.all([open(), open(), open()]);
    try {
      await Promise.all(others.map((other) => migrateModule(other, 'three', recording(['001_p', '002_q']))));
    } finally {
      await Promise.all(others.map((other) => other.close()));
    }
    const all = await runs(database);
    assert.deepEqual(
      all.filter((name) => name.startsWith('00') && 'pq'.includes(name.at(-1) ?? '')),
      ['001_p', '002_q'],
    );
  });

  // Kysely's Migrator failed here: it introspected every schema and tripped over one being dropped.
  test('other schemas being created and dropped meanwhile do not disturb it', {
    skip: !schema && 'needs TEST_DATABASE_URL',
  }, async () => {
    const churn = new pg.Client({ connectionString: realServices.databaseUrl });
    await churn.connect();
    let churning = true;
    const loop = (async () => {
      for (let i = 0; churning; i++) {
        const other = `${schema}_churn${i}`;
        await churn.query(`create schema ${other}; create table ${other}.t (id serial primary key)`);
        await churn.query(`drop schema ${other} cascade`);
      }
    })();
    try {
      for (let i = 0; i < 40; i++) await migrateModule(database, `churn${i}`, recording([`001_c${i}`]));
    } finally {
      churning = false;
      await loop;
      await churn.end();
    }
    assert.equal((await runs(database)).filter((name) => name.startsWith('001_c')).length, 40);
  });
});
