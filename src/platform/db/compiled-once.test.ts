import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { realServices, uniqueName } from '../../../test/support/platform.ts';
import { compiledOnce } from './compiled-once.ts';
import { createDatabase, type Database } from './index.ts';

type Tables = {
  compiled_once_items: { id: number; name: string; tags: string[] };
};

let database: Database;
let db: Kysely<Tables>;
before(async () => {
  const schema = realServices.databaseUrl ? uniqueName('c') : undefined;
  database = await createDatabase({ databaseUrl: realServices.databaseUrl, dataDir: 'memory://', schema });
  db = database.db.withTables<Tables>();
  await sql`create table compiled_once_items (id int primary key, name text not null, tags text[] not null)`.execute(
    db,
  );
  await db
    .insertInto('compiled_once_items')
    .values([
      { id: 1, name: 'one', tags: ['odd'] },
      { id: 2, name: 'two', tags: ['even', 'prime'] },
      { id: 3, name: 'three', tags: ['odd', 'prime'] },
    ])
    .execute();
});
after(() => database.close());

const nameOf = async (id: number) =>
  (await db.selectFrom('compiled_once_items').select('name').where('id', '=', id).executeTakeFirst())?.name;

test('a query built on its first call answers each call with its own values, and is not built again', async () => {
  let builds = 0;
  const named = compiledOnce(2, (ids: number[], tag: string) => {
    builds++;
    return db
      .selectFrom('compiled_once_items')
      .select(['id', 'name'])
      .where('id', '=', sql<number>`any(${ids}::int[])`)
      .where((eb) => eb(eb.val(tag), '=', eb.fn.any('tags')))
      .where('name', '!=', 'none')
      .orderBy('id');
  });
  assert.deepEqual((await named(db, [1, 2, 3], 'odd')).rows, [
    { id: 1, name: 'one' },
    { id: 3, name: 'three' },
  ]);
  // The first call builds it twice: with stand-ins, and with its values to check the text.
  assert.equal(builds, 2);
  assert.deepEqual((await named(db, [1, 2], 'prime')).rows, [{ id: 2, name: 'two' }]);
  assert.deepEqual((await named(db, [], 'odd')).rows, []);
  assert.equal(builds, 2);
});

test('a compiled write runs in a transaction given to it, and its count comes back', async () => {
  const rename = compiledOnce(2, (id: number, name: string) =>
    db.updateTable('compiled_once_items').set({ name }).where('id', '=', id),
  );
  await db
    .transaction()
    .execute(async (trx) => {
      const result = await rename(trx, 3, 'drei');
      assert.equal(result.numAffectedRows, 1n);
      throw new Error('roll back');
    })
    .catch(() => undefined);
  assert.equal(await nameOf(3), 'three');
  assert.equal((await rename(db, 1, 'eins')).numAffectedRows, 1n);
  assert.equal(await nameOf(1), 'eins');
});

test('an argument that would change the text, or is not a parameter, is refused on the first call', async () => {
  // Used as an `in` list, the length of the array would decide the statement's text.
  const listed = compiledOnce(1, (ids: number[]) =>
    db.selectFrom('compiled_once_items').select('id').where('id', 'in', ids),
  );
  await assert.rejects(() => listed(db, [1, 2]), /text depends on the values/);
  const unused = compiledOnce(2, (id: number, _name: string) =>
    db.selectFrom('compiled_once_items').select('id').where('id', '=', id),
  );
  await assert.rejects(() => unused(db, 1, 'one'), /argument 1 is not a parameter/);
});
