import { type Static, Type } from 'typebox';

export const Uuid = Type.String({ format: 'uuid', description: 'UUID' });
export const IsoDate = Type.String({ format: 'date', description: 'A calendar date, YYYY-MM-DD' });
export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC timestamp' });
export const SeatTypeSchema = Type.Enum(['REGULAR', 'PREMIUM', 'RECLINER', 'WHEELCHAIR', 'COMPANION'], {
  description: 'WHEELCHAIR is a space for a wheelchair, COMPANION the seat beside it for a companion',
});
const RowSeatTypeSchema = Type.Enum(['REGULAR', 'PREMIUM', 'RECLINER']);
const SeatNumbers = (description: string) =>
  Type.Optional(Type.Array(Type.Integer({ minimum: 1, maximum: 200 }), { maxItems: 200, description }));
/** A price in major units with at most two decimals (e.g. 250.5). */
export const Price = Type.Number({ minimum: 0, maximum: 99_999_999.99 });

export const IdParams = Type.Object({ id: Uuid });

export const City = Type.Object({
  city_id: Uuid,
  name: Type.String(),
  state: Type.Union([Type.String(), Type.Null()]),
  timezone: Type.String({ description: 'IANA time zone; show dates are local dates of the city' }),
});
export type City = Static<typeof City>;

export const CityCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    state: Type.Optional(Type.String({ maxLength: 100 })),
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, default: 'Asia/Kolkata' })),
  },
  { additionalProperties: false },
);

export const Movie = Type.Object({
  movie_id: Uuid,
  title: Type.String(),
  description: Type.String(),
  duration_minutes: Type.Integer(),
  language: Type.String(),
  genre: Type.String({ description: 'Genres joined with ", " (the spec field)' }),
  genres: Type.Array(Type.String()),
  release_date: IsoDate,
  poster_url: Type.Union([Type.String(), Type.Null()]),
  rating: Type.Union([Type.Number(), Type.Null()]),
});
export type Movie = Static<typeof Movie>;

export const MovieCreate = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 255 }),
    description: Type.Optional(Type.String({ maxLength: 10_000 })),
    duration_minutes: Type.Integer({ minimum: 1, maximum: 1000 }),
    language: Type.String({ minLength: 1, maxLength: 50 }),
    genres: Type.Array(Type.String({ minLength: 1, maxLength: 30 }), { minItems: 1, maxItems: 5 }),
    release_date: IsoDate,
    poster_url: Type.Optional(Type.String({ maxLength: 500, format: 'uri' })),
    rating: Type.Optional(Type.Number({ minimum: 0, maximum: 9.9 })),
  },
  { additionalProperties: false },
);
export type MovieCreate = Static<typeof MovieCreate>;

export const MovieUpdate = Type.Partial(MovieCreate, { additionalProperties: false, minProperties: 1 });
export type MovieUpdate = Static<typeof MovieUpdate>;

export const RowLayout = Type.Object(
  {
    row: Type.String({ pattern: '^[A-Z]{1,2}$', description: 'Row letter(s), e.g. C' }),
    seats: Type.Integer({ minimum: 1, maximum: 200, description: 'Seats numbered 1..n' }),
    seat_type: RowSeatTypeSchema,
    aisles_after: SeatNumbers('An aisle (a gap in the seat map) after each of these seat numbers'),
    wheelchair: SeatNumbers("These seats are wheelchair spaces (WHEELCHAIR, at the row type's price)"),
    companion: SeatNumbers("These seats are companion seats (COMPANION, at the row type's price)"),
  },
  { additionalProperties: false },
);

export const ScreenCreate = Type.Object(
  {
    screen_number: Type.Integer({ minimum: 1, maximum: 100 }),
    screen_type: Type.String({ minLength: 1, maxLength: 50, description: 'e.g. IMAX, 3D, Standard' }),
    rows: Type.Array(RowLayout, { minItems: 1, maxItems: 200, description: 'Up to 200 rows (arenas)' }),
    prices: Type.Object(
      { REGULAR: Type.Optional(Price), PREMIUM: Type.Optional(Price), RECLINER: Type.Optional(Price) },
      { additionalProperties: false, description: 'Base price per seat type used by the rows' },
    ),
  },
  { additionalProperties: false },
);
export type ScreenCreate = Static<typeof ScreenCreate>;

