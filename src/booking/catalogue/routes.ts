import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import {
  City,
  CityCreate,
  CityShows,
  DateQuery,
  IdParams,
  Movie,
  MovieCreate,
  MovieShows,
  MovieShowsQuery,
  MovieUpdate,
  Screen,
  ScreenCreate,
  Show,
  ShowCreate,
  ShowUpdate,
  Theater,
  TheaterCreate,
} from './schemas.ts';
import type { CatalogueService } from './service.ts';

const tags = ['booking'];
/** Public reads: a weak ETag and revalidation (platform/http/conditional.ts). */
const PUBLIC_READ = { access: { public: true as const }, cache: 'revalidate' as const };
/** A read by id or name: 404 when there is none. */
const PUBLIC_READ_ONE = { ...PUBLIC_READ, openapi: { problems: [404] } };
const ADMIN = { access: { admin: true as const } };
/** Admin writes naming other records (404) or clashing with one (409). */
const ADMIN_WRITE = { ...ADMIN, openapi: { problems: [404, 409] } };
const adminTags = ['booking admin'];

export const catalogueRoutes: FastifyPluginAsyncTypebox<{ catalogue: CatalogueService }> = async (
  app,
  { catalogue },
) => {
  app.get(
    '/api/v1/cities',
    {
      config: PUBLIC_READ,
      schema: { tags, summary: 'List cities', response: { 200: Type.Object({ cities: Type.Array(City) }) } },
    },
    async () => ({ cities: await catalogue.listCities() }),
  );

  app.get(
    '/api/v1/cities/:id/shows',
    {
      config: PUBLIC_READ_ONE,
      schema: {
        tags,
        summary: "A city's shows on a local date (default today), grouped by movie and theater",
        params: Type.Object({
          id: Type.String({ minLength: 1, maxLength: 100, description: 'City id or name' }),
        }),
        querystring: DateQuery,
        response: { 200: CityShows },
      },
    },
    async (request) => catalogue.cityShows(request.params.id, request.query.date),
  );

  app.get(
    '/api/v1/movies/:id',
    {
      config: PUBLIC_READ_ONE,
      schema: {
        tags,
        summary: 'A movie',
        params: IdParams,
        response: {
          200: Type.Evaluate(Type.Intersect([Movie, Type.Object({ cities: Type.Array(Type.String()) })])),
        },
      },
    },
    async (request) => {
      const { id } = request.params;
      const movie = await catalogue.getMovie(id);
      return { ...movie, cities: await catalogue.movieCities(id) };
    },
  );

  app.get(
    '/api/v1/movies/:id/shows',
    {
      config: PUBLIC_READ_ONE,
      schema: {
        tags,
        summary: "A movie's shows, by theater (one city and local date, or the coming week)",
        params: IdParams,
        querystring: MovieShowsQuery,
        response: { 200: MovieShows },
      },
    },
    async (request) => catalogue.movieShows(request.params.id, request.query),
  );

  app.get(
    '/api/v1/theaters/:id',
    {
      config: PUBLIC_READ_ONE,
      schema: { tags, summary: 'A theater and its screens', params: IdParams, response: { 200: Theater } },
    },
    async (request) => catalogue.getTheater(request.params.id),
  );

  app.get(
    '/api/v1/shows/:id',
    {
      config: PUBLIC_READ_ONE,
      schema: { tags, summary: 'A show', params: IdParams, response: { 200: Show } },
    },
    async (request) => catalogue.getShow(request.params.id),
  );

  app.post(
    '/api/v1/admin/cities',
    {
      config: ADMIN_WRITE,
      schema: { tags: adminTags, summary: 'Add a city', body: CityCreate, response: { 201: City } },
    },
    async (request, reply) => reply.code(201).send(await catalogue.createCity(request.body)),
  );

  app.post(
    '/api/v1/admin/movies',
    {
      config: ADMIN_WRITE,
      schema: { tags: adminTags, summary: 'Add a movie', body: MovieCreate, response: { 201: Movie } },
    },
    async (request, reply) => reply.code(201).send(await catalogue.createMovie(request.body)),
  );

  app.patch(
    '/api/v1/admin/movies/:id',
    {
      config: ADMIN_WRITE,
      schema: {
        tags: adminTags,
        summary: 'Change a movie',
        params: IdParams,
        body: MovieUpdate,
        response: { 200: Movie },
      },
    },
    async (request) => catalogue.updateMovie(request.params.id, request.body),
  );

  app.post(
    '/api/v1/admin/theaters',
    {
      config: ADMIN_WRITE,
      schema: {
        tags: adminTags,
        summary: 'Add a theater with its screens and seat layouts',
        body: TheaterCreate,
        response: { 201: Theater },
      },
    },
    async (request, reply) => reply.code(201).send(await catalogue.createTheater(request.body)),
  );

  app.post(
    '/api/v1/admin/theaters/:id/screens',
    {
      config: ADMIN_WRITE,
      schema: {
        tags: adminTags,
        summary: 'Add a screen with its seat layout',
        params: IdParams,
        body: ScreenCreate,
        response: { 201: Screen },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await catalogue.addScreen(request.params.id, request.body)),
  );

  app.post(
    '/api/v1/admin/shows',
    {
      config: ADMIN_WRITE,
      schema: {
        tags: adminTags,
        summary: 'Schedule a show (its seat inventory is created with it)',
        body: ShowCreate,
        response: { 201: Show },
      },
    },
    async (request, reply) => reply.code(201).send(await catalogue.createShow(request.body)),
  );

  app.patch(
    '/api/v1/admin/shows/:id',
    {
      config: ADMIN_WRITE,
      schema: {
        tags: adminTags,
        summary: 'Mark a show hot (waiting room) or not',
        params: IdParams,
        body: ShowUpdate,
        response: { 200: Show },
      },
    },
    async (request) => catalogue.setHot(request.params.id, request.body.is_hot),
  );
};
