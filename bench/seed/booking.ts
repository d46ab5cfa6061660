import {
  atLeast,
  createUuid7Function,
  DAY_MS,
  inChunks,
  type SeedContext,
  type ServiceSeed,
} from './common.ts';

/** spec/seat-booking-and-parking.md: 500 cities, 5,000 theatres, about 5 million bookings a day. */
const CITIES = 500;
const THEATERS = 5_000;
const BOOKINGS_PER_DAY = 5_000_000;
/** Not in the spec: a catalogue of a thousand running movies (all languages) at full scale. */
const MOVIES = 1_000;
const PAST_DAYS = 30;
const FUTURE_DAYS = 7;
/** Local show times (Asia/Kolkata, the demo catalogue's zone), four a screen a day. */
const SHOW_TIMES = ['10:00', '13:30', '17:00', '20:30'];
/** BOOKING_CURRENCY's default (src/booking/settings.ts). */
const CURRENCY = 'INR';
const CITY_NAMES = [
  'Mumbai',
  'Delhi',
  'Bengaluru',
  'Chennai',
  'Hyderabad',
  'Kolkata',
  'Pune',
  'Ahmedabad',
  'Jaipur',
  'Lucknow',
  'Surat',
  'Kanpur',
  'Nagpur',
  'Indore',
  'Bhopal',
  'Patna',
  'Vadodara',
  'Ludhiana',
  'Agra',
  'Nashik',
  'Kochi',
  'Coimbatore',
  'Madurai',
  'Visakhapatnam',
  'Mysuru',
  'Chandigarh',
  'Guwahati',
  'Goa',
  'Dehradun',
  'Amritsar',
];

/**
 * Seat layouts as rows of one type: (layout, first row, last row, seats a row, type, price in
 * paise). Standard 136 seats, IMAX 192, Gold Recliner 32, Standard XL 322: the demo's screens and a big one.
 */
const LAYOUTS = `(values
  (1, 1, 8, 14, 'REGULAR', 18000), (1, 9, 10, 12, 'PREMIUM', 28000),
  (2, 1, 10, 16, 'REGULAR', 35000), (2, 11, 12, 16, 'PREMIUM', 50000),
  (3, 1, 4, 8, 'RECLINER', 75000),
  (4, 1, 12, 20, 'REGULAR', 20000), (4, 13, 16, 18, 'PREMIUM', 30000), (4, 17, 17, 10, 'RECLINER', 60000)
) as l(layout, first_row, last_row, seats, seat_type, price)`;

/** The catalogue's volumes at this scale, never below a few cities and theatres. */
function catalogueSize(scale: number) {
  return {
    cities: atLeast(3, CITIES * scale),
    theaters: atLeast(6, THEATERS * scale),
    movies: atLeast(20, MOVIES * scale),
    users: atLeast(1000, (BOOKINGS_PER_DAY * PAST_DAYS * scale) / 4),
  };
}

async function insertCities(context: SeedContext, cities: number): Promise<void> {
  await context.client.query(
    `create temp table seed_cities as
     select n, pg_temp.uuid7($2::timestamptz - interval '400 days' + n * interval '1 second') as id
     from generate_series(1, $1::int) n`,
    [cities, context.now],
  );
  await context.client.query(
    `insert into booking_cities (id, name, state, timezone, created_at)
     select id, case when n <= cardinality($1::text[]) then $1[n]
                     else $1[1 + (n - 1) % cardinality($1)] || ' ' || (1 + (n - 1) / cardinality($1)) end,
       'State ' || (1 + n % 28), 'Asia/Kolkata', $2::timestamptz - interval '400 days'
     from seed_cities`,
    [CITY_NAMES, context.now],
  );
}

