import { type RawBuilder, sql } from 'kysely';
import type { CityRow, MovieRow } from '../catalogue/repository.ts';
import type { BookingDb } from '../tables.ts';

export interface SearchFilters {
  /** Normalised words of the title query (lower case, letters and digits). */
  words: string[];
  /** The whole query, lower case, for substring and trigram matching. */
  text?: string;
  city?: CityRow;
  date?: string;
  genre?: string;
  language?: string;
  sort: 'relevance' | 'rating' | 'release_date';
  limit: number;
  offset: number;
  now: Date;
}

/** How loosely autocomplete matches a word (pg_trgm word similarity); 0.6 by default misses "monsun". */
const SUGGEST_THRESHOLD = 0.4;

export function createSearchRepository(db: BookingDb) {
  return {
    async search(
      filters: SearchFilters,
    ): Promise<{ rows: (MovieRow & { cities: string[] })[]; total: number }> {
      const conditions: RawBuilder<unknown>[] = [];
      const tsquery =
        filters.words.length > 0 ? filters.words.map((word) => `${word}:*`).join(' & ') : undefined;
      if (filters.text !== undefined) {
        // Full-text on the title (stemmed, prefix per word), or a plain substring for stop words and
        // fragments; both are served by the GIN indexes (tsvector, trigram).
        conditions.push(
          sql`(${
            tsquery ? sql`m.title_tsv @@ to_tsquery('english', ${tsquery}) or ` : sql``
          }lower(m.title) like ${`%${escapeLike(filters.text)}%`})`,
        );
      }
      if (filters.language) conditions.push(sql`lower(m.language) = lower(${filters.language})`);
      if (filters.genre) {
        conditions.push(
          sql`exists (select 1 from unnest(m.genres) g where lower(g) = lower(${filters.genre}))`,
        );
      }
      if (filters.city || filters.date) {
        conditions.push(sql`exists (
          select 1 from booking_shows s
          join booking_screens sc on sc.id = s.screen_id
          join booking_theaters t on t.id = sc.theater_id
          join booking_cities c on c.id = t.city_id
          where s.movie_id = m.id and s.status = 'SCHEDULED' and s.show_time >= ${filters.now}
            ${filters.city ? sql`and t.city_id = ${filters.city.id}` : sql``}
            ${
              filters.date
                ? sql`and s.show_time >= (${filters.date}::date::timestamp at time zone c.timezone)
                      and s.show_time < ((${filters.date}::date + 1)::timestamp at time zone c.timezone)`
                : sql``
            })`);
      }
      const where = conditions.length > 0 ? sql`where ${sql.join(conditions, sql` and `)}` : sql``;
      // Without words there is nothing to rank by: relevance is the rating order then (a bare
      // `order by 0` would name a column position, and fail).
      const relevance =
        filters.text !== undefined
          ? sql`${tsquery ? sql`ts_rank(m.title_tsv, to_tsquery('english', ${tsquery})) + ` : sql``}similarity(lower(m.title), ${filters.text}) desc, `
          : sql``;
      const order =
        filters.sort === 'release_date'
          ? sql`m.release_date desc, m.title`
          : filters.sort === 'rating'
            ? sql`m.rating desc nulls last, m.title`
            : sql`${relevance}m.rating desc nulls last, m.title`;
      const { rows } = await sql<MovieRow & { cities: string[]; total: number }>`
        select m.id, m.title, m.description, m.duration_minutes, m.language, m.genres,
          to_char(m.release_date, 'YYYY-MM-DD') as release_date, m.poster_url, m.rating::float8 as rating,
          array(
            select distinct c.name from booking_shows s
            join booking_screens sc on sc.id = s.screen_id
            join booking_theaters t on t.id = sc.theater_id
            join booking_cities c on c.id = t.city_id
            where s.movie_id = m.id and s.status = 'SCHEDULED' and s.show_time >= ${filters.now}
            order by c.name
          ) as cities,
          (count(*) over ())::int as total
        from booking_movies m
        ${where}
        order by ${order}
        limit ${filters.limit} offset ${filters.offset}`.execute(db);
      if (rows.length === 0 && filters.offset > 0) {
        // Past the last page: still report how many there are.
        const { rows: counted } = await sql<{
          total: number;
        }>`select count(*)::int as total from booking_movies m ${where}`.execute(db);
        return { rows: [], total: counted[0]?.total ?? 0 };
      }
      return { rows, total: rows[0]?.total ?? 0 };
    },

    /** Titles that start with, contain a word starting with, or look like (trigrams) the query. */
    async suggest(text: string, limit: number) {
      return db.transaction().execute(async (tx) => {
        await sql`select set_config('pg_trgm.word_similarity_threshold', ${String(SUGGEST_THRESHOLD)}, true)`.execute(
          tx,
        );
        const prefix = escapeLike(text);
        const { rows } = await sql<{
          id: string;
          title: string;
          release_date: string;
          rating: number | null;
        }>`
          select m.id, m.title, to_char(m.release_date, 'YYYY-MM-DD') as release_date, m.rating::float8 as rating
          from booking_movies m
          where lower(m.title) like ${`${prefix}%`} or lower(m.title) like ${`% ${prefix}%`}
            or ${text} <% lower(m.title)
          order by (lower(m.title) like ${`${prefix}%`}) desc, word_similarity(${text}, lower(m.title)) desc,
            m.rating desc nulls last, m.title
          limit ${limit}`.execute(tx);
        return rows;
      });
    },
  };
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}

export type SearchRepository = ReturnType<typeof createSearchRepository>;
