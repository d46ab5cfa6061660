import type { FastifyInstance } from 'fastify';
import { SearchQuery, SearchResult, Suggestions, SuggestQuery } from './schemas.ts';
import type { SearchService } from './service.ts';

const tags = ['booking'];

export function searchRoutes(app: FastifyInstance, search: SearchService) {
  app.get(
    '/api/v1/movies',
    {
      config: { access: { public: true } },
      schema: {
        tags,
        summary: 'Search movies: full-text on title, filters, sort, pages',
        querystring: SearchQuery,
        response: { 200: SearchResult },
      },
    },
    async (request) => search.search(request.query as SearchQuery),
  );

  app.get(
    '/api/v1/movies/suggest',
    {
      config: { access: { public: true } },
      schema: {
        tags,
        summary: 'Autocomplete movie titles (tolerates typos)',
        querystring: SuggestQuery,
        response: { 200: Suggestions },
      },
    },
    async (request) => {
      const { q, limit } = request.query as { q: string; limit?: number };
      return search.suggest(q, limit);
    },
  );
}