/** Theatres round-robin over the cities, 3 to 7 screens each (5 on average). */
async function insertTheaters(context: SeedContext, theaters: number, cities: number): Promise<void> {
  await context.client.query(
    `create temp table seed_theaters as
     select t.n, pg_temp.uuid7($3::timestamptz - interval '390 days') as id, c.id as city_id,
       3 + floor(random() * 5)::int as screens
     from generate_series(1, $1::int) t(n) join seed_cities c on c.n = 1 + (t.n - 1) % $2::int`,
    [theaters, cities, context.now],
  );
  await context.client.query(
    `insert into booking_theaters (id, city_id, name, address, total_screens, created_at)
     select id, city_id, (array['Galaxy', 'Regal', 'Starlight', 'Grand', 'Plaza', 'Royal'])[1 + n % 6]
       || ' Cinemas ' || n, n || ' Main Road', screens, $1::timestamptz - interval '390 days'
     from seed_theaters`,
    [context.now],
  );
}

/** Screens with a layout each (Standard 50 %, XL 20 %, IMAX 15 %, Recliner 15 %), then their seats. */
async function insertScreensAndSeats(context: SeedContext): Promise<void> {
  const { client } = context;
  await client.query(
    `create temp table seed_screens as
     select pg_temp.uuid7($1::timestamptz - interval '390 days') as id, t.id as theater_id, s as screen_number,
       case when d < 0.5 then 1 when d < 0.7 then 4 when d < 0.85 then 2 else 3 end as layout
     from (select t.*, s, random() as d from seed_theaters t cross join lateral generate_series(1, t.screens) s) t`,
    [context.now],
  );
  await client.query(
    `create temp table seed_seats as
     select pg_temp.uuid7($1::timestamptz - interval '390 days') as id, sc.id as screen_id,
       chr(64 + r) as row_number, s as seat_number, chr(64 + r) || s as label, l.seat_type,
       l.price as base_price_minor, row_number() over (partition by sc.id order by r, s) as ord
     from seed_screens sc join ${LAYOUTS} on l.layout = sc.layout
     cross join lateral generate_series(l.first_row, l.last_row) r cross join lateral generate_series(1, l.seats) s`,
    [context.now],
  );
  await client.query('create index on seed_seats (screen_id, ord)');
  await client.query(
    `insert into booking_screens (id, theater_id, screen_number, total_seats, screen_type, created_at)
     select sc.id, sc.theater_id, sc.screen_number, (select count(*) from seed_seats st where st.screen_id = sc.id),
       (array['Standard', 'IMAX', 'Gold Recliner', 'Standard XL'])[sc.layout], $1::timestamptz - interval '390 days'
     from seed_screens sc`,
    [context.now],
  );
  await client.query(
    `insert into booking_seats (id, screen_id, row_number, seat_number, seat_type, base_price_minor)
     select id, screen_id, row_number, seat_number, seat_type, base_price_minor from seed_seats`,
  );
  await client.query('analyze seed_seats');
}

async function insertMovies(context: SeedContext, movies: number): Promise<void> {
  await context.client.query(
    `create temp table seed_movies as
     select n, pg_temp.uuid7($2::timestamptz - interval '200 days') as id, 90 + floor(random() * 90)::int as duration
     from generate_series(1, $1::int) n`,
    [movies, context.now],
  );
  await context.client.query(
    `insert into booking_movies (id, title, description, duration_minutes, language, genres, release_date, rating,
       created_at, updated_at)
     select id, (array['The Last', 'Orbit of', 'Midnight', 'Paper', 'Iron', 'Whispering', 'Quantum', 'Chennai',
         'Silent', 'Golden'])[1 + n % 10] || ' ' ||
       (array['Monsoon', 'Silence', 'Express', 'Kites', 'Ledger', 'Dunes', 'Heist', 'Nights', 'River', 'Harbour'])
         [1 + (n / 10) % 10] || case when n > 100 then ' ' || (n / 100 + 1) else '' end,
       'A story told in ' || duration || ' minutes.', duration,
       (array['Hindi', 'English', 'Tamil', 'Telugu', 'Kannada', 'Malayalam'])[1 + n % 6],
       array[(array['Drama', 'Action', 'Comedy', 'Thriller', 'Romance', 'Sci-Fi', 'Family'])[1 + n % 7]],
       ($1::timestamptz - interval '120 days' + random() * interval '120 days')::date,
       round((5 + random() * 4.5)::numeric, 1), $1::timestamptz - interval '200 days', $1::timestamptz - interval '200 days'
     from seed_movies`,
    [context.now],
  );
}

