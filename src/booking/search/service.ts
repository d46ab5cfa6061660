import { type Cache, createReadThrough } from '../../platform/cache/index.ts';
import type { Clock } from '../../platform/clock.ts';
import type { CatalogueService } from '../catalogue/service.ts';
import { toMovie } from '../catalogue/shapes.ts';
import type { SearchRepository } from './repository.ts';
import type { SearchQuery, SearchResult, Suggestions } from './schemas.ts';

const SUGGEST_TTL_MS = 5 * 60_000;

/** Movie search (full-text + filters + sort + pages) and typo-tolerant autocomplete. */
export function createSearchService(deps: {
  repo: SearchRepository;
  catalogue: CatalogueService;
  cache: Cache;
  clock: Clock;
}) {
  const { repo, catalogue, clock } = deps;
  const cache = createReadThrough(deps.cache);
  return {
    async search(query: SearchQuery): Promise<SearchResult> {
      const text = normalise(query.q ?? '');
      const page = query.page ?? 1;
      const pageSize = query.page_size ?? 20;
      const { rows, total } = await repo.search({
        words: words(text),
        text: text === '' ? undefined : text,
        city: query.city ? await catalogue.city(query.city) : undefined,
        date: query.date,
        genre: query.genre,
        language: query.language,
        sort: query.sort ?? (text ? 'relevance' : 'rating'),
        limit: pageSize,
        offset: (page - 1) * pageSize,
        now: clock.now(),
      });
      return {
        items: rows.map((row) => ({ ...toMovie(row), cities: row.cities })),
        page,
        page_size: pageSize,
        total,
      };
    },

    async suggest(q: string, limit = 8): Promise<Suggestions> {
      const text = normalise(q);
      if (text === '') return { suggestions: [] };
      const found = await cache.get(`booking:suggest:${limit}:${text}`, async () => ({
        value: await repo.suggest(text, limit),
        ttlMs: SUGGEST_TTL_MS,
      }));
      return {
        suggestions: (found ?? []).map((row) => ({
          movie_id: row.id,
          title: row.title,
          release_date: row.release_date,
          rating: row.rating === null ? null : Number(row.rating),
        })),
      };
    },
  };
}

export type SearchService = ReturnType<typeof createSearchService>;

function normalise(q: string): string {
  return q.trim().toLowerCase().replace(/\s+/g, ' ').slice(0, 100);
}

/** Letters and digits only: the words become a tsquery, so no operator can be smuggled in. */
function words(text: string): string[] {
  return (text.match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, 8);
}
