import { type Expression, type InferResult, type Insertable, type Selectable, sql } from 'kysely';
import type { Db } from '../../platform/db/index.ts';
import type {
  BookingDb,
  BookingTables,
  CitiesTable,
  MoviesTable,
  ScreensTable,
  SeatsTable,
  ShowsTable,
  TheatersTable,
} from '../tables.ts';

/** Queries for cities, movies, theaters, screens, seats and shows. No rules here. */

export type CityRow = Pick<Selectable<CitiesTable>, 'id' | 'name' | 'state' | 'timezone'>;

/** A movie as the API shows it: its release date as `YYYY-MM-DD`, its rating as a number. */
export type MovieRow = Omit<
  Selectable<MoviesTable>,
  'release_date' | 'rating' | 'created_at' | 'updated_at' | 'title_tsv'
> & { release_date: string; rating: number | null };

/** A seat of a screen (its base price a BigInt, as `bigint` columns read). */
export type SeatRow = Omit<Selectable<SeatsTable>, 'screen_id'>;
export type NewSeat = Insertable<SeatsTable>;

export type NewTheater = Omit<Insertable<TheatersTable>, 'total_screens'>;
export type NewScreen = Omit<Insertable<ScreensTable>, 'total_seats'>;
export type NewShow = Insertable<ShowsTable> & { price_multiplier: number; is_hot: boolean };

/** A show with everything around it, as the seat map and holds need it. */
export type ShowRow = InferResult<ReturnType<typeof showDetails>>[number];
/** A show as a listing shows it, with its theater and city. */
export type SlotRow = InferResult<ReturnType<typeof slots>>[number];

/** The movie columns as the API shows them (`MovieRow`), from `booking_movies as m`. */
export const movieColumns = [
  'm.id',
  'm.title',
  'm.description',
  'm.duration_minutes',
  'm.language',
  'm.genres',
  sql<string>`to_char(m.release_date, 'YYYY-MM-DD')`.as('release_date'),
  'm.poster_url',
  sql<number | null>`m.rating::float8`.as('rating'),
] as const;

/** A show's price multiplier in hundredths (exact, as an integer). */
const multiplierHundredths = sql<number>`(s.price_multiplier * 100)::int`.as('multiplier_hundredths');

const slotColumns = [
  's.id as show_id',
  's.movie_id',
  't.id as theater_id',
  't.name as theater_name',
  't.address',
  'c.name as city_name',
  'c.timezone',
  's.show_time',
  's.end_time',
  'sc.screen_number',
  'sc.screen_type',
  multiplierHundredths,
  's.is_hot',
  's.status',
] as const;

/** The time zone of the show's city, for a local date's bounds. */
const CITY_ZONE = sql.ref('c.timezone');
/** Start and end of a local calendar date in a time zone (a zone name, or `CITY_ZONE`). */
const dayStart = (date: string, zone: string | typeof CITY_ZONE) =>
  sql<Date>`(${date}::date::timestamp at time zone ${zone})`;
const dayEnd = (date: string, zone: string | typeof CITY_ZONE) =>
  sql<Date>`((${date}::date + 1)::timestamp at time zone ${zone})`;

/** Shows with their screen, theater and city (`s`, `sc`, `t`, `c`). */
export const showsWithVenue = (db: BookingDb) =>
  db
    .selectFrom('booking_shows as s')
    .innerJoin('booking_screens as sc', 'sc.id', 's.screen_id')
    .innerJoin('booking_theaters as t', 't.id', 'sc.theater_id')
    .innerJoin('booking_cities as c', 'c.id', 't.city_id');

/**
 * Names of the cities where a movie (an id, or a column reference) has scheduled shows from `from`
 * on: from its row per city (`booking_movie_cities`), not from its shows, which grow with its run.
 */
export const citiesShowing = (db: BookingDb, movieId: string | Expression<string>, from: Date) =>
  db
    .selectFrom('booking_movie_cities as mc')
    .innerJoin('booking_cities as c', 'c.id', 'mc.city_id')
    .select('c.name')
    .where('mc.movie_id', '=', movieId)
    .where('mc.last_show_time', '>=', from)
    .orderBy('c.name');

/**
 * New shows in their movies' cities: each (movie, city) row keeps its latest show. Concurrent
 * inserts meet on the row and keep the later of the two.
 */
export async function addMovieCities(tx: BookingDb, showIds: string[]): Promise<void> {
  await tx
    .insertInto('booking_movie_cities')
    .columns(['movie_id', 'city_id', 'last_show_time'])
    .expression(
      showsWithVenue(tx)
        .select(['s.movie_id', 't.city_id', (eb) => eb.fn.max('s.show_time').as('last_show_time')])
        .where('s.id', 'in', showIds)
        .where('s.status', '=', 'SCHEDULED')
        .groupBy(['s.movie_id', 't.city_id']),
    )
    .onConflict((oc) =>
      oc.columns(['movie_id', 'city_id']).doUpdateSet({
        last_show_time: sql<Date>`greatest(booking_movie_cities.last_show_time, excluded.last_show_time)`,
      }),
    )
    .execute();
}

