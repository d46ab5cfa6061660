import { platformError } from '../../platform/errors.ts';
import { uuidv7 } from '../../platform/ids.ts';
import { toMinor } from '../money.ts';
import type { SeatType } from '../tables.ts';
import { localTime } from '../time.ts';
import type { CityRow, MovieRow, ShowRow, SlotRow } from './repository.ts';
import type { City, Movie, ScreenCreate, Show, ShowSlot, TheaterShows } from './schemas.ts';

/** The catalogue's shapes: rows to API objects, and seat layouts to seats. */

/** What holds and the seat map need to know about a show; JSON-safe so Redis can hold it. */
export interface ShowInfo {
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
  show_time: string;
  end_time: string;
  multiplier_hundredths: number;
  status: 'SCHEDULED' | 'CANCELLED';
  is_hot: boolean;
}

export interface LayoutSeat {
  id: string;
  label: string;
  row: string;
  number: number;
  /** Its column counting aisle gaps, when an aisle comes before it. */
  column?: number;
  type: SeatType;
  base_price_minor: number;
}

export interface Layout {
  seats: LayoutSeat[];
  byLabel: Map<string, LayoutSeat>;
  byId: Map<string, LayoutSeat>;
}

/** The seats a screen layout describes, validated (every row's seat type needs a price). */
export function seatsFor(screen: ScreenCreate) {
  const rows = screen.rows.map((row) => row.row);
  if (new Set(rows).size !== rows.length) throw invalid('body.rows', 'row letters must be unique');
  return screen.rows.flatMap((row) => {
    const price = screen.prices[row.seat_type];
    if (price === undefined)
      throw invalid('body.prices', `no price for ${row.seat_type} seats (row ${row.row})`);
    if (Math.abs(price * 100 - toMinor(price)) > 1e-6) {
      throw invalid(`body.prices.${row.seat_type}`, 'must have at most two decimals');
    }
    const field = `body.rows.${row.row}`;
    const numbers = (list: number[] | undefined, name: string) => {
      for (const n of list ?? []) if (n > row.seats) throw invalid(`${field}.${name}`, `has no seat ${n}`);
      return new Set(list);
    };
    const wheelchair = numbers(row.wheelchair, 'wheelchair');
    const companion = numbers(row.companion, 'companion');
    const aisles = numbers(row.aisles_after, 'aisles_after');
    for (const n of wheelchair) {
      if (companion.has(n)) throw invalid(`${field}.companion`, `seat ${n} is also a wheelchair space`);
    }
    let gaps = 0;
    return Array.from({ length: row.seats }, (_, index) => {
      const number = index + 1;
      if (aisles.has(index)) gaps++;
      const type: SeatType = wheelchair.has(number)
        ? 'WHEELCHAIR'
        : companion.has(number)
          ? 'COMPANION'
          : row.seat_type;
      return {
        id: uuidv7(),
        row_number: row.row,
        seat_number: number,
        column_number: gaps ? number + gaps : null,
        seat_type: type,
        base_price_minor: toMinor(price),
      };
    });
  });
}

export function invalid(field: string, message: string) {
  return platformError('validation_failed', {
    detail: `${field} ${message}`,
    extras: { errors: [{ field, message }] },
  });
}

export function groupByTheater(rows: SlotRow[]): TheaterShows[] {
  const theaters = new Map<string, TheaterShows>();
  for (const row of rows) {
    let theater = theaters.get(row.theater_id);
    if (!theater) {
      theater = {
        theater_id: row.theater_id,
        name: row.theater_name,
        address: row.address,
        city: row.city_name,
        shows: [],
      };
      theaters.set(row.theater_id, theater);
    }
    theater.shows.push(toSlot(row));
  }
  return [...theaters.values()];
}

function toSlot(row: SlotRow): ShowSlot {
  return {
    show_id: row.show_id,
    show_time: new Date(row.show_time).toISOString(),
    end_time: new Date(row.end_time).toISOString(),
    local_time: localTime(new Date(row.show_time), row.timezone),
    screen_number: row.screen_number,
    screen_type: row.screen_type,
    price_multiplier: row.multiplier_hundredths / 100,
    is_hot: row.is_hot,
    status: row.status,
  };
}

export function toShowInfo(row: ShowRow): ShowInfo {
  return {
    id: row.id,
    movie_id: row.movie_id,
    movie_title: row.movie_title,
    screen_id: row.screen_id,
    screen_number: row.screen_number,
    screen_type: row.screen_type,
    theater_id: row.theater_id,
    theater_name: row.theater_name,
    city_id: row.city_id,
    city_name: row.city_name,
    timezone: row.timezone,
    show_time: new Date(row.show_time).toISOString(),
    end_time: new Date(row.end_time).toISOString(),
    multiplier_hundredths: row.multiplier_hundredths,
    status: row.status,
    is_hot: row.is_hot,
  };
}

export function toShow(info: ShowInfo): Show {
  return {
    show_id: info.id,
    movie_id: info.movie_id,
    movie_title: info.movie_title,
    theater_id: info.theater_id,
    theater_name: info.theater_name,
    city_id: info.city_id,
    city: info.city_name,
    timezone: info.timezone,
    screen_id: info.screen_id,
    screen_number: info.screen_number,
    screen_type: info.screen_type,
    show_time: info.show_time,
    end_time: info.end_time,
    local_time: localTime(new Date(info.show_time), info.timezone),
    price_multiplier: info.multiplier_hundredths / 100,
    status: info.status,
    is_hot: info.is_hot,
  };
}

export function toCity(row: CityRow): City {
  return { city_id: row.id, name: row.name, state: row.state, timezone: row.timezone };
}

export function toMovie(row: MovieRow): Movie {
  return {
    movie_id: row.id,
    title: row.title,
    description: row.description,
    duration_minutes: row.duration_minutes,
    language: row.language,
    genre: row.genres.join(', '),
    genres: row.genres,
    release_date: row.release_date,
    poster_url: row.poster_url,
    rating: row.rating === null ? null : Number(row.rating),
  };
}
