import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { realServices, uniqueName } from '../../../test/support/platform.ts';
import { createDatabase, type Database } from './index.ts';
import { createStatements } from './prepared.ts';

let database: Database;
before(async () => {
  const schema = realServices.databaseUrl ? uniqueName('p') : undefined;
  database = await createDatabase({ databaseUrl: realServices.databaseUrl, dataDir: 'memory://', schema });
});
after(() => database.close());

test('a named statement gives the same rows on its first (compiled) and later (cached text) calls', async () => {
  const run = createStatements(database.db, database.kind === 'postgres').query;
  const pairs = (ids: number[], names: (string | null)[]) =>
    run<{ id: number; name: string | null; tag: string }>(
      'prepared_test_pairs',
      sql`select id, name, ${'t'}::text || id as tag from unnest(${ids}::int[], ${names}::text[]) as v(id, name) order by id`,
    );
  const expected = (ids: number[], names: (string | null)[]) =>
    ids.map((id, i) => ({ id, name: names[i], tag: `t${id}` }));
  assert.deepEqual(await pairs([2, 1], ['b', null]), expected([1, 2], [null, 'b']));
  assert.deepEqual(await pairs([3], ["o'q"]), expected([3], ["o'q"]));
  assert.deepEqual(await pairs([5, 4, 6], ['x', 'y', 'z']), expected([4, 5, 6], ['y', 'x', 'z']));
  // A nested fragment is compiled every time, so its text may vary (unprepared: pg would refuse
  // a second text under one name).
  const unprepared = createStatements(database.db, false).query;
  const fragment = (flag: boolean) =>
    unprepared<{ n: number }>('prepared_test_fragment', sql`select ${flag ? sql`1` : sql`2`}::int as n`);
  assert.deepEqual(await fragment(true), [{ n: 1 }]);
  assert.deepEqual(await fragment(false), [{ n: 2 }]);
});

test('on PostgreSQL a registered text runs as a named prepared statement, any other text unnamed', async (t) => {
  if (database.kind !== 'postgres') return t.skip('PGlite runs every statement as a plain query');
  const single = await createDatabase({
    databaseUrl: realServices.databaseUrl,
    schema: database.schema,
    poolSize: 1,
  });
  try {
    const statements = createStatements(single.db, true);
    assert.deepEqual(await statements.text('prepared_test_named', 'select $1::int as n', [7]), [{ n: 7 }]);
    assert.deepEqual(await statements.query('prepared_test_tagged', sql`select ${8}::int as m`), [{ m: 8 }]);
    await sql`select ${9}::int as n`.execute(single.db);
    const names = await sql<{ name: string }>`select name from pg_prepared_statements order by name`.execute(
      single.db,
    );
    assert.deepEqual(
      names.rows.map((row) => row.name),
      ['prepared_test_named', 'prepared_test_tagged'],
    );
  } finally {
    await single.close();
  }
});

test('a pooled PostgreSQL connection is replaced once past its lifetime, so its prepared statements plan afresh', async (t) => {
  if (database.kind !== 'postgres') return t.skip('PGlite has a single connection and plans every query');
  const short = await createDatabase({
    databaseUrl: realServices.databaseUrl,
    schema: database.schema,
    poolSize: 1,
    connectionLifetimeSeconds: 1,
  });
  try {
    const backend = async () =>
      (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(short.db)).rows[0].pid;
    const first = await backend();
    assert.equal(await backend(), first);
    await new Promise((resolve) => setTimeout(resolve, 1300));
    assert.notEqual(await backend(), first);
  } finally {
    await short.close();
  }
});

test('on PostgreSQL the pool counts checkouts, the time waited and the waits that ran out', async (t) => {
  if (database.kind !== 'postgres') return t.skip('PGlite has no pool');
  const single = await createDatabase({
    databaseUrl: realServices.databaseUrl,
    schema: database.schema,
    poolSize: 1,
    poolWaitMs: 200,
  });
  t.after(() => single.close());
  const before = single.poolStats();
  // The only connection stays checked out inside the transaction while a second query waits for it.
  await single.db.transaction().execute(async (trx) => {
    await sql`select 1`.execute(trx);
    await assert.rejects(sql`select 2`.execute(single.db), /timeout exceeded/);
  });
  const after = single.poolStats();
  assert.equal(after.timeouts - before.timeouts, 1);
  assert.equal(after.acquired - before.acquired, 1, 'the transaction got its connection, the query did not');
  assert.ok(after.waitSeconds - before.waitSeconds < 0.2, 'a wait that ran out is not a checkout');
  await sql`select 3`.execute(single.db);
  assert.equal(single.poolStats().acquired - before.acquired, 2);
});
