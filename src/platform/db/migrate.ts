import { type Kysely, sql } from 'kysely';
import type { Database } from './index.ts';

/** One schema change; `up` runs inside the migration transaction. */
export interface Migration {
  // biome-ignore lint/suspicious/noExplicitAny: migrations create tables the typed schema does not know yet
  up(db: Kysely<any>): Promise<void>;
}

export type Migrations = Record<string, Migration>;

/**
 * Runs one module's pending migrations, in name order, in one transaction. Each module keeps its
 * own history table (`migrations_<module>`, the same shape Kysely's Migrator used) so modules can
 * be deployed independently. A transaction-level advisory lock named after the schema and module
 * makes several processes starting at once migrate exactly once.
 *
 * Not Kysely's Migrator: it checks for its tables by introspecting every table of every schema
 * with `pg_get_serial_sequence`, which fails ("schema … does not exist") when another schema is
 * dropped at that moment (a parallel test, another tenant). This only reads its own table.
 */
export async function migrateModule(
  database: Database,
  module: string,
  migrations: Migrations,
): Promise<void> {
  const history = sql.table(`${database.schema}.migrations_${module}`);
  await database.db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext(${`${database.schema}.migrations_${module}`}))`.execute(
      trx,
    );
    await sql`create table if not exists ${history} (
      name varchar(255) primary key,
      timestamp varchar(255) not null
    )`.execute(trx);
    const { rows } = await sql<{ name: string }>`select name from ${history}`.execute(trx);
    const done = new Set(rows.map((row) => row.name));
    for (const name of Object.keys(migrations).sort()) {
      if (done.has(name)) continue;
      try {
        await migrations[name].up(trx);
      } catch (error) {
        throw new Error(`migration ${name} of module "${module}" failed: ${String(error)}`, { cause: error });
      }
      await sql`insert into ${history} (name, timestamp) values (${name}, ${new Date().toISOString()})`.execute(
        trx,
      );
    }
  });
}