/**
 * One day's shows on every screen, each with how many bookings it gets: the day's share of the
 * spec's rate spread over the shows, from a fifth to nearly twice the average, rounded at random
 * (up with the probability of the fraction) so that tiny scales still book their share.
 */
const DRAW_SHOWS = `
  create temp table seed_day_shows on commit drop as
  select pg_temp.uuid7(x.show_time - interval '14 days') as id, x.screen_id, m.id as movie_id, x.show_time,
    x.show_time + m.duration * interval '1 minute' as end_time, x.multiplier,
    (select count(*) from seed_seats st where st.screen_id = x.screen_id)::int as capacity,
    floor($4::float8 * (0.2 + 1.6 * random()) + random())::int as target
  from (
    select sc.id as screen_id, (($1::date + t.at::time) at time zone 'Asia/Kolkata') as show_time,
      case when t.at = '20:30' then 1.20 else 1.00 end + case when extract(isodow from $1::date) >= 6 then 0.10 else 0 end
        as multiplier,
      1 + floor(random() * $2::int)::int as pick
    from seed_screens sc cross join unnest($3::text[]) as t(at)
  ) x join seed_movies m on m.n = x.pick`;

/**
 * The day's bookings: 1 to 4 adjacent seats each, in seat order from the front, made up to three
 * days before the show and only before now. CONFIRMED 93 %, FAILED (declined) 4 %, CANCELLED with
 * a full refund 3 %; 5 % of the confirmed paid on a second attempt; 15 % had an earlier hold on
 * the same seats that expired.
 */
const DRAW_BOOKINGS = `
  create temp table seed_day_bookings on commit drop as
  select pg_temp.uuid7(booking_time) as id, pg_temp.uuid7(booking_time - interval '2 minutes') as hold_id,
    pg_temp.uuid7(booking_time + interval '1 second') as payment_id,
    case when fate < 0.93 and retry < 0.05 then pg_temp.uuid7(booking_time + interval '500 milliseconds') end
      as failed_payment_id,
    md5('booking-user-' || user_n)::uuid as user_id,
    case when fate < 0.93 then 'CONFIRMED' when fate < 0.97 then 'FAILED' else 'CANCELLED' end as status,
    least(booking_time + random() * (show_time - booking_time), $2::timestamptz) as cancelled_at,
    retry < 0.15 as abandoned_first, *
  from (
    select *, sum(size) over (partition by show_id order by k) - size as start
    from (
      select sh.id as show_id, sh.show_time, (sh.multiplier * 100)::int as hundredths, sh.capacity, k,
        1 + floor(random() * 4)::int as size, random() as fate, random() as retry,
        sh.show_time - interval '30 minutes' - random() * interval '3 days' as booking_time,
        1 + floor(random() * $1::int)::int as user_n
      from seed_day_shows sh cross join lateral generate_series(1, sh.target) k
    ) drawn
  ) placed
  where start + size <= capacity and booking_time < $2::timestamptz`;

const DRAW_SEATS = `
  create temp table seed_day_seats on commit drop as
  select b.id as booking_id, array_agg(st.id order by st.ord) as seat_ids, array_agg(st.label order by st.ord) as labels,
    sum(floor((st.base_price_minor * b.hundredths + 50) / 100))::bigint as total
  from seed_day_bookings b join seed_day_shows sh on sh.id = b.show_id
  join seed_seats st on st.screen_id = sh.screen_id and st.ord > b.start and st.ord <= b.start + b.size
  group by b.id`;

