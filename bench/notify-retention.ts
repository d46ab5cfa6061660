import { sql } from 'kysely';
import { notifyMigrations } from '../src/notify/migrations/index.ts';
import { notificationRetention } from '../src/notify/notifications/retention.ts';
import { systemClock } from '../src/platform/clock.ts';
import { createDatabase, type Db } from '../src/platform/db/index.ts';
import { migrateModule } from '../src/platform/db/migrate.ts';
import { createBenchDatabase, numberFlag, textFlag } from './harness.ts';

/**
 * `node bench/notify-retention.ts [--notifications=1000000] [--batches=500,2000,5000] [--per=100000]`
 *
 * How fast the notify retention removes old notifications on PostgreSQL (BENCH_DATABASE_URL, else
 * TEST_DATABASE_URL, else the local server), against the spec's average intake of 12,000
 * notifications/s that it must keep up with. A throwaway database is filled set-based with
 * notifications shaped like the accept's (UUIDv7 ids of their time, request hash, data, the 202
 * answer), two deliveries each (e-mail and push, final, with content and provider ids; 1 % of
 * the old ones still queued) and a failed attempt for one in five; 90 % are 31–33 days old.
 * Then `removeBatch` runs in a loop, one batch size after the other (`--per` notifications
 * each), and the rest at the last size: notifications/s and all rows (with deliveries and
 * attempts)/s. The database is dropped at the end.
 */
const SPEC_AVERAGE_PER_SECOND = 12_000;
const DAY = 86_400_000;

async function fill(db: Db, count: number, now: Date) {
  const chunk = 250_000;
  for (let from = 1; from <= count; from += chunk) {
    const to = Math.min(count, from + chunk - 1);
    const started = performance.now();
    // Raw SQL: one data-modifying CTE per chunk, the rows generated once (`v`) and written to the three tables.
    await sql`with t as (
        select i, case when i % 10 = 0 then ${now}::timestamptz - (i % 1000) * interval '1 minute'
          else ${now}::timestamptz - interval '31 days' - (i % 172800) * interval '1 second' end as at
        from generate_series(${from}::int, ${to}::int) i),
      v as (select i, at, 'u' || (i % 100000) as user_id,
          (lpad(to_hex((extract(epoch from at) * 1000)::bigint), 12, '0') || '7' || substr(md5(i::text), 1, 3)
            || '8' || substr(md5(i::text), 4, 15))::uuid as id
        from t),
      n as (insert into notifications (id, user_id, client_id, request_hash, type, priority, lane, batch_id,
          data, accepted, created_at)
        select id, user_id, null, md5(i::text) || 'abcdefghijk', 'order_update', 'normal', 'realtime', null,
          jsonb_build_object('order_id', 'o-' || i, 'total', '24.50'),
          jsonb_build_object('id', id, 'status', 'accepted', 'channels', jsonb_build_array(
            jsonb_build_object('channel', 'email', 'status', 'queued'),
            jsonb_build_object('channel', 'push', 'status', 'queued'))),
          at
        from v),
      d as (insert into notification_deliveries (notification_id, channel, user_id, lane, status, reason, content,
          provider, provider_message_id, attempts, created_at, published_at, sent_at, delivered_at, updated_at)
        select v.id, c.channel, v.user_id, 'realtime',
          case when c.channel = 'email' and i % 10 <> 0 and i % 100 = 1 then 'queued' else 'delivered' end,
          null, 'Your order o-12345 is on its way: 2 items, 24.50 USD. Track it at https://example.org/o/12345',
          c.provider, c.provider || '-' || v.id, 1, v.at, v.at, v.at + interval '1 second',
          v.at + interval '2 seconds', v.at + interval '2 seconds'
        from v cross join (values ('email', 'smtp'), ('push', 'webpush')) c(channel, provider)),
      a as (insert into notification_attempts (notification_id, channel, attempt, at, error, provider)
        select id, 'email', 1, at, 'timeout: provider timed out', 'smtp' from v where i % 5 = 2)
      select 1`.execute(db);
    console.log(
      `filled ${to} notifications (${((performance.now() - started) / 1000).toFixed(1)} s for this chunk)`,
    );
  }
}

const counts = async (db: Db) => {
  const { rows } = await sql<{ n: number; d: number; a: number }>`select
      (select count(*)::int from notifications) as n, (select count(*)::int from notification_deliveries) as d,
      (select count(*)::int from notification_attempts) as a`.execute(db);
  return rows[0];
};

async function main() {
  const notifications = numberFlag('notifications', 1_000_000);
  const per = numberFlag('per', 100_000);
  const sizes = (textFlag('batches') ?? '500,2000,5000').split(',').map(Number);
  const server =
    process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
  const bench = await createBenchDatabase(server);
  const database = await createDatabase({ databaseUrl: bench.url, poolSize: 2 });
  try {
    await migrateModule(database, 'notify', notifyMigrations);
    const { db } = database;
    const now = new Date();
    const filling = performance.now();
    await fill(db, notifications, now);
    await sql`vacuum analyze`.execute(db);
    const before = await counts(db);
    console.log(
      `filled in ${((performance.now() - filling) / 1000).toFixed(0)} s: ${before.n} notifications, ${before.d} deliveries, ${before.a} attempts`,
    );
    const policy = notificationRetention(db, 30 * DAY, systemClock);
    const cutoff = new Date(now.getTime() - 30 * DAY);
    const measure = async (limit: number, upTo: number) => {
      const start = await counts(db);
      const started = performance.now();
      let removed = 0;
      let batches = 0;
      let slowest = 0;
      while (removed < upTo) {
        const t0 = performance.now();
        const n = await policy.removeBatch(cutoff, limit);
        slowest = Math.max(slowest, performance.now() - t0);
        removed += n;
        batches++;
        if (n < limit) break;
      }
      const seconds = (performance.now() - started) / 1000;
      const end = await counts(db);
      const rows = start.n - end.n + start.d - end.d + start.a - end.a;
      console.log(
        `batch ${limit}: ${removed} notifications in ${batches} batches, ${seconds.toFixed(1)} s: ` +
          `${Math.round(removed / seconds)} notifications/s (${(removed / seconds / SPEC_AVERAGE_PER_SECOND).toFixed(2)} of the spec's 12,000/s), ` +
          `${Math.round(rows / seconds)} rows/s; slowest batch ${slowest.toFixed(0)} ms`,
      );
      return removed;
    };
    if (process.argv.includes('--keep')) {
      console.log(`filled database kept: ${bench.url}`);
      return;
    }
    for (const size of sizes) await measure(size, per);
    await measure(sizes.at(-1) ?? 2000, Number.POSITIVE_INFINITY);
    const oldestStarted = performance.now();
    const oldest = await policy.oldest();
    const after = await counts(db);
    console.log(
      `left: ${after.n} notifications (the recent 10 % and the old ones still queued), ${after.d} deliveries, ${after.a} attempts; ` +
        `oldest() ${oldest?.toISOString() ?? 'none'} in ${(performance.now() - oldestStarted).toFixed(0)} ms`,
    );
  } finally {
    await database.close();
    // --keep leaves the database for a look at the plans (psql); drop it by hand afterwards.
    if (process.argv.includes('--keep')) console.log(`kept ${bench.url}`);
    else await bench.drop();
  }
}

await main();
