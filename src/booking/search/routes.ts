import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { SearchQuery, SearchResult, Suggestions, SuggestQuery } from './schemas.ts';
import type { SearchService } from './service.ts';

const tags = ['booking'];

export const searchRoutes: FastifyPluginAsyncTypebox<{ search: SearchService }> = async (app, { search }) => {
  app.get(
    '/api/v1/movies',
    {
      config: { access: { public: true }, cache: 'revalidate' },
      schema: {
        tags,
        summary: 'Search movies: full-text on title, filters, sort, pages',
        querystring: SearchQuery,
        response: { 200: SearchResult },
      },
    },
    async (request) => search.search(request.query),
  );

  app.get(
    '/api/v1/movies/suggest',
    {
      config: { access: { public: true }, cache: 'revalidate' },
      schema: {
        tags,
        summary: 'Autocomplete movie titles (tolerates typos)',
        querystring: SuggestQuery,
        response: { 200: Suggestions },
      },
    },
    async (request) => search.suggest(request.query.q, request.query.limit),
  );
};