/** Holds of the bookings, and the expired holds some had before them (another user, same seats). */
const INSERT_HOLDS = `
  insert into booking_holds (id, show_id, user_id, seat_ids, seats, total_minor, status, expires_at, created_at,
    released_at, release_reason)
  select b.hold_id, b.show_id, b.user_id, s.seat_ids, s.labels, s.total,
    case b.status when 'CONFIRMED' then 'BOOKED' else 'RELEASED' end,
    b.booking_time + interval '10 minutes', b.booking_time - interval '2 minutes',
    case b.status when 'FAILED' then b.booking_time + interval '5 seconds' when 'CANCELLED' then b.cancelled_at end,
    case b.status when 'FAILED' then 'payment_failed' when 'CANCELLED' then 'cancelled' end
  from seed_day_bookings b join seed_day_seats s on s.booking_id = b.id
  union all
  select pg_temp.uuid7(b.booking_time - interval '30 minutes'), b.show_id, md5('booking-user-' || (b.user_n + 1))::uuid,
    s.seat_ids, s.labels, s.total, 'EXPIRED', b.booking_time - interval '20 minutes',
    b.booking_time - interval '30 minutes', b.booking_time - interval '20 minutes', 'expired'
  from seed_day_bookings b join seed_day_seats s on s.booking_id = b.id
  where b.abandoned_first`;

const INSERT_BOOKINGS = `
  insert into booking_bookings (id, hold_id, user_id, show_id, status, seats, total_minor, currency, payment_id,
    booking_time, payment_deadline, confirmed_at, failed_at, failure_reason, cancelled_at, cancel_reason,
    refund_minor, refund_status, email, phone)
  select b.id, b.hold_id, b.user_id, b.show_id, b.status, s.labels, s.total, $1, b.payment_id::text, b.booking_time,
    b.booking_time + interval '10 minutes',
    case when b.status <> 'FAILED' then b.booking_time + interval '3 seconds' end,
    case when b.status = 'FAILED' then b.booking_time + interval '3 seconds' end,
    case when b.status = 'FAILED' then 'card_declined' end,
    case when b.status = 'CANCELLED' then b.cancelled_at end,
    case when b.status = 'CANCELLED' then 'customer' end,
    case when b.status = 'CANCELLED' then s.total end,
    case when b.status = 'CANCELLED' then 'COMPLETED' end,
    'booking-user-' || b.user_n || '@example.test', null
  from seed_day_bookings b join seed_day_seats s on s.booking_id = b.id`;

/** Every payment of the day: the final one of each booking and the declined first tries. */
const DRAW_PAYMENTS = `
  create temp table seed_day_payments on commit drop as
  select b.payment_id as id, b.id as booking_id, s.total as amount, b.booking_time + interval '1 second' as created_at,
    case b.status when 'CONFIRMED' then 'COMPLETED' when 'FAILED' then 'FAILED' else 'REFUNDED' end as status,
    b.cancelled_at, s.labels
  from seed_day_bookings b join seed_day_seats s on s.booking_id = b.id
  union all
  select b.failed_payment_id, b.id, s.total, b.booking_time + interval '500 milliseconds', 'FAILED', null, s.labels
  from seed_day_bookings b join seed_day_seats s on s.booking_id = b.id
  where b.failed_payment_id is not null`;

