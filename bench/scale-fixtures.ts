import { existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { BENCH_SERVICES } from './harness.ts';
import { AS_SERVICE, createUsers, NOTIFY_BENCH_ENV, notificationRequest, userId } from './notify-common.ts';
import type { Fixtures } from './scale-paths.ts';
import { BOOKING_BENCH_ENV, guest, rowLabel } from './scenarios/booking-hold.ts';
import { lotJson } from './seed/parking.ts';

/** What `bench/scale.ts` and `bench/plans.ts` run the app with, and the data its hot paths use. */
export function databaseUrl(name: string): string {
  const url = new URL(BENCH_SERVICES.postgres);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * The lot file the app runs with: the one `seed:scale` wrote for that database (the app syncs
 * its spots from it, so another file would change the seeded lot), else the loader's smallest lot.
 */
export function lotFile(database: string | undefined): string {
  const seeded = join(tmpdir(), `${database}-lot.json`);
  if (database && existsSync(seeded)) return seeded;
  const path = join(tmpdir(), 'scale-empty-lot.json');
  writeFileSync(path, JSON.stringify(lotJson(100)));
  return path;
}

export function appEnv(url: string, namespace: string, lot: string): Record<string, string> {
  return {
    SERVICES: 'paste,notify,booking,parking',
    NAMESPACE: namespace,
    DATABASE_URL: url,
    BOOKING_DEMO: 'false',
    PASTE_RATE_ANON: '100000000/600',
    PARKING_LOT_CONFIG: lot,
    ...NOTIFY_BENCH_ENV,
    ...BOOKING_BENCH_ENV,
  };
}

export type Post = (
  path: string,
  body: unknown,
  headers: Record<string, string>,
) => Promise<Record<string, unknown>>;

/** What every size needs made through the API (a show to hold on, buyers, senders), then samples. */
export async function prepareFixtures(base: string, pool: pg.Pool): Promise<Fixtures> {
  const post: Post = async (path, body, headers) => {
    const response = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as Record<string, unknown>;
  };
  await createPastes(post, pool);
  await createUsers(base, 100);
  for (let i = 0; i < 200; i++)
    await post('/api/notifications', notificationRequest(userId(i % 100)), AS_SERVICE);
  const holdShow = await createShows(post);
  const buyers = await Promise.all(Array.from({ length: 200 }, () => guest(base)));
  const strings = async (query: string, params: unknown[] = []) =>
    (await pool.query(query, params)).rows.map((row) => String(Object.values(row)[0]));
  const pastes = await strings(
    `select short_url from pastes where deleted_at is null and not is_private and password_hash is null
       and not burn_after_read and (expires_at is null or expires_at > now())
     order by id desc limit 50000`,
  );
  const notifications = (
    await pool.query<{ id: string; user_id: string }>(
      'select id, user_id from notifications order by id desc limit 5000',
    )
  ).rows.map((row) => ({ id: row.id, user: row.user_id }));
  const cityDates = (
    await pool.query<{ city: string; date: string }>(
      `select t.city_id as city, to_char(s.show_time at time zone c.timezone, 'YYYY-MM-DD') as date
       from booking_shows s join booking_screens sc on sc.id = s.screen_id
       join booking_theaters t on t.id = sc.theater_id join booking_cities c on c.id = t.city_id
       where s.show_time > now() order by s.show_time limit 500`,
    )
  ).rows;
  return {
    pastes,
    uncachedRead: { next: 0 },
    notifications,
    historyUsers: [...new Set(notifications.map((n) => n.user))],
    // Shows of a cinema's size (the seeded ones, or the typical fixture), not the 10,000-seat arena.
    seatMapShows: await strings(
      'select id from booking_shows where show_time > now() and id <> $1 order by show_time limit 500',
      [holdShow.id],
    ),
    holdShow,
    buyers,
    cityDates,
    searchWords: (await strings('select title from booking_movies order by id limit 300'))
      .flatMap((title) => title.split(/\s+/))
      .filter((word) => /^[A-Za-z]{4,}$/.test(word)),
  };
}

/** More readable pastes than the uncached read gets through in a run, each read once. */
const UNCACHED_READS = 40_000;

async function createPastes(post: Post, pool: pg.Pool): Promise<void> {
  const { rows } = await pool.query<{ n: string }>('select count(*) as n from pastes where not is_private');
  let missing = UNCACHED_READS - Number(rows[0].n);
  const worker = async () => {
    while (missing-- > 0)
      await post('/api/v1/paste', { content: `scale fixture ${missing} ${'y'.repeat(800)}` }, {});
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}

const SHOW_ROWS = 100;
const SHOW_SEATS_PER_ROW = 100;
/** A screen of the seeded layouts' size: what a seat map reads on an empty database too. */
const TYPICAL = { rows: 12, seatsPerRow: 15 };

/**
 * An arena of 10,000 seats for the holds and bookings (they never run out in a run), and a show
 * of a cinema's size for the seat map; returns the arena's show.
 */
async function createShows(post: Post): Promise<Fixtures['holdShow']> {
  const admin = { 'x-admin-key': 'dev-admin-key' };
  const stamp = Date.now().toString(36);
  const city = await post('/api/v1/admin/cities', { name: `Scale City ${stamp}` }, admin);
  const movie = await post(
    '/api/v1/admin/movies',
    {
      title: `Scale Premiere ${stamp}`,
      duration_minutes: 120,
      language: 'English',
      genres: ['Drama'],
      release_date: '2025-12-01',
    },
    admin,
  );
  const layout = (rows: number, seats: number) =>
    Array.from({ length: rows }, (_, i) => ({ row: rowLabel(i), seats, seat_type: 'REGULAR' }));
  const theater = await post(
    '/api/v1/admin/theaters',
    {
      city_id: city.city_id,
      name: `Scale Arena ${stamp}`,
      screens: [
        {
          screen_number: 1,
          screen_type: 'Arena',
          rows: layout(SHOW_ROWS, SHOW_SEATS_PER_ROW),
          prices: { REGULAR: 499 },
        },
        {
          screen_number: 2,
          screen_type: 'Standard',
          rows: layout(TYPICAL.rows, TYPICAL.seatsPerRow),
          prices: { REGULAR: 499 },
        },
      ],
    },
    admin,
  );
  const screens = theater.screens as { screen_id: string }[];
  const [arena] = await Promise.all(
    screens.map((screen) =>
      post(
        '/api/v1/admin/shows',
        {
          movie_id: movie.movie_id,
          screen_id: screen.screen_id,
          show_time: new Date(Date.now() + 86_400_000).toISOString(),
        },
        admin,
      ),
    ),
  );
  return { id: String(arena.show_id), rows: SHOW_ROWS, seatsPerRow: SHOW_SEATS_PER_ROW };
}
