import type pg from 'pg';
import type { Database } from '../../src/platform/db/index.ts';

/** What every service's loader gets: its own connection, the scale and one instant all data is relative to. */
export interface SeedContext {
  client: pg.Client;
  /** The app's database handle, for the few steps that reuse the app's own code (the parking lot sync). */
  database: Database;
  scale: number;
  now: Date;
  /** APP_SECRET the app will run with: the paste short_urls depend on it. */
  secret: string;
  /** BASE_URL the app will run with (payment pages are linked under it). */
  baseUrl: string;
  /** Names files that belong to this database (the parking lot file). */
  databaseName: string;
  log(message: string): void;
}

/** One service's loader and how its report groups tables into a business record. */
export interface ServiceSeed {
  name: 'paste' | 'notify' | 'booking' | 'parking';
  /** Tables whose bytes make one record, e.g. a booking with its hold and payments. */
  recordTables: string[];
  /** Rows of shared tables (payments, sandbox charges) that belong to this service. */
  sharedRows?: { table: string; where: string }[];
  /** The table whose rows are the records. */
  recordTable: string;
  recordName: string;
  run(context: SeedContext): Promise<Record<string, string>>;
}

export const DAY_MS = 86_400_000;

/** At least one: a scale too small for one row of something still gets one. */
export const atLeast = (minimum: number, value: number) => Math.max(minimum, Math.round(value));

/**
 * A UUIDv7 whose time is `ts` and whose other bits are random: a v4 (already with the RFC
 * variant) with its first 48 bits replaced by the milliseconds, and version bits 0100 -> 0111.
 * Session-local (pg_temp), so each service's connection creates its own and nothing is left behind.
 */
export async function createUuid7Function(client: pg.Client): Promise<void> {
  await client.query(`
    create function pg_temp.uuid7(ts timestamptz) returns uuid language sql volatile as $$
      select encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
        placing substring(int8send((extract(epoch from ts) * 1000)::bigint) from 3) from 1 for 6),
        52, 1), 53, 1), 'hex')::uuid
    $$`);
}

/** Runs `step(0 … count-1)` in order, logging elapsed seconds every `every` chunks. */
export async function inChunks(
  context: SeedContext,
  label: string,
  count: number,
  step: (index: number) => Promise<void>,
  every = 1,
): Promise<void> {
  const started = performance.now();
  for (let index = 0; index < count; index++) {
    await step(index);
    if ((index + 1) % every === 0 || index + 1 === count) {
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      context.log(`${label} ${index + 1}/${count} (${seconds} s)`);
    }
  }
}

/** Splits `total` into `parts` near-equal integers that add up to it. */
export function share(total: number, parts: number, index: number): number {
  return Math.floor((total * (index + 1)) / parts) - Math.floor((total * index) / parts);
}