/**
 * After a show of `movieId` in `cityId` is cancelled: the row again names the latest show still
 * scheduled there, or goes. The row is locked first, so this statement's snapshot is taken after
 * any show insert that held it has committed (and an insert waiting on it then applies its show
 * on top).
 */
export async function recountMovieCity(tx: BookingDb, movieId: string, cityId: string): Promise<void> {
  await tx
    .selectFrom('booking_movie_cities')
    .select('movie_id')
    .where('movie_id', '=', movieId)
    .where('city_id', '=', cityId)
    .forUpdate()
    .execute();
  const latest = await showsWithVenue(tx)
    .select((eb) => eb.fn.max('s.show_time').as('last'))
    .where('s.movie_id', '=', movieId)
    .where('t.city_id', '=', cityId)
    .where('s.status', '=', 'SCHEDULED')
    .executeTakeFirst();
  if (latest?.last) {
    await tx
      .updateTable('booking_movie_cities')
      .set({ last_show_time: latest.last })
      .where('movie_id', '=', movieId)
      .where('city_id', '=', cityId)
      .execute();
  } else {
    await tx
      .deleteFrom('booking_movie_cities')
      .where('movie_id', '=', movieId)
      .where('city_id', '=', cityId)
      .execute();
  }
}

const slots = (db: BookingDb) => showsWithVenue(db).select(slotColumns);

const showDetails = (db: BookingDb) =>
  showsWithVenue(db)
    .innerJoin('booking_movies as m', 'm.id', 's.movie_id')
    .select([
      's.id',
      's.movie_id',
      'm.title as movie_title',
      's.screen_id',
      'sc.screen_number',
      'sc.screen_type',
      't.id as theater_id',
      't.name as theater_name',
      'c.id as city_id',
      'c.name as city_name',
      'c.timezone',
      's.show_time',
      's.end_time',
      multiplierHundredths,
      's.status',
      's.is_hot',
    ]);

