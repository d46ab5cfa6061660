import { type Kysely, sql, type Transaction } from 'kysely';
import type { BookingDb, BookingTables, SeatType } from '../tables.ts';

/** SQL for cities, movies, theaters, screens, seats and shows. No rules here. */

export interface CityRow {
  id: string;
  name: string;
  state: string | null;
  timezone: string;
}

export interface MovieRow {
  id: string;
  title: string;
  description: string;
  duration_minutes: number;
  language: string;
  genres: string[];
  release_date: string;
  poster_url: string | null;
  rating: number | null;
}

export interface SeatRow {
  id: string;
  row_number: string;
  seat_number: number;
  seat_type: SeatType;
  base_price_minor: number;
}

/** A show with everything around it, as the seat map and holds need it. */
export interface ShowRow {
  id: string;
  movie_id: string;
  movie_title: string;
  screen_id: string;
  screen_number: number;
  screen_type: string;
  theater_id: string;
  theater_name: string;
  city_id: string;
  city_name: string;
  timezone: string;
  show_time: Date;
  end_time: Date;
  multiplier_hundredths: number;
  status: 'SCHEDULED' | 'CANCELLED';
  is_hot: boolean;
}

export interface SlotRow {
  show_id: string;
  movie_id: string;
  theater_id: string;
  theater_name: string;
  address: string;
  city_name: string;
  timezone: string;
  show_time: Date;
  end_time: Date;
  screen_number: number;
  screen_type: string;
  multiplier_hundredths: number;
  is_hot: boolean;
  status: string;
}

type Executor = Kysely<BookingTables> | Transaction<BookingTables>;

const MOVIE_COLUMNS = sql`m.id, m.title, m.description, m.duration_minutes, m.language, m.genres,
  to_char(m.release_date, 'YYYY-MM-DD') as release_date, m.poster_url, m.rating::float8 as rating`;

