import pg from 'pg';
import { modulesFor } from '../../src/modules.ts';
import type { Config } from '../../src/platform/config.ts';
import { createDatabase, type Database } from '../../src/platform/db/index.ts';
import { migrateModule } from '../../src/platform/db/migrate.ts';
import { platformMigrations } from '../../src/platform/migrations.ts';
import { bookingSeed } from './booking.ts';
import type { SeedContext, ServiceSeed } from './common.ts';
import { notifySeed } from './notify.ts';
import { parkingSeed } from './parking.ts';
import { pasteSeed } from './paste.ts';
import { formatReport, type RecordSize, recordSize, type TableSize, tableSizes } from './report.ts';

export const SEEDS: ServiceSeed[] = [pasteSeed, notifySeed, bookingSeed, parkingSeed];
export type SeedName = ServiceSeed['name'];

export interface SeedOptions {
  scale: number;
  /** A database URL, or a name on `server`; default `scale_<fraction>`. */
  database?: string;
  server?: string;
  only?: SeedName[];
  /** Load into the existing database instead of dropping and creating it. */
  keep?: boolean;
  config: Pick<Config, 'secret' | 'baseUrl'>;
  log?(message: string): void;
}

export interface SeedResult {
  databaseUrl: string;
  /** The environment to start the app on the seeded database with. */
  env: Record<string, string>;
  tables: TableSize[];
  records: RecordSize[];
  seconds: Record<string, number>;
  report: string;
}

export const DEFAULT_SERVER = 'postgres://root@127.0.0.1:5432/';

/** `0.001` -> `scale_0_001`. */
export const defaultDatabaseName = (scale: number) =>
  `scale_${String(scale).replace('.', '_').replace('-', '_')}`;

function resolveDatabase(options: SeedOptions): { url: URL; name: string } {
  const given = options.database ?? defaultDatabaseName(options.scale);
  const url = given.includes('://') ? new URL(given) : new URL(given, options.server ?? DEFAULT_SERVER);
  return { url, name: decodeURIComponent(url.pathname.slice(1)) };
}

/** Drops and creates the database; only one named `scale_…`, so a typo cannot drop a real one. */
async function recreate(url: URL, name: string): Promise<void> {
  if (!/^scale_[a-z0-9_]+$/.test(name)) throw new Error(`refusing to drop "${name}": only scale_… databases`);
  const admin = new pg.Client({ connectionString: new URL('/postgres', url).href });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
}

/** The app's own migrations (platform first, then each module the services need), as buildApp runs them. */
async function migrate(database: Database, services: SeedName[]): Promise<void> {
  await migrateModule(database, 'platform', platformMigrations);
  for (const module of modulesFor(services)) await migrateModule(database, module.name, module.migrations);
}

/** Each service on its own connection, all at once: they share no rows, and PostgreSQL has the cores. */
async function runSeeds(seeds: ServiceSeed[], base: Omit<SeedContext, 'client'>, url: string) {
  const seconds: Record<string, number> = {};
  const env: Record<string, string> = {};
  await Promise.all(
    seeds.map(async (seed) => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const started = performance.now();
      try {
        Object.assign(env, await seed.run({ ...base, client, log: (m) => base.log(`[${seed.name}] ${m}`) }));
      } finally {
        await client.end();
      }
      seconds[seed.name] = (performance.now() - started) / 1000;
      base.log(`[${seed.name}] done in ${seconds[seed.name].toFixed(1)} s`);
    }),
  );
  return { seconds, env };
}

export async function seedScale(options: SeedOptions): Promise<SeedResult> {
  const log = options.log ?? ((message: string) => console.log(message));
  const { url, name } = resolveDatabase(options);
  const services = options.only ?? SEEDS.map((seed) => seed.name);
  const seeds = SEEDS.filter((seed) => services.includes(seed.name));
  if (!options.keep) await recreate(url, name);
  const database = await createDatabase({ databaseUrl: url.href, poolSize: 2 });
  try {
    await migrate(database, services);
    const base = {
      database,
      scale: options.scale,
      now: new Date(),
      log,
      databaseName: name,
      ...options.config,
    };
    const { seconds, env } = await runSeeds(seeds, base, url.href);
    const client = new pg.Client({ connectionString: url.href });
    await client.connect();
    try {
      // What autovacuum would do before anyone reads: plans from real statistics, and the
      // visibility map and hint bits of the fresh rows (without them the first reads write).
      await client.query('vacuum (analyze)');
      const tables = await tableSizes(client, 'public');
      const records = await Promise.all(seeds.map((seed) => recordSize(client, seed, tables)));
      const appEnv = {
        DATABASE_URL: url.href,
        ...env,
        ...(options.only ? { SERVICES: services.join(',') } : {}),
      };
      return {
        databaseUrl: url.href,
        env: appEnv,
        tables,
        records,
        seconds,
        report: formatReport(tables, records, seconds),
      };
    } finally {
      await client.end();
    }
  } finally {
    await database.close();
  }
}