const INSERT_PAYMENTS = `
  insert into payments (id, purpose, reference, description, amount_minor, currency, status, allow_retry,
    idempotency_key, return_url, attempts, gateway_charge_id, card_last4, card_brand, failure_code, failure_message,
    refunded_minor, refund_reason, version, notified_version, last_event, created_at, updated_at, completed_at,
    failed_at, refunded_at)
  select id, 'booking', booking_id::text, 'Seats ' || array_to_string(labels, ' '), amount, $1, status, false,
    'booking:' || booking_id || ':' || md5(id::text), '/bookings/' || booking_id, 1,
    'ch_' || replace(id::text, '-', ''), case when status = 'FAILED' then '0002' else '4242' end, 'visa',
    case when status = 'FAILED' then 'card_declined' end, case when status = 'FAILED' then 'The card was declined' end,
    case when status = 'REFUNDED' then amount else 0 end, case when status = 'REFUNDED' then 'booking cancelled' end,
    case when status = 'REFUNDED' then 4 else 2 end, case when status = 'REFUNDED' then 4 else 2 end,
    case status when 'COMPLETED' then 'payment.completed' when 'FAILED' then 'payment.failed' else 'payment.refunded' end,
    created_at, coalesce(cancelled_at + interval '2 seconds', created_at + interval '2 seconds'),
    case when status <> 'FAILED' then created_at + interval '2 seconds' end,
    case when status = 'FAILED' then created_at + interval '2 seconds' end,
    case when status = 'REFUNDED' then cancelled_at + interval '2 seconds' end
  from seed_day_payments`;

/** The sandbox gateway's books: a refund of a seeded payment looks its charge up there. */
const INSERT_CHARGES = `
  insert into payments_sandbox_charges (id, idempotency_key, payment_id, status, amount_minor, currency, last4, brand,
    failure_code, failure_message, refunded_minor, created_at, updated_at)
  select 'ch_' || replace(id::text, '-', ''), gen_random_uuid()::text, id::text,
    case when status = 'FAILED' then 'failed' else 'succeeded' end, amount, $1,
    case when status = 'FAILED' then '0002' else '4242' end, 'visa',
    case when status = 'FAILED' then 'card_declined' end, case when status = 'FAILED' then 'The card was declined' end,
    case when status = 'REFUNDED' then amount else 0 end, created_at, created_at + interval '2 seconds'
  from seed_day_payments`;

const INSERT_REFUNDS = `
  with refunds as (
    select pg_temp.uuid7(cancelled_at) as id, id as payment_id, amount, cancelled_at from seed_day_payments
    where status = 'REFUNDED'
  ), gateway as (
    insert into payments_sandbox_refunds (id, idempotency_key, charge_id, amount_minor, created_at)
    select 're_' || replace(id::text, '-', ''), id::text, 'ch_' || replace(payment_id::text, '-', ''), amount,
      cancelled_at + interval '1 second'
    from refunds
  )
  insert into payment_refunds (id, payment_id, amount_minor, reason, idempotency_key, status, gateway_refund_id,
    created_at, completed_at)
  select id, payment_id, amount, 'booking cancelled', 'full', 'SUCCEEDED', 're_' || replace(id::text, '-', ''),
    cancelled_at, cancelled_at + interval '2 seconds'
  from refunds`;

const INSERT_BOOKING_PAYMENTS = `
  insert into booking_payments (payment_id, booking_id, status, amount_minor, created_at, settled_at, refund_status,
    refund_minor, refund_reason)
  select id::text, booking_id, status, amount, created_at, created_at + interval '2 seconds',
    case when status = 'REFUNDED' then 'COMPLETED' end, case when status = 'REFUNDED' then amount end,
    case when status = 'REFUNDED' then 'booking cancelled' end
  from seed_day_payments`;

/** Every seat of every show of the day; a confirmed booking's seats BOOKED under its hold. */
const INSERT_INVENTORY = `
  insert into booking_show_seats (show_id, seat_id, status, hold_id)
  select sh.id, st.id, case when bk.hold_id is null then 'AVAILABLE' else 'BOOKED' end, bk.hold_id
  from seed_day_shows sh join seed_seats st on st.screen_id = sh.screen_id
  left join (
    select b.show_id, b.hold_id, unnest(s.seat_ids) as seat_id
    from seed_day_bookings b join seed_day_seats s on s.booking_id = b.id where b.status = 'CONFIRMED'
  ) bk on bk.show_id = sh.id and bk.seat_id = st.id`;