export function createCatalogueRepository(db: BookingDb) {
  return {
    db,

    async insertCity(city: CityRow & { created_at: Date }): Promise<boolean> {
      const result = await sql`insert into booking_cities (id, name, state, timezone, created_at)
        values (${city.id}, ${city.name}, ${city.state}, ${city.timezone}, ${city.created_at})
        on conflict do nothing`.execute(db);
      return Number(result.numAffectedRows ?? 0n) === 1;
    },

    async listCities(): Promise<CityRow[]> {
      const { rows } =
        await sql<CityRow>`select id, name, state, timezone from booking_cities order by name`.execute(db);
      return rows;
    },

    /** By id, or by name (case-insensitive) so `?city=Mumbai` works as well as an id. */
    async findCity(idOrName: string): Promise<CityRow | undefined> {
      const isId = /^[0-9a-f-]{36}$/i.test(idOrName);
      const { rows } = isId
        ? await sql<CityRow>`select id, name, state, timezone from booking_cities where id = ${idOrName}`.execute(
            db,
          )
        : await sql<CityRow>`select id, name, state, timezone from booking_cities where lower(name) = lower(${idOrName})`.execute(
            db,
          );
      return rows[0];
    },

    async insertMovies(movies: (MovieRow & { created_at: Date })[], tx: Executor = db): Promise<void> {
      for (let i = 0; i < movies.length; i += 500) {
        await tx
          .insertInto('booking_movies')
          .values(
            movies.slice(i, i + 500).map((movie) => ({
              ...movie,
              genres: sql`${movie.genres}::text[]` as unknown as string[],
              updated_at: movie.created_at,
            })),
          )
          .execute();
      }
    },

    async findMovie(id: string): Promise<MovieRow | undefined> {
      const { rows } =
        await sql<MovieRow>`select ${MOVIE_COLUMNS} from booking_movies m where m.id = ${id}`.execute(db);
      return rows[0];
    },

    async updateMovie(id: string, changes: Partial<Omit<MovieRow, 'id'>>, now: Date): Promise<boolean> {
      const values: Record<string, unknown> = { ...changes, updated_at: now };
      if (changes.genres) values.genres = sql`${changes.genres}::text[]`;
      const result = await db
        .updateTable('booking_movies')
        .set(values)
        .where('id', '=', id)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /** Cities where a movie has scheduled shows from `from` on (for its page). */
    async movieCities(movieId: string, from: Date): Promise<string[]> {
      const { rows } = await sql<{ name: string }>`
        select distinct c.name from booking_shows s
        join booking_screens sc on sc.id = s.screen_id
        join booking_theaters t on t.id = sc.theater_id
        join booking_cities c on c.id = t.city_id
        where s.movie_id = ${movieId} and s.status = 'SCHEDULED' and s.show_time >= ${from}
        order by c.name`.execute(db);
      return rows.map((row) => row.name);
    },

    /** Languages and genres in the catalogue, for search filters. */
    async facets(): Promise<{ languages: string[]; genres: string[] }> {
      const { rows } = await sql<{ languages: string[]; genres: string[] }>`
        select array(select distinct language from booking_movies order by 1) as languages,
          array(select distinct g from booking_movies, unnest(genres) g order by 1) as genres`.execute(db);
      return rows[0] ?? { languages: [], genres: [] };
    },

    async insertTheater(
      theater: { id: string; city_id: string; name: string; address: string; created_at: Date },
      tx: Executor = db,
    ): Promise<void> {
      await tx
        .insertInto('booking_theaters')
        .values({ ...theater, total_screens: 0 })
        .execute();
    },

    async findTheater(id: string) {
      return db
        .selectFrom('booking_theaters')
        .select(['id', 'city_id', 'name', 'address', 'total_screens'])
        .where('id', '=', id)
        .executeTakeFirst();
    },

    async theaterScreens(theaterId: string) {
      return db
        .selectFrom('booking_screens')
        .select(['id', 'screen_number', 'screen_type', 'total_seats'])
        .where('theater_id', '=', theaterId)
        .orderBy('screen_number')
        .execute();
    },

    /** Inserts a screen and its seats; false when the theater already has that screen number. */
    async insertScreen(
      tx: Transaction<BookingTables>,
      screen: {
        id: string;
        theater_id: string;
        screen_number: number;
        screen_type: string;
        created_at: Date;
      },
      seats: (SeatRow & { screen_id: string })[],
    ): Promise<boolean> {
      const inserted =
        await sql`insert into booking_screens (id, theater_id, screen_number, total_seats, screen_type, created_at)
        values (${screen.id}, ${screen.theater_id}, ${screen.screen_number}, ${seats.length}, ${screen.screen_type}, ${screen.created_at})
        on conflict (theater_id, screen_number) do nothing`.execute(tx);
      if (Number(inserted.numAffectedRows ?? 0n) === 0) return false;
      await insertSeats(tx, seats);
      await sql`update booking_theaters set total_screens = total_screens + 1 where id = ${screen.theater_id}`.execute(
        tx,
      );
      return true;
    },

    async findScreen(id: string) {
      return db
        .selectFrom('booking_screens')
        .select(['id', 'theater_id', 'screen_number', 'screen_type', 'total_seats'])
        .where('id', '=', id)
        .executeTakeFirst();
    },

    async screenSeats(screenId: string): Promise<SeatRow[]> {
      const { rows } = await sql<SeatRow>`
        select id, row_number, seat_number, seat_type, base_price_minor::int as base_price_minor
        from booking_seats where screen_id = ${screenId}
        order by length(row_number), row_number, seat_number`.execute(db);
      return rows;
    },

    /** Serialises show creation per screen, so two overlapping shows cannot both pass the check. */
    async lockScreen(tx: Transaction<BookingTables>, screenId: string): Promise<void> {
      await sql`select pg_advisory_xact_lock(hashtextextended(${`booking.screen:${screenId}`}, 0))`.execute(
        tx,
      );
    },

    async overlappingShow(
      tx: Executor,
      screenId: string,
      start: Date,
      end: Date,
    ): Promise<{ id: string } | undefined> {
      const { rows } = await sql<{ id: string }>`select id from booking_shows
        where screen_id = ${screenId} and status = 'SCHEDULED' and show_time < ${end} and end_time > ${start}
        limit 1`.execute(tx);
      return rows[0];
    },

    /** Inserts shows and materialises their seat inventory (one AVAILABLE row per seat). */
    async insertShows(
      tx: Executor,
      shows: {
        id: string;
        movie_id: string;
        screen_id: string;
        show_time: Date;
        end_time: Date;
        price_multiplier: number;
        is_hot: boolean;
        created_at: Date;
      }[],
    ): Promise<void> {
      for (let i = 0; i < shows.length; i += 1000) {
        const chunk = shows.slice(i, i + 1000);
        await tx.insertInto('booking_shows').values(chunk).execute();
        await sql`insert into booking_show_seats (show_id, seat_id, status)
          select s.id, seat.id, 'AVAILABLE' from booking_shows s
          join booking_seats seat on seat.screen_id = s.screen_id
          where s.id = any(${chunk.map((show) => show.id)}::uuid[])`.execute(tx);
      }
    },

    async findShow(id: string): Promise<ShowRow | undefined> {
      const { rows } = await sql<ShowRow>`
        select s.id, s.movie_id, m.title as movie_title, s.screen_id, sc.screen_number, sc.screen_type,
          t.id as theater_id, t.name as theater_name, c.id as city_id, c.name as city_name, c.timezone,
          s.show_time, s.end_time, (s.price_multiplier * 100)::int as multiplier_hundredths, s.status, s.is_hot
        from booking_shows s
        join booking_movies m on m.id = s.movie_id
        join booking_screens sc on sc.id = s.screen_id
        join booking_theaters t on t.id = sc.theater_id
        join booking_cities c on c.id = t.city_id
        where s.id = ${id}`.execute(db);
      return rows[0];
    },

    async setShowHot(id: string, isHot: boolean): Promise<boolean> {
      const result = await db
        .updateTable('booking_shows')
        .set({ is_hot: isHot })
        .where('id', '=', id)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /** Scheduled shows in a city on a local date, with movie and theater, ordered for listing. */
    async cityShows(city: CityRow, date: string): Promise<(SlotRow & { movie: MovieRow })[]> {
      const { rows } = await sql<SlotRow & MovieRow & { movie_row_id: string }>`
        select ${slotColumns()}, ${MOVIE_COLUMNS}
        from booking_shows s
        join booking_movies m on m.id = s.movie_id
        join booking_screens sc on sc.id = s.screen_id
        join booking_theaters t on t.id = sc.theater_id
        join booking_cities c on c.id = t.city_id
        where t.city_id = ${city.id} and s.status = 'SCHEDULED'
          and s.show_time >= (${date}::date::timestamp at time zone ${city.timezone})
          and s.show_time < ((${date}::date + 1)::timestamp at time zone ${city.timezone})
        order by m.rating desc nulls last, m.title, t.name, s.show_time`.execute(db);
      return rows.map((row) => ({ ...row, show_id: row.show_id, movie: pickMovie(row) }));
    },

    /** A movie's scheduled shows, optionally in one city and on one local date, else from `from` on. */
    async movieShows(movieId: string, options: { city?: CityRow; date?: string; from: Date; until: Date }) {
      const { city, date } = options;
      const { rows } = await sql<SlotRow>`
        select ${slotColumns()}
        from booking_shows s
        join booking_screens sc on sc.id = s.screen_id
        join booking_theaters t on t.id = sc.theater_id
        join booking_cities c on c.id = t.city_id
        where s.movie_id = ${movieId} and s.status = 'SCHEDULED'
          ${city ? sql`and t.city_id = ${city.id}` : sql``}
          ${
            date
              ? sql`and s.show_time >= (${date}::date::timestamp at time zone c.timezone)
                    and s.show_time < ((${date}::date + 1)::timestamp at time zone c.timezone)`
              : sql`and s.show_time >= ${options.from} and s.show_time < ${options.until}`
          }
        order by c.name, t.name, s.show_time
        limit 2000`.execute(db);
      return rows;
    },
  };
}

function slotColumns() {
  return sql`s.id as show_id, s.movie_id, t.id as theater_id, t.name as theater_name, t.address, c.name as city_name,
    c.timezone, s.show_time, s.end_time, sc.screen_number, sc.screen_type,
    (s.price_multiplier * 100)::int as multiplier_hundredths, s.is_hot, s.status`;
}

function pickMovie(row: MovieRow & { movie_id: string }): MovieRow {
  return {
    id: row.movie_id,
    title: row.title,
    description: row.description,
    duration_minutes: row.duration_minutes,
    language: row.language,
    genres: row.genres,
    release_date: row.release_date,
    poster_url: row.poster_url,
    rating: row.rating,
  };
}

export async function insertSeats(tx: Executor, seats: (SeatRow & { screen_id: string })[]): Promise<void> {
  for (let i = 0; i < seats.length; i += 2000) {
    await tx
      .insertInto('booking_seats')
      .values(seats.slice(i, i + 2000))
      .execute();
  }
}

export type CatalogueRepository = ReturnType<typeof createCatalogueRepository>;