export function createCatalogueRepository(database: Db) {
  const db: BookingDb = database.withTables<BookingTables>();

  /** A transaction-scoped advisory lock on a name: whoever takes the same name waits. */
  async function lock(tx: BookingDb, name: string): Promise<void> {
    await tx
      .selectNoFrom((eb) =>
        eb.fn('pg_advisory_xact_lock', [eb.fn('hashtextextended', [eb.val(name), eb.lit(0)])]).as('locked'),
      )
      .execute();
  }

  return {
    db,
    lock,

    async hasCities(tx: BookingDb = db): Promise<boolean> {
      return (await tx.selectFrom('booking_cities').select('id').limit(1).executeTakeFirst()) !== undefined;
    },

    /** False when a city of that name (in any case) exists. */
    async insertCity(city: Insertable<CitiesTable>, tx: BookingDb = db): Promise<boolean> {
      const result = await tx
        .insertInto('booking_cities')
        .values(city)
        .onConflict((conflict) => conflict.doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
    },

    async listCities(): Promise<CityRow[]> {
      return db
        .selectFrom('booking_cities')
        .select(['id', 'name', 'state', 'timezone'])
        .orderBy('name')
        .execute();
    },

    /** By id, or by name (case-insensitive) so `?city=Mumbai` works as well as an id. */
    async findCity(idOrName: string): Promise<CityRow | undefined> {
      const isId = /^[0-9a-f-]{36}$/i.test(idOrName);
      return db
        .selectFrom('booking_cities')
        .select(['id', 'name', 'state', 'timezone'])
        .where((eb) =>
          isId
            ? eb('id', '=', idOrName)
            : eb(eb.fn('lower', ['name']), '=', eb.fn('lower', [eb.val(idOrName)])),
        )
        .executeTakeFirst();
    },

    async insertMovies(movies: (MovieRow & { created_at: Date })[], tx: BookingDb = db): Promise<void> {
      for (let i = 0; i < movies.length; i += 500) {
        await tx
          .insertInto('booking_movies')
          .values(
            movies.slice(i, i + 500).map((movie) => ({
              ...movie,
              genres: textArray(movie.genres),
              updated_at: movie.created_at,
            })),
          )
          .execute();
      }
    },

    async findMovie(id: string): Promise<MovieRow | undefined> {
      return db
        .selectFrom('booking_movies as m')
        .select(movieColumns)
        .where('m.id', '=', id)
        .executeTakeFirst();
    },

    async updateMovie(id: string, changes: Partial<Omit<MovieRow, 'id'>>, now: Date): Promise<boolean> {
      const result = await db
        .updateTable('booking_movies')
        .set({
          ...changes,
          genres: changes.genres ? textArray(changes.genres) : undefined,
          updated_at: now,
        })
        .where('id', '=', id)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /** Cities where a movie has scheduled shows from `from` on (for its page). */
    async movieCities(movieId: string, from: Date): Promise<string[]> {
      const rows = await citiesShowing(db, movieId, from).execute();
      return rows.map((row) => row.name);
    },

    /** Languages and genres in the catalogue, for search filters. */
    async facets(): Promise<{ languages: string[]; genres: string[] }> {
      // Raw SQL: two ARRAY(subquery) columns, one over unnest(genres), in one round trip.
      const { rows } = await sql<{ languages: string[]; genres: string[] }>`
        select array(select distinct language from booking_movies order by 1) as languages,
          array(select distinct g from booking_movies, unnest(genres) g order by 1) as genres`.execute(db);
      return rows[0] ?? { languages: [], genres: [] };
    },

    async insertTheater(theater: NewTheater, tx: BookingDb = db): Promise<void> {
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
    async insertScreen(tx: BookingDb, screen: NewScreen, seats: NewSeat[]): Promise<boolean> {
      const inserted = await tx
        .insertInto('booking_screens')
        .values({ ...screen, total_seats: seats.length })
        .onConflict((conflict) => conflict.columns(['theater_id', 'screen_number']).doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0) return false;
      await insertSeats(tx, seats);
      await tx
        .updateTable('booking_theaters')
        .set((eb) => ({ total_screens: eb('total_screens', '+', 1) }))
        .where('id', '=', screen.theater_id)
        .execute();
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
      return db
        .selectFrom('booking_seats')
        .select(['id', 'row_number', 'seat_number', 'column_number', 'seat_type', 'base_price_minor'])
        .where('screen_id', '=', screenId)
        .orderBy((eb) => eb.fn('length', ['row_number']))
        .orderBy('row_number')
        .orderBy('seat_number')
        .execute();
    },

    /** Serialises show creation per screen, so two overlapping shows cannot both pass the check. */
    async lockScreen(tx: BookingDb, screenId: string): Promise<void> {
      await lock(tx, `booking.screen:${screenId}`);
    },

    async overlappingShow(tx: BookingDb, screenId: string, start: Date, end: Date) {
      return tx
        .selectFrom('booking_shows')
        .select('id')
        .where('screen_id', '=', screenId)
        .where('status', '=', 'SCHEDULED')
        .where('show_time', '<', end)
        .where('end_time', '>', start)
        .limit(1)
        .executeTakeFirst();
    },

    /** Inserts shows and materialises their seat inventory (one AVAILABLE row per seat). */
    async insertShows(tx: BookingDb, shows: NewShow[]): Promise<void> {
      for (let i = 0; i < shows.length; i += 1000) {
        const chunk = shows.slice(i, i + 1000);
        await tx.insertInto('booking_shows').values(chunk).execute();
        await addMovieCities(
          tx,
          chunk.map((show) => show.id),
        );
        await tx
          .insertInto('booking_show_seats')
          .columns(['show_id', 'seat_id', 'status'])
          .expression(
            tx
              .selectFrom('booking_shows as s')
              .innerJoin('booking_seats as seat', 'seat.screen_id', 's.screen_id')
              .select(['s.id as show_id', 'seat.id as seat_id', sql.lit('AVAILABLE').as('status')])
              .where('s.id', '=', (eb) => eb.fn.any(sql<string[]>`${chunk.map((show) => show.id)}::uuid[]`)),
          )
          .execute();
      }
    },

    async findShow(id: string): Promise<ShowRow | undefined> {
      return showDetails(db).where('s.id', '=', id).executeTakeFirst();
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
      const rows = await showsWithVenue(db)
        .innerJoin('booking_movies as m', 'm.id', 's.movie_id')
        .select([...slotColumns, ...movieColumns])
        .where('t.city_id', '=', city.id)
        .where('s.status', '=', 'SCHEDULED')
        .where('s.show_time', '>=', dayStart(date, city.timezone))
        .where('s.show_time', '<', dayEnd(date, city.timezone))
        .orderBy('m.rating', (order) => order.desc().nullsLast())
        .orderBy('m.title')
        .orderBy('t.name')
        .orderBy('s.show_time')
        .execute();
      return rows.map((row) => ({ ...row, movie: pickMovie(row) }));
    },

    /** A movie's scheduled shows, optionally in one city and on one local date, else from `from` on. */
    async movieShows(
      movieId: string,
      options: { city?: CityRow; date?: string; from: Date; until: Date },
    ): Promise<SlotRow[]> {
      const { city, date } = options;
      let query = slots(db).where('s.movie_id', '=', movieId).where('s.status', '=', 'SCHEDULED');
      if (city) query = query.where('t.city_id', '=', city.id);
      query = date
        ? query
            .where('s.show_time', '>=', dayStart(date, CITY_ZONE))
            .where('s.show_time', '<', dayEnd(date, CITY_ZONE))
        : query.where('s.show_time', '>=', options.from).where('s.show_time', '<', options.until);
      return query.orderBy('c.name').orderBy('t.name').orderBy('s.show_time').limit(2000).execute();
    },
  };
}

/** A `text[]` parameter, typed as such in the statement (`$1::text[]`). */
function textArray(values: string[]) {
  return sql<string[]>`${values}::text[]`;
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

export async function insertSeats(tx: BookingDb, seats: NewSeat[]): Promise<void> {
  for (let i = 0; i < seats.length; i += 2000) {
    await tx
      .insertInto('booking_seats')
      .values(seats.slice(i, i + 2000))
      .execute();
  }
}

export type CatalogueRepository = ReturnType<typeof createCatalogueRepository>;