async function insertDay(
  context: SeedContext,
  day: number,
  perShow: number,
  size: ReturnType<typeof catalogueSize>,
) {
  const { client } = context;
  const date = new Date(context.now.getTime() + (day - PAST_DAYS) * DAY_MS).toISOString().slice(0, 10);
  await client.query('begin');
  await client.query(DRAW_SHOWS, [date, size.movies, SHOW_TIMES, perShow]);
  await client.query(
    `insert into booking_shows (id, movie_id, screen_id, show_time, end_time, price_multiplier, created_at)
     select id, movie_id, screen_id, show_time, end_time, multiplier, show_time - interval '14 days'
     from seed_day_shows`,
  );
  await client.query(DRAW_BOOKINGS, [size.users, context.now]);
  await client.query(DRAW_SEATS);
  await client.query(INSERT_HOLDS);
  await client.query(INSERT_BOOKINGS, [CURRENCY]);
  await client.query(DRAW_PAYMENTS);
  await client.query(INSERT_PAYMENTS, [CURRENCY]);
  await client.query(INSERT_CHARGES, [CURRENCY]);
  await client.query(INSERT_REFUNDS);
  await client.query(INSERT_BOOKING_PAYMENTS);
  await client.query(INSERT_INVENTORY);
  await client.query('commit');
}

async function run(context: SeedContext): Promise<Record<string, string>> {
  const size = catalogueSize(context.scale);
  await createUuid7Function(context.client);
  await insertCities(context, size.cities);
  await insertTheaters(context, size.theaters, size.cities);
  await insertScreensAndSeats(context);
  await insertMovies(context, size.movies);
  const { rows } = await context.client.query<{ screens: number }>(
    'select count(*)::int as screens from seed_screens',
  );
  const showsPerDay = rows[0].screens * SHOW_TIMES.length;
  const perShow = (BOOKINGS_PER_DAY * context.scale) / showsPerDay;
  context.log(
    `booking catalogue: ${size.cities} cities, ${size.theaters} theatres, ${rows[0].screens} screens, ` +
      `${size.movies} movies; ${perShow.toFixed(1)} bookings a show`,
  );
  await inChunks(context, 'booking days', PAST_DAYS + FUTURE_DAYS, (day) =>
    insertDay(context, day, perShow, size),
  );
  // One row per user who ever held, with the bound on their live holds (the per-user caps count
  // from it; src/booking/migrations 004 and 009).
  await context.client.query(
    `insert into booking_hold_users (user_id, version, held, held_until)
     select user_id, count(*), count(*) filter (where status = 'HELD'),
       coalesce(max(expires_at) filter (where status = 'HELD'), '-infinity')
     from booking_holds group by user_id`,
  );
  // Each movie's latest show per city, as the app keeps it when it adds shows (search reads it).
  await context.client.query(
    `insert into booking_movie_cities (movie_id, city_id, last_show_time)
     select s.movie_id, t.city_id, max(s.show_time)
     from booking_shows s join booking_screens sc on sc.id = s.screen_id
       join booking_theaters t on t.id = sc.theater_id
     where s.status = 'SCHEDULED'
     group by s.movie_id, t.city_id`,
  );
  return { BOOKING_DEMO: 'false' };
}

export const bookingSeed: ServiceSeed = {
  name: 'booking',
  recordTable: 'booking_bookings',
  recordName: 'booking',
  recordTables: [
    'booking_bookings',
    'booking_holds',
    'booking_payments',
    'payment_refunds',
    'payments_sandbox_refunds',
  ],
  sharedRows: [
    { table: 'payments', where: `purpose = 'booking'` },
    {
      table: 'payments_sandbox_charges',
      where: `id in (select gateway_charge_id from payments where purpose = 'booking')`,
    },
  ],
  run,
};
