import { type Expression, type ExpressionBuilder, type SqlBool, sql } from 'kysely';
import type { Db } from '../../platform/db/index.ts';
import {
  type CityRow,
  citiesShowing,
  type MovieRow,
  movieColumns,
  showsWithVenue,
} from '../catalogue/repository.ts';
import type { BookingDb, BookingTables, MoviesTable } from '../tables.ts';

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

type Movies = ExpressionBuilder<BookingTables & { m: MoviesTable }, 'm'>;

const lowerTitle = sql<string>`lower(m.title)`;

export function createSearchRepository(database: Db) {
  const db: BookingDb = database.withTables<BookingTables>();

  /** The filters as conditions on `booking_movies as m`. */
  function matches(filters: SearchFilters, tsquery: string | undefined) {
    return (eb: Movies) => {
      const conditions: Expression<SqlBool>[] = [];
      if (filters.text !== undefined) {
        // Full-text on the title (stemmed, prefix per word), or a plain substring for stop words and
        // fragments; both are served by the GIN indexes (tsvector, trigram).
        const substring = eb(lowerTitle, 'like', `%${escapeLike(filters.text)}%`);
        conditions.push(
          tsquery
            ? eb.or([sql<SqlBool>`m.title_tsv @@ to_tsquery('english', ${tsquery})`, substring])
            : substring,
        );
      }
      if (filters.language) {
        conditions.push(eb(eb.fn('lower', ['m.language']), '=', eb.fn('lower', [eb.val(filters.language)])));
      }
      if (filters.genre) {
        conditions.push(
          sql<SqlBool>`exists (select 1 from unnest(m.genres) g where lower(g) = lower(${filters.genre}))`,
        );
      }
      if (filters.city || filters.date) conditions.push(eb.exists(showingThere(filters)));
      return eb.and(conditions);
    };
  }

  /** Scheduled shows of the movie `m` from now on, in the city and on the local date asked for. */
  function showingThere({ city, date, now }: SearchFilters) {
    let shows = showsWithVenue(db)
      .select(sql.lit(1).as('one'))
      .where('s.movie_id', '=', sql.ref<string>('m.id'))
      .where('s.status', '=', 'SCHEDULED')
      .where('s.show_time', '>=', now);
    if (city) shows = shows.where('t.city_id', '=', city.id);
    if (date) {
      shows = shows
        .where('s.show_time', '>=', sql<Date>`(${date}::date::timestamp at time zone c.timezone)`)
        .where('s.show_time', '<', sql<Date>`((${date}::date + 1)::timestamp at time zone c.timezone)`);
    }
    return shows;
  }

  return {
    async search(
      filters: SearchFilters,
    ): Promise<{ rows: (MovieRow & { cities: string[] })[]; total: number }> {
      const tsquery =
        filters.words.length > 0 ? filters.words.map((word) => `${word}:*`).join(' & ') : undefined;
      const where = matches(filters, tsquery);
      let query = db
        .selectFrom('booking_movies as m')
        .select([
          ...movieColumns,
          sql<string[]>`array(${citiesShowing(db, sql.ref<string>('m.id'), filters.now)})`.as('cities'),
          sql<number>`(count(*) over ())::int`.as('total'),
        ])
        .where(where);
      if (filters.sort === 'release_date') query = query.orderBy('m.release_date', 'desc');
      else if (filters.sort === 'relevance' && filters.text !== undefined) {
        // Without words there is nothing to rank by: relevance is the rating order then.
        const rank = tsquery ? sql`ts_rank(m.title_tsv, to_tsquery('english', ${tsquery})) + ` : sql``;
        query = query.orderBy(sql`${rank}similarity(${lowerTitle}, ${filters.text})`, 'desc');
      }
      if (filters.sort !== 'release_date')
        query = query.orderBy('m.rating', (order) => order.desc().nullsLast());
      const rows = await query.orderBy('m.title').limit(filters.limit).offset(filters.offset).execute();
      if (rows.length === 0 && filters.offset > 0) {
        // Past the last page: still report how many there are.
        const counted = await db
          .selectFrom('booking_movies as m')
          .select((eb) => eb.cast<number>(eb.fn.countAll(), 'integer').as('total'))
          .where(where)
          .executeTakeFirst();
        return { rows: [], total: counted?.total ?? 0 };
      }
      return { rows, total: rows[0]?.total ?? 0 };
    },

    /** Titles that start with, contain a word starting with, or look like (trigrams) the query. */
    async suggest(text: string, limit: number) {
      const prefix = escapeLike(text);
      return db.transaction().execute(async (tx) => {
        // Raw SQL: set_config, a function called for its effect (the trigram threshold, this transaction only).
        await sql`select set_config('pg_trgm.word_similarity_threshold', ${String(SUGGEST_THRESHOLD)}, true)`.execute(
          tx,
        );
        return tx
          .selectFrom('booking_movies as m')
          .select([
            'm.id',
            'm.title',
            sql<string>`to_char(m.release_date, 'YYYY-MM-DD')`.as('release_date'),
            sql<number | null>`m.rating::float8`.as('rating'),
          ])
          .where((eb) =>
            eb.or([
              eb(lowerTitle, 'like', `${prefix}%`),
              eb(lowerTitle, 'like', `% ${prefix}%`),
              sql<SqlBool>`${text} <% ${lowerTitle}`,
            ]),
          )
          .orderBy(sql`(${lowerTitle} like ${`${prefix}%`})`, 'desc')
          .orderBy(sql`word_similarity(${text}, ${lowerTitle})`, 'desc')
          .orderBy('m.rating', (order) => order.desc().nullsLast())
          .orderBy('m.title')
          .limit(limit)
          .execute();
      });
    },
  };
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}

export type SearchRepository = ReturnType<typeof createSearchRepository>;
