import { LRUCache } from 'lru-cache';
import { type Cache, createReadThrough } from '../../platform/cache/index.ts';
import type { Clock } from '../../platform/clock.ts';
import { uuidv7 } from '../../platform/ids.ts';
import { err } from '../errors.ts';
import { addDays, isTimeZone, localDate } from '../time.ts';
import type { CatalogueRepository, CityRow, MovieRow, SlotRow } from './repository.ts';
import type {
  City,
  CityShows,
  Movie,
  MovieCreate,
  MovieShows,
  MovieUpdate,
  ScreenCreate,
  Show,
  ShowCreate,
  Theater,
  TheaterCreate,
} from './schemas.ts';
import {
  groupByTheater,
  invalid,
  type Layout,
  type ShowInfo,
  seatsFor,
  toCity,
  toMovie,
  toShow,
  toShowInfo,
} from './shapes.ts';

/** Cache lifetimes from the spec. */
export const MOVIE_TTL_MS = 3_600_000;
export const LISTING_TTL_MS = 5 * 60_000;
const SHOW_TTL_MS = 60_000;

export function createCatalogueService(deps: { repo: CatalogueRepository; cache: Cache; clock: Clock }) {
  const { repo, clock } = deps;
  const cache = createReadThrough(deps.cache);
  // A screen's seats never change once created, so each process keeps layouts without expiry.
  // The promise is kept, so a burst of first requests for a big screen loads it once.
  const layouts = new LRUCache<string, Promise<Layout>>({ max: 2000 });

  function layout(screenId: string): Promise<Layout> {
    let found = layouts.get(screenId);
    if (!found) {
      found = loadLayout(screenId);
      layouts.set(screenId, found);
      found.catch(() => layouts.delete(screenId));
    }
    return found;
  }

  async function loadLayout(screenId: string): Promise<Layout> {
    const seats = (await repo.screenSeats(screenId)).map((seat) => ({
      id: seat.id,
      label: `${seat.row_number}${seat.seat_number}`,
      row: seat.row_number,
      number: seat.seat_number,
      ...(seat.column_number === null ? {} : { column: seat.column_number }),
      type: seat.seat_type,
      base_price_minor: Number(seat.base_price_minor),
    }));
    return {
      seats,
      byLabel: new Map(seats.map((seat) => [seat.label, seat])),
      byId: new Map(seats.map((seat) => [seat.id, seat])),
    };
  }

  async function showInfo(id: string): Promise<ShowInfo> {
    const info = await cache.get<ShowInfo>(`booking:show:${id}`, async () => {
      const row = await repo.findShow(id);
      return row ? { value: toShowInfo(row), ttlMs: SHOW_TTL_MS } : undefined;
    });
    if (!info) throw err('show_not_found');
    return info;
  }

  /** Straight from the database, for decisions the cached copy may be too old for. */
  async function showInfoFresh(id: string): Promise<ShowInfo> {
    const row = await repo.findShow(id);
    if (!row) throw err('show_not_found');
    return toShowInfo(row);
  }

  async function city(idOrName: string): Promise<CityRow> {
    const found = await repo.findCity(idOrName);
    if (!found) throw err('city_not_found', `No city "${idOrName}"`);
    return found;
  }

  /** Drops every listing a show appears in (its city's day, and its movie's lists). */
  async function invalidateListings(show: ShowInfo): Promise<void> {
    const date = localDate(new Date(show.show_time), show.timezone);
    await cache.invalidate(
      `booking:show:${show.id}`,
      `booking:city-shows:${show.city_id}:${date}`,
      `booking:movie-shows:${show.movie_id}:${show.city_id}:${date}`,
      `booking:movie-shows:${show.movie_id}:${show.city_id}:-`,
      `booking:movie-shows:${show.movie_id}:-:${date}`,
      `booking:movie-shows:${show.movie_id}:-:-`,
    );
  }

  async function addScreen(theaterId: string, input: ScreenCreate) {
    const seats = seatsFor(input);
    const screenId = uuidv7();
    const inserted = await repo.db.transaction().execute((tx) =>
      repo.insertScreen(
        tx,
        {
          id: screenId,
          theater_id: theaterId,
          screen_number: input.screen_number,
          screen_type: input.screen_type,
          created_at: clock.now(),
        },
        seats.map((seat) => ({ ...seat, screen_id: screenId })),
      ),
    );
    if (!inserted) throw err('screen_exists', `Screen ${input.screen_number} exists in this theater`);
    return {
      screen_id: screenId,
      screen_number: input.screen_number,
      screen_type: input.screen_type,
      total_seats: seats.length,
    };
  }

  return {
    layout,
    showInfo,
    showInfoFresh,
    city,
    invalidateListings,

    async facets(): Promise<{ languages: string[]; genres: string[] }> {
      const found = await cache.get('booking:facets', async () => ({
        value: await repo.facets(),
        ttlMs: LISTING_TTL_MS,
      }));
      return found!;
    },

    async listCities(): Promise<City[]> {
      return (await repo.listCities()).map(toCity);
    },

    async createCity(input: { name: string; state?: string; timezone?: string }): Promise<City> {
      const timezone = input.timezone ?? 'Asia/Kolkata';
      if (!isTimeZone(timezone)) throw invalid('body.timezone', `"${timezone}" is not an IANA time zone`);
      const row = { id: uuidv7(), name: input.name.trim(), state: input.state ?? null, timezone };
      if (!(await repo.insertCity({ ...row, created_at: clock.now() }))) {
        throw err('city_exists', `There is already a city called ${row.name}`);
      }
      return toCity(row);
    },

    async getMovie(id: string): Promise<Movie> {
      const movie = await cache.get<Movie>(`booking:movie:${id}`, async () => {
        const row = await repo.findMovie(id);
        return row ? { value: toMovie(row), ttlMs: MOVIE_TTL_MS } : undefined;
      });
      if (!movie) throw err('movie_not_found');
      return movie;
    },

    async movieCities(id: string): Promise<string[]> {
      return repo.movieCities(id, clock.now());
    },

    async createMovie(input: MovieCreate): Promise<Movie> {
      const row: MovieRow = {
        id: uuidv7(),
        title: input.title.trim(),
        description: input.description ?? '',
        duration_minutes: input.duration_minutes,
        language: input.language,
        genres: input.genres,
        release_date: input.release_date,
        poster_url: input.poster_url ?? null,
        rating: input.rating ?? null,
      };
      await repo.insertMovies([{ ...row, created_at: clock.now() }]);
      return toMovie(row);
    },

    async updateMovie(id: string, input: MovieUpdate): Promise<Movie> {
      if (!(await repo.updateMovie(id, input, clock.now()))) throw err('movie_not_found');
      await cache.invalidate(`booking:movie:${id}`);
      const row = await repo.findMovie(id);
      if (!row) throw err('movie_not_found');
      return toMovie(row);
    },

    async createTheater(input: TheaterCreate): Promise<Theater> {
      const owner = await city(input.city_id);
      const id = uuidv7();
      const screens = input.screens ?? [];
      const numbers = screens.map((screen) => screen.screen_number);
      if (new Set(numbers).size !== numbers.length) {
        throw invalid('body.screens', 'screen numbers must be unique within a theater');
      }
      for (const screen of screens) seatsFor(screen);
      await repo.insertTheater({
        id,
        city_id: owner.id,
        name: input.name,
        address: input.address ?? '',
        created_at: clock.now(),
      });
      const created = [];
      for (const screen of screens) created.push(await addScreen(id, screen));
      return {
        theater_id: id,
        city_id: owner.id,
        name: input.name,
        address: input.address ?? '',
        total_screens: created.length,
        screens: created,
      };
    },

    async addScreen(theaterId: string, input: ScreenCreate) {
      if (!(await repo.findTheater(theaterId))) throw err('theater_not_found');
      return addScreen(theaterId, input);
    },

    async getTheater(id: string): Promise<Theater> {
      const theater = await repo.findTheater(id);
      if (!theater) throw err('theater_not_found');
      const screens = await repo.theaterScreens(id);
      return {
        theater_id: theater.id,
        city_id: theater.city_id,
        name: theater.name,
        address: theater.address,
        total_screens: theater.total_screens,
        screens: screens.map((screen) => ({
          screen_id: screen.id,
          screen_number: screen.screen_number,
          screen_type: screen.screen_type,
          total_seats: screen.total_seats,
        })),
      };
    },

    async createShow(input: ShowCreate): Promise<Show> {
      const movie = await repo.findMovie(input.movie_id);
      if (!movie) throw err('movie_not_found');
      const screen = await repo.findScreen(input.screen_id);
      if (!screen) throw err('screen_not_found');
      const start = new Date(input.show_time);
      const end = input.end_time
        ? new Date(input.end_time)
        : new Date(start.getTime() + movie.duration_minutes * 60_000);
      if (start.getTime() <= clock.now().getTime()) throw invalid('body.show_time', 'must be in the future');
      if (end.getTime() <= start.getTime()) throw invalid('body.end_time', 'must be after show_time');
      const id = uuidv7();
      await repo.db.transaction().execute(async (tx) => {
        await repo.lockScreen(tx, screen.id);
        const clash = await repo.overlappingShow(tx, screen.id, start, end);
        if (clash) throw err('show_overlaps', { extras: { conflicting_show_id: clash.id } });
        await repo.insertShows(tx, [
          {
            id,
            movie_id: movie.id,
            screen_id: screen.id,
            show_time: start,
            end_time: end,
            price_multiplier: input.price_multiplier ?? 1,
            is_hot: input.is_hot ?? false,
            created_at: clock.now(),
          },
        ]);
      });
      const info = await showInfo(id);
      await invalidateListings(info);
      return toShow(info);
    },

    async setHot(id: string, isHot: boolean): Promise<Show> {
      if (!(await repo.setShowHot(id, isHot))) throw err('show_not_found');
      await cache.invalidate(`booking:show:${id}`);
      const info = await showInfo(id);
      await invalidateListings(info);
      return toShow(info);
    },

    async getShow(id: string): Promise<Show> {
      return toShow(await showInfo(id));
    },

    async cityShows(cityId: string, date?: string): Promise<CityShows> {
      const found = await city(cityId);
      const day = date ?? localDate(clock.now(), found.timezone);
      const listing = await cache.get<CityShows>(`booking:city-shows:${found.id}:${day}`, async () => {
        const rows = await repo.cityShows(found, day);
        const movies = new Map<string, CityShows['movies'][number] & { slots: SlotRow[] }>();
        for (const row of rows) {
          let entry = movies.get(row.movie.id);
          if (!entry) {
            const movie = row.movie;
            entry = {
              movie_id: movie.id,
              title: movie.title,
              language: movie.language,
              genres: movie.genres,
              rating: movie.rating === null ? null : Number(movie.rating),
              duration_minutes: movie.duration_minutes,
              theaters: [],
              slots: [],
            };
            movies.set(movie.id, entry);
          }
          entry.slots.push(row);
        }
        const value: CityShows = {
          city: toCity(found),
          date: day,
          movies: [...movies.values()].map(({ slots, ...movie }) => ({
            ...movie,
            theaters: groupByTheater(slots),
          })),
        };
        return { value, ttlMs: LISTING_TTL_MS };
      });
      return listing!;
    },

    async movieShows(movieId: string, query: { city?: string; date?: string }): Promise<MovieShows> {
      if (!(await repo.findMovie(movieId))) throw err('movie_not_found');
      const found = query.city ? await city(query.city) : undefined;
      const key = `booking:movie-shows:${movieId}:${found?.id ?? '-'}:${query.date ?? '-'}`;
      const listing = await cache.get<MovieShows>(key, async () => {
        const now = clock.now();
        const rows = await repo.movieShows(movieId, {
          city: found,
          date: query.date,
          from: now,
          until: new Date(`${addDays(now.toISOString().slice(0, 10), 8)}T00:00:00Z`),
        });
        const value: MovieShows = {
          movie_id: movieId,
          date: query.date ?? null,
          city_id: found?.id ?? null,
          theaters: groupByTheater(rows),
        };
        return { value, ttlMs: LISTING_TTL_MS };
      });
      return listing!;
    },
  };
}

export type CatalogueService = ReturnType<typeof createCatalogueService>;
