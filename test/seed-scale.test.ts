import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { type SeedResult, seedScale } from '../bench/seed/index.ts';
import { SEED_PASTE_PASSWORD } from '../bench/seed/paste.ts';
import { type App, buildApp } from '../src/app.ts';
import { unpackContent } from '../src/paste/content.ts';
import { type Adapters, createAdapters } from '../src/platform/adapters.ts';
import { DEV_KEYS } from '../src/platform/auth/keys.ts';
import { systemClock } from '../src/platform/clock.ts';
import { realServices, testConfig } from './support/platform.ts';

/**
 * The scale loader (bench/seed-scale.ts) on a fresh database of the test server, then the app
 * started on it: what was seeded must read back through the API as the app's own writes would.
 */
const skip = realServices.databaseUrl
  ? false
  : 'needs TEST_DATABASE_URL (the loader writes a real PostgreSQL database)';
const server = realServices.databaseUrl ?? 'postgres://unused/';
const databaseUrl = new URL(`/scale_test_${process.pid}`, server).href;

let seeded: SeedResult;
let app: App;
let adapters: Adapters & { close(): Promise<void> };
let db: pg.Client;

before(async () => {
  if (skip) return;
  const config = testConfig();
  seeded = await seedScale({
    scale: 0.000001,
    database: databaseUrl,
    config: { secret: config.secret, baseUrl: config.baseUrl },
    log: () => {},
  });
  const appConfig = testConfig({ ...seeded.env, DATABASE_URL: databaseUrl });
  adapters = await createAdapters(appConfig, systemClock);
  app = await buildApp(appConfig, adapters, { logger: false });
  await app.ready();
  db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
});

after(async () => {
  if (skip) return;
  await db?.end();
  await app?.close();
  await adapters?.close();
  const admin = new pg.Client({ connectionString: new URL('/postgres', server).href });
  await admin.connect();
  await admin
    .query(`drop database if exists scale_test_${process.pid} with (force)`)
    .finally(() => admin.end());
});

test('a seeded paste reads back by its short url with its content', { skip }, async () => {
  const { rows } = await db.query(
    `select p.short_url, c.data, c.encoding from pastes p join paste_contents c on c.hash = p.content_hash
     where not p.is_private and p.password_hash is null and not p.burn_after_read
       and (p.expires_at is null or p.expires_at > now()) order by p.id limit 1`,
  );
  assert.equal(rows.length, 1, 'a public live paste was seeded');
  const response = await app.inject({ url: `/api/v1/paste/${rows[0].short_url}` });
  assert.equal(response.statusCode, 200, response.body);
  assert.equal(response.json().content, unpackContent(rows[0].data, rows[0].encoding));

  // A live one: an expired or deleted paste answers 410 before any password is asked for.
  const locked = await db.query(
    `select short_url from pastes where password_hash is not null and deleted_at is null
       and (expires_at is null or expires_at > now()) limit 1`,
  );
  if (locked.rows.length === 0) return;
  const url = `/api/v1/paste/${locked.rows[0].short_url}`;
  assert.equal((await app.inject({ url })).statusCode, 401);
  const unlocked = await app.inject({ url, headers: { 'x-paste-password': SEED_PASTE_PASSWORD } });
  assert.ok([200, 410].includes(unlocked.statusCode), unlocked.body);
});

test("a seeded notification's status is served by id, with its deliveries", { skip }, async () => {
  const { rows } = await db.query(
    `select n.id, count(d.*)::int as deliveries from notifications n
     join notification_deliveries d on d.notification_id = n.id group by n.id order by n.id desc limit 1`,
  );
  const response = await app.inject({
    url: `/api/notifications/${rows[0].id}`,
    headers: { 'x-api-key': DEV_KEYS.service },
  });
  assert.equal(response.statusCode, 200, response.body);
  const body = response.json();
  assert.equal(body.id, rows[0].id);
  assert.equal(body.channels.length, rows[0].deliveries);
});

test("a seeded show's seat map answers with every seat and its bookings", { skip }, async () => {
  const { rows } = await db.query(
    `select s.id, count(*)::int as seats, count(*) filter (where ss.status = 'BOOKED')::int as booked
     from booking_shows s join booking_show_seats ss on ss.show_id = s.id
     where s.show_time > now() group by s.id order by booked desc limit 1`,
  );
  const response = await app.inject({ url: `/api/v1/shows/${rows[0].id}/seats` });
  assert.equal(response.statusCode, 200, response.body);
  const seats: { status: string }[] = response.json().seats;
  assert.equal(seats.length, rows[0].seats);
  assert.equal(seats.filter((seat) => seat.status === 'BOOKED').length, rows[0].booked);
});

test('the parking boards count the seeded occupied spots', { skip }, async () => {
  const { rows } = await db.query(
    `select count(*)::int as spots, count(*) filter (where ticket_id is not null)::int as occupied,
       (select count(*)::int from parking_tickets where status = 'ACTIVE') as active from parking_spots`,
  );
  assert.ok(rows[0].occupied > 0, 'some spots are occupied');
  assert.equal(rows[0].occupied, rows[0].active, 'one ACTIVE ticket per occupied spot');
  const response = await app.inject({ url: '/api/v1/parking/boards' });
  assert.equal(response.statusCode, 200, response.body);
  const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);
  const { total } = response.json();
  assert.equal(sum(total.totalSpots), rows[0].spots);
  assert.equal(sum(total.totalSpots) - sum(total.availableSpots), rows[0].occupied);
});

test('the report lists every table of the database with its rows and bytes', { skip }, async () => {
  const { rows } = await db.query<{ tablename: string }>(
    `select tablename from pg_tables where schemaname = 'public'`,
  );
  assert.ok(rows.length >= 30);
  for (const { tablename } of rows)
    assert.match(seeded.report, new RegExp(`^\\| ${tablename} \\| \\d+ \\|`, 'm'));
  const services = seeded.records.map((record) => record.service).sort();
  assert.deepEqual(services, ['booking', 'notify', 'parking', 'paste']);
  for (const record of seeded.records)
    assert.ok(record.count > 0 && record.bytesPerRecord > 0, record.service);
});
