/**
 * `npm run seed:scale -- --scale=<fraction> [--database=<url or name>] [--only=paste,notify,booking,parking] [--keep]`
 *
 * Fills a fresh PostgreSQL database (default `scale_<fraction>` on postgres://root@127.0.0.1:5432/,
 * dropped and created again unless --keep) with a fraction of the specs' volumes, set-based
 * (insert … select from generate_series / unnest), never through the API; the tables are the app's
 * own migrations. Prints rows and bytes per table, bytes per business record, seconds per service,
 * and the env that starts the app on the result.
 *
 * Data model (what the loader assumes; the code under bench/seed/ says why at each step):
 * - paste: 1 M pastes a day for 30 days. Sizes log-normal (median 2 KB, mean 10 KB, capped at
 *   10 MB), code-like text zstd-compressed by the app's own packContent, one content row per
 *   SHA-256 (5 % of pastes reuse another's). 10 % already expired (not yet cleaned up), 20 %
 *   expire later, 2 % private (owned), 1 % with a password (scrypt hashes of `seed-password`),
 *   0.5 % burn after read. Ids are the sequence's 1..n, short_urls the app's codec of them under
 *   APP_SECRET; the sequence is moved past them.
 * - notify: 12,000 a second for 30 days over 100 M users × scale (each with a preferences row),
 *   UUIDv7 ids from created_at, 1-3 channels each; outcomes and retries in notify.ts. Every
 *   delivery is published (published_at set), so the app's outbox sweep has nothing to resend.
 *   No push subscriptions: their keys would have to be real EC points.
 * - booking: 500 cities, 5,000 theatres (3-7 screens, four layouts of REGULAR/PREMIUM/RECLINER
 *   rows), 1,000 movies × scale (at least 3, 6, 20); four shows a screen a day from 30 days ago
 *   to 7 days ahead, every seat of every show in booking_show_seats; 5 M bookings a day × scale,
 *   placed on adjacent seats, each with its hold and payments (payments module and sandbox
 *   gateway rows), so a cancel or refund of a seeded booking works.
 * - parking: assumed 20,000 spots × scale (at least 100) with 5 tickets a spot a day for a year,
 *   paid; 30 % of spots occupied now by ACTIVE tickets that the spots point back at.
 * - payments' outbox is settled (version = notified_version), so nothing is re-announced at start.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/platform/config.ts';
import { SEEDS, type SeedName, seedScale } from './seed/index.ts';

function options() {
  const { values } = parseArgs({
    options: {
      scale: { type: 'string' },
      database: { type: 'string' },
      only: { type: 'string' },
      keep: { type: 'boolean', default: false },
    },
  });
  const scale = Number(values.scale);
  if (!(scale > 0 && scale <= 1)) throw new Error('--scale=<fraction> is required, in (0, 1]');
  const names = SEEDS.map((seed) => seed.name);
  const only = values.only?.split(',').map((name) => name.trim());
  const unknown = only?.filter((name) => !names.includes(name as SeedName));
  if (unknown?.length)
    throw new Error(`--only: unknown services ${unknown.join(', ')} (known: ${names.join(', ')})`);
  return { scale, database: values.database, only: only as SeedName[] | undefined, keep: values.keep };
}

const started = performance.now();
const config = loadConfig([], process.env);
const result = await seedScale({ ...options(), config: { secret: config.secret, baseUrl: config.baseUrl } });
console.log(`\n${result.report}\n`);
console.log(`loaded in ${((performance.now() - started) / 1000).toFixed(1)} s; start the app on it with:\n`);
const env = { ...result.env, ...(process.env.APP_SECRET ? { APP_SECRET: '<the same APP_SECRET>' } : {}) };
console.log(
  `${Object.entries(env)
    .map(([key, value]) => `${key}=${value}`)
    .join(' ')} npm start`,
);