export const TheaterCreate = Type.Object(
  {
    city_id: Uuid,
    name: Type.String({ minLength: 1, maxLength: 255 }),
    address: Type.Optional(Type.String({ maxLength: 1000 })),
    screens: Type.Optional(Type.Array(ScreenCreate, { maxItems: 30 })),
  },
  { additionalProperties: false },
);
export type TheaterCreate = Static<typeof TheaterCreate>;

export const Screen = Type.Object({
  screen_id: Uuid,
  screen_number: Type.Integer(),
  screen_type: Type.String(),
  total_seats: Type.Integer(),
});

export const Theater = Type.Object({
  theater_id: Uuid,
  city_id: Uuid,
  name: Type.String(),
  address: Type.String(),
  total_screens: Type.Integer(),
  screens: Type.Array(Screen),
});
export type Theater = Static<typeof Theater>;

export const ShowCreate = Type.Object(
  {
    movie_id: Uuid,
    screen_id: Uuid,
    show_time: Timestamp,
    end_time: Type.Optional(Timestamp),
    price_multiplier: Type.Optional(Type.Number({ minimum: 0.01, maximum: 9.99 })),
    is_hot: Type.Optional(
      Type.Boolean({ description: 'Holds need an admission token from the waiting room' }),
    ),
  },
  { additionalProperties: false },
);
export type ShowCreate = Static<typeof ShowCreate>;

export const ShowUpdate = Type.Object({ is_hot: Type.Boolean() }, { additionalProperties: false });

export const Show = Type.Object({
  show_id: Uuid,
  movie_id: Uuid,
  movie_title: Type.String(),
  theater_id: Uuid,
  theater_name: Type.String(),
  city_id: Uuid,
  city: Type.String(),
  timezone: Type.String(),
  screen_id: Uuid,
  screen_number: Type.Integer(),
  screen_type: Type.String(),
  show_time: Timestamp,
  end_time: Timestamp,
  local_time: Type.String({ description: 'HH:MM in the city' }),
  price_multiplier: Type.Number(),
  status: Type.Enum(['SCHEDULED', 'CANCELLED']),
  is_hot: Type.Boolean(),
});
export type Show = Static<typeof Show>;

export const ShowSlot = Type.Object({
  show_id: Uuid,
  show_time: Timestamp,
  end_time: Timestamp,
  local_time: Type.String(),
  screen_number: Type.Integer(),
  screen_type: Type.String(),
  price_multiplier: Type.Number(),
  is_hot: Type.Boolean(),
  status: Type.String(),
});
export type ShowSlot = Static<typeof ShowSlot>;

export const TheaterShows = Type.Object({
  theater_id: Uuid,
  name: Type.String(),
  address: Type.String(),
  city: Type.String(),
  shows: Type.Array(ShowSlot),
});
export type TheaterShows = Static<typeof TheaterShows>;

export const CityShows = Type.Object({
  city: City,
  date: IsoDate,
  movies: Type.Array(
    Type.Object({
      movie_id: Uuid,
      title: Type.String(),
      language: Type.String(),
      genres: Type.Array(Type.String()),
      rating: Type.Union([Type.Number(), Type.Null()]),
      duration_minutes: Type.Integer(),
      theaters: Type.Array(TheaterShows),
    }),
  ),
});
export type CityShows = Static<typeof CityShows>;

export const MovieShows = Type.Object({
  movie_id: Uuid,
  date: Type.Union([IsoDate, Type.Null()]),
  city_id: Type.Union([Uuid, Type.Null()]),
  theaters: Type.Array(TheaterShows),
});
export type MovieShows = Static<typeof MovieShows>;

export const DateQuery = Type.Object({ date: Type.Optional(IsoDate) }, { additionalProperties: false });
export const MovieShowsQuery = Type.Object(
  { date: Type.Optional(IsoDate), city: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })) },
  { additionalProperties: false },
);
