import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { Kysely, type Logger, PGliteDialect, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { type PoolWaits, preparingPool } from './prepared.ts';

export type Db = Kysely<Record<string, never>>;

export interface Database {
  db: Db;
  kind: 'pglite' | 'postgres';
  /** The schema tables live in (`public` unless configured). */
  schema: string;
  /** Largest number of connections a caller may use at once (1 for PGlite). */
  poolSize: number;
  /** In-use and total connections and how long callers waited for one, for /metrics. */
  poolStats(): PoolStats;
  ping(): Promise<void>;
  /** The embedded database's size on disk (PGlite only: a PostgreSQL server is watched by its own tools). */
  sizeBytes?(): Promise<number>;
  close(): Promise<void>;
}

export interface PoolStats extends PoolWaits {
  total: number;
  idle: number;
  waiting: number;
}

export interface DatabaseOptions {
  databaseUrl?: string;
  /** PGlite directory, or "memory://" for a throwaway database. */
  dataDir?: string;
  /** PostgreSQL schema to use (created if missing); tests use one schema per file. */
  schema?: string;
  poolSize?: number;
  /** Longest wait for a free connection; then the query fails (and the request is a 503). */
  poolWaitMs?: number;
  /** A pooled PostgreSQL connection is closed once this old and idle (default 300; see below). */
  connectionLifetimeSeconds?: number;
  /** Kysely's `log`: told of every statement (tracing's spans); unset, Kysely does no timing. */
  log?: Logger;
}

const INT8 = 20;

export async function createDatabase(options: DatabaseOptions): Promise<Database> {
  return options.databaseUrl
    ? connectPostgres(options.databaseUrl, options)
    : openPglite(options.dataDir ?? './data', options.log);
}

async function connectPostgres(url: string, options: DatabaseOptions): Promise<Database> {
  const poolSize = options.poolSize ?? 20;
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: options.poolWaitMs ?? 5000,
    idleTimeoutMillis: 30_000,
    // A connection keeps the generic plan of each prepared statement (prepared.ts) from the table
    // sizes it first saw until statistics change. Where nothing analyzes the tables (autovacuum
    // off, as on our CI machine), one that prepared the notify workers' batch update while the
    // tables were nearly empty went on scanning notification_deliveries as it grew, at a growing
    // cost. Replaced connections plan afresh.
    maxLifetimeSeconds: options.connectionLifetimeSeconds ?? 300,
    // `public` after the schema: extensions (pg_trgm) live there once per database, so every schema
    // sees their operators; tables are still created in (and found first in) the schema.
    options: options.schema ? `-c search_path=${options.schema},public` : undefined,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8 ? BigInt : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // A terminated backend (failover, pg_terminate_backend) emits 'error' on its client, idle or
  // checked out between two queries; without a listener that crashes the process (found by
  // src/faults/postgres.fault-test.ts). The query in flight still fails, as a 503.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  const waits: PoolWaits = { acquired: 0, waitSeconds: 0, timeouts: 0 };
  const db: Db = new Kysely({
    dialect: new PostgresDialect({ pool: preparingPool(pool, waits) }),
    log: options.log,
  });
  if (options.schema) {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query(`create schema if not exists ${options.schema}`);
    } finally {
      await admin.end();
    }
  }
  await sql`select 1`.execute(db);
  return {
    db,
    kind: 'postgres',
    schema: options.schema ?? 'public',
    poolSize,
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, ...waits }),
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}

async function openPglite(dataDir: string, log?: Logger): Promise<Database> {
  const inMemory = dataDir === 'memory://';
  if (!inMemory) mkdirSync(dataDir, { recursive: true });
  const pglite = await PGlite.create({
    dataDir: inMemory ? undefined : dataDir,
    extensions: { pg_trgm },
    parsers: { [INT8]: (value: string) => BigInt(value) },
  });
  const db: Db = new Kysely({ dialect: new PGliteDialect({ pglite }), log });
  return {
    db,
    kind: 'pglite',
    schema: 'public',
    poolSize: 1,
    poolStats: () => ({ total: 1, idle: 1, waiting: 0, acquired: 0, waitSeconds: 0, timeouts: 0 }),
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    sizeBytes: async () => {
      const { rows } = await sql<{
        bytes: bigint;
      }>`select pg_database_size(current_database()) as bytes`.execute(db);
      return Number(rows[0].bytes);
    },
    close: () => db.destroy(),
  };
}
