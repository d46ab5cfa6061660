import { type Static, Type } from 'typebox';
import { IsoDate, Movie, Uuid } from '../catalogue/schemas.ts';

export const SearchQuery = Type.Object(
  {
    q: Type.Optional(
      Type.String({ maxLength: 100, description: 'Words of the title (full-text, prefixes match)' }),
    ),
    city: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'City id or name: movies showing there' }),
    ),
    date: Type.Optional(IsoDate),
    genre: Type.Optional(Type.String({ minLength: 1, maxLength: 30 })),
    language: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
    sort: Type.Optional(
      Type.Enum(['relevance', 'rating', 'release_date'], {
        description: 'Default: relevance with q, else rating',
      }),
    ),
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 1 })),
    page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 20 })),
  },
  { additionalProperties: false },
);
export type SearchQuery = Static<typeof SearchQuery>;

export const SearchResult = Type.Object({
  items: Type.Array(
    Type.Evaluate(
      Type.Intersect([
        Movie,
        Type.Object({ cities: Type.Array(Type.String(), { description: 'Cities with upcoming shows' }) }),
      ]),
    ),
  ),
  page: Type.Integer(),
  page_size: Type.Integer(),
  total: Type.Integer(),
});
export type SearchResult = Static<typeof SearchResult>;

export const SuggestQuery = Type.Object(
  {
    q: Type.String({ minLength: 1, maxLength: 100 }),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 20, default: 8 })),
  },
  { additionalProperties: false },
);

export const Suggestions = Type.Object({
  suggestions: Type.Array(
    Type.Object({
      movie_id: Uuid,
      title: Type.String(),
      release_date: IsoDate,
      rating: Type.Union([Type.Number(), Type.Null()]),
    }),
  ),
});
export type Suggestions = Static<typeof Suggestions>;
