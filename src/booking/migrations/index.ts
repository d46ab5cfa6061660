import { type Kysely, sql } from 'kysely';
import type { Migrations } from '../../platform/db/migrate.ts';

/**
 * The booking service's tables. Money is in integer minor units (bigint); the seat inventory of
 * every show is materialised in `booking_show_seats`, whose rows PostgreSQL updates
 * conditionally: that update is the arbiter of who gets a seat (see ../README.md).
 */
export const bookingMigrations: Migrations = {
  '001_catalogue': {
    async up(db: Kysely<unknown>) {
      // In `public`, once per database (several schemas may share one database: tests, tenants);
      // two schemas migrating at once may race to create it, which is fine.
      await sql`do $$ begin
          create extension if not exists pg_trgm schema public;
        exception when unique_violation or duplicate_object then null;
        end $$`.execute(db);
      await sql`
        create table booking_cities (
          id uuid primary key,
          name varchar(100) not null,
          state varchar(100),
          timezone text not null,
          created_at timestamptz not null
        )`.execute(db);
      await sql`create unique index booking_cities_name on booking_cities (lower(name))`.execute(db);
      await sql`
        create table booking_movies (
          id uuid primary key,
          title varchar(255) not null,
          description text not null default '',
          duration_minutes int not null check (duration_minutes between 1 and 1000),
          language varchar(50) not null,
          genres text[] not null default '{}',
          release_date date not null,
          poster_url varchar(500),
          rating numeric(2, 1) check (rating >= 0),
          created_at timestamptz not null,
          updated_at timestamptz not null,
          title_tsv tsvector generated always as (to_tsvector('english'::regconfig, title)) stored
        )`.execute(db);
      await sql`create index booking_movies_title_tsv on booking_movies using gin (title_tsv)`.execute(db);
      // Autocomplete with typos: trigram similarity on the lower-cased title.
      await sql`create index booking_movies_title_trgm on booking_movies using gin (lower(title) gin_trgm_ops)`.execute(
        db,
      );
      await sql`
        create table booking_theaters (
          id uuid primary key,
          city_id uuid not null references booking_cities (id),
          name varchar(255) not null,
          address text not null default '',
          total_screens int not null default 0,
          created_at timestamptz not null
        )`.execute(db);
      await sql`create index booking_theaters_city on booking_theaters (city_id)`.execute(db);
      await sql`
        create table booking_screens (
          id uuid primary key,
          theater_id uuid not null references booking_theaters (id),
          screen_number int not null check (screen_number > 0),
          total_seats int not null,
          screen_type varchar(50) not null,
          created_at timestamptz not null,
          unique (theater_id, screen_number)
        )`.execute(db);
      await sql`
        create table booking_seats (
          id uuid primary key,
          screen_id uuid not null references booking_screens (id),
          row_number varchar(2) not null,
          seat_number int not null check (seat_number > 0),
          seat_type varchar(20) not null check (seat_type in ('REGULAR', 'PREMIUM', 'RECLINER')),
          base_price_minor bigint not null check (base_price_minor >= 0),
          unique (screen_id, row_number, seat_number)
        )`.execute(db);
      await sql`
        create table booking_shows (
          id uuid primary key,
          movie_id uuid not null references booking_movies (id),
          screen_id uuid not null references booking_screens (id),
          show_time timestamptz not null,
          end_time timestamptz not null,
          price_multiplier numeric(3, 2) not null default 1.00 check (price_multiplier > 0),
          status text not null default 'SCHEDULED' check (status in ('SCHEDULED', 'CANCELLED')),
          is_hot boolean not null default false,
          cancelled_at timestamptz,
          cancel_reason text,
          created_at timestamptz not null,
          check (end_time > show_time)
        )`.execute(db);
      await sql`create index booking_shows_movie on booking_shows (movie_id, show_time)`.execute(db);
      await sql`create index booking_shows_screen on booking_shows (screen_id, show_time)`.execute(db);
      await sql`create index booking_shows_time on booking_shows (show_time)`.execute(db);
    },
  },
  '002_inventory': {
    async up(db: Kysely<unknown>) {
      // One row per seat of a show. AVAILABLE -> HELD (hold_id, held_until) -> BOOKED; a HELD row
      // whose held_until has passed counts as AVAILABLE at once; CLOSED once the show is cancelled.
      // Claims, releases and bookings change only status, hold_id and held_until: with no index on
      // those (a hold knows its seat ids) and room left on each page, PostgreSQL updates rows in
      // place (HOT), so the hot path writes no index entries.
      await sql`
        create table booking_show_seats (
          show_id uuid not null references booking_shows (id),
          seat_id uuid not null references booking_seats (id),
          status text not null default 'AVAILABLE' check (status in ('AVAILABLE', 'HELD', 'BOOKED', 'CLOSED')),
          hold_id uuid,
          held_until timestamptz,
          primary key (show_id, seat_id)
        ) with (fillfactor = 80)`.execute(db);
      await sql`
        create table booking_holds (
          id uuid primary key,
          show_id uuid not null references booking_shows (id),
          user_id uuid not null,
          seat_ids uuid[] not null,
          seats text[] not null,
          total_minor bigint not null,
          status text not null check (status in ('HELD', 'BOOKED', 'RELEASED', 'EXPIRED')),
          expires_at timestamptz not null,
          created_at timestamptz not null,
          released_at timestamptz,
          release_reason text
        )`.execute(db);
      await sql`create index booking_holds_expiry on booking_holds (expires_at) where status = 'HELD'`.execute(
        db,
      );
      await sql`create index booking_holds_show on booking_holds (show_id, status)`.execute(db);
      await sql`
        create table booking_bookings (
          id uuid primary key,
          hold_id uuid not null unique references booking_holds (id),
          user_id uuid not null,
          show_id uuid not null references booking_shows (id),
          status text not null check (status in ('PENDING', 'CONFIRMED', 'FAILED', 'CANCELLED')),
          seats text[] not null,
          total_minor bigint not null,
          currency char(3) not null,
          payment_id text,
          booking_time timestamptz not null,
          payment_deadline timestamptz not null,
          confirmed_at timestamptz,
          failed_at timestamptz,
          failure_reason text,
          cancelled_at timestamptz,
          cancel_reason text,
          refund_minor bigint,
          refund_status text check (refund_status in ('PENDING', 'COMPLETED', 'FAILED')),
          email text,
          phone text
        )`.execute(db);
      await sql`create index booking_bookings_user on booking_bookings (user_id, booking_time desc)`.execute(
        db,
      );
      await sql`create index booking_bookings_show on booking_bookings (show_id, status)`.execute(db);
      await sql`create index booking_bookings_pending on booking_bookings (payment_deadline) where status = 'PENDING'`.execute(
        db,
      );
      // Every payment attempt for a booking. More than one COMPLETED means a double payment: all but
      // the one that confirmed the booking are refunded.
      await sql`
        create table booking_payments (
          payment_id text primary key,
          booking_id uuid not null references booking_bookings (id),
          status text not null check (status in ('PENDING', 'COMPLETED', 'FAILED', 'REFUNDED')),
          amount_minor bigint not null,
          created_at timestamptz not null,
          settled_at timestamptz,
          refund_status text check (refund_status in ('PENDING', 'COMPLETED', 'FAILED')),
          refund_minor bigint,
          refund_reason text,
          refund_attempts int not null default 0
        )`.execute(db);
      await sql`create index booking_payments_booking on booking_payments (booking_id)`.execute(db);
      await sql`create index booking_payments_refunds on booking_payments (created_at) where refund_status = 'PENDING'`.execute(
        db,
      );
      await sql`
        create table booking_reminders (
          booking_id uuid not null references booking_bookings (id),
          kind text not null,
          sent_at timestamptz not null,
          primary key (booking_id, kind)
        )`.execute(db);
    },
  },
  '003_waiting_room': {
    async up(db: Kysely<unknown>) {
      await sql`create sequence booking_queue_seq`.execute(db);
      await sql`
        create table booking_queue_entries (
          show_id uuid not null references booking_shows (id),
          user_id uuid not null,
          seq bigint not null,
          status text not null check (status in ('WAITING', 'ADMITTED', 'DONE')),
          joined_at timestamptz not null,
          admitted_at timestamptz,
          admitted_until timestamptz,
          primary key (show_id, user_id)
        )`.execute(db);
      await sql`create index booking_queue_waiting on booking_queue_entries (show_id, seq) where status = 'WAITING'`.execute(
        db,
      );
      await sql`create index booking_queue_admitted on booking_queue_entries (show_id, admitted_until) where status = 'ADMITTED'`.execute(
        db,
      );
    },
  },
  '004_hold_limits': {
    async up(db: Kysely<unknown>) {
      // A user's live holds, counted by every new hold of theirs (the per-user caps).
      await sql`create index booking_holds_user on booking_holds (user_id, show_id) where status = 'HELD'`.execute(
        db,
      );
      // One row per user who ever held: a change counter that every claim of theirs bumps under
      // its row lock. A claim that finds it bumped since its snapshot was counted against stale
      // holds and is decided again, so two concurrent holds of one user never both pass a cap.
      await sql`
        create table booking_hold_users (
          user_id uuid primary key,
          version bigint not null
        )`.execute(db);
    },
  },
  '005_retention': {
    async up(db: Kysely<unknown>) {
      // What the retention job (../retention.ts) scans, so that no batch reads the kept history.
      // An ended hold a booking references stays as long as the booking; the job marks it
      // `retained` when it first passes it, which takes it out of the index it scans.
      await sql`alter table booking_holds add column retained boolean not null default false`.execute(db);
      await sql`create index booking_holds_ended on booking_holds (released_at)
        where status in ('RELEASED', 'EXPIRED') and not retained`.execute(db);
      // Shows are kept for ever; this index holds only those whose seat inventory is still there.
      await sql`alter table booking_shows add column inventory_removed_at timestamptz`.execute(db);
      await sql`create index booking_shows_inventory on booking_shows (end_time)
        where inventory_removed_at is null`.execute(db);
      await sql`create index booking_reminders_sent on booking_reminders (sent_at)`.execute(db);
    },
  },
  '006_accessible_seats': {
    async up(db: Kysely<unknown>) {
      // Wheelchair spaces and their companion seats, and aisles: a seat's column in its row
      // counting the gaps (null when that is its number), so the seat map can draw them.
      await sql`alter table booking_seats drop constraint booking_seats_seat_type_check`.execute(db);
      await sql`alter table booking_seats add constraint booking_seats_seat_type_check
        check (seat_type in ('REGULAR', 'PREMIUM', 'RECLINER', 'WHEELCHAIR', 'COMPANION'))`.execute(db);
      await sql`alter table booking_seats add column column_number int check (column_number > seat_number)`.execute(
        db,
      );
    },
  },
  '007_check_in': {
    async up(db: Kysely<unknown>) {
      // One row per admitted ticket: the primary key makes admission exactly-once, whichever door
      // or process scans first (`insert … on conflict do nothing`; the loser reads the winner's row).
      await sql`
        create table booking_check_ins (
          booking_id uuid primary key references booking_bookings (id),
          show_id uuid not null references booking_shows (id),
          door text not null,
          checked_in_by text not null,
          checked_in_at timestamptz not null
        )`.execute(db);
    },
  },
  '008_movie_cities': {
    async up(db: Kysely<unknown>) {
      // Where each movie is on: search lists a movie's cities by reading at most one row per city
      // that ever showed it, where reading its shows grew with every show of the movie.
      await sql`
        create table booking_movie_cities (
          movie_id uuid not null references booking_movies (id),
          city_id uuid not null references booking_cities (id),
          last_show_time timestamptz not null,
          primary key (movie_id, city_id)
        )`.execute(db);
      await sql`
        insert into booking_movie_cities (movie_id, city_id, last_show_time)
        select s.movie_id, t.city_id, max(s.show_time)
        from booking_shows s
          join booking_screens sc on sc.id = s.screen_id
          join booking_theaters t on t.id = sc.theater_id
        where s.status = 'SCHEDULED'
        group by s.movie_id, t.city_id`.execute(db);
    },
  },
  '009_hold_bound': {
    async up(db: Kysely<unknown>) {
      // An upper bound on the user's live holds, kept by the same bump as `version` (no write of
      // its own): `held` holds made since `held_until` last passed (when every earlier one had
      // ended), `held_until` the latest end among them. A claim counts the user's holds only when
      // the bound could reach a cap. Started from the holds live now.
      await sql`alter table booking_hold_users
        add column held integer not null default 0,
        add column held_until timestamptz not null default '-infinity'`.execute(db);
      await sql`
        insert into booking_hold_users (user_id, version, held, held_until)
        select user_id, 0, count(*), max(expires_at) from booking_holds where status = 'HELD'
        group by user_id
        on conflict (user_id) do update set held = excluded.held, held_until = excluded.held_until`.execute(
        db,
      );
    },
  },
};
