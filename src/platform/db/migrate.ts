import { type Migration, Migrator } from 'kysely/migration';
import type { Database } from './index.ts';

export type Migrations = Record<string, Migration>;

/**
 * Runs one module's migrations. Each module keeps its own history table, so modules can be
 * deployed independently; Kysely's Postgres adapter takes a transaction-level advisory lock
 * named after that table, so several processes starting at once migrate exactly once.
 */
export async function migrateModule(
  database: Database,
  module: string,
  migrations: Migrations,
): Promise<void> {
  const migrator = new Migrator({
    db: database.db,
    // Without the schema, Kysely would take a history table of the same name in another schema
    // (another tenant, a parallel test) for its own and skip creating it.
    migrationTableSchema: database.schema,
    provider: { getMigrations: async () => migrations },
    migrationTableName: `migrations_${module}`,
    migrationLockTableName: `migrations_${module}_lock`,
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((result) => result.status === 'Error');
  if (error || failed) {
    throw new Error(
      `migration ${failed?.migrationName ?? ''} of module "${module}" failed: ${String(error)}`,
      {
        cause: error,
      },
    );
  }
}
