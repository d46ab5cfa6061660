import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { Clock } from '../../platform/clock.ts';
import { AppError } from '../../platform/errors.ts';
import { serveStatic } from '../../platform/pages/index.ts';
import type { CatalogueService } from '../catalogue/service.ts';
import { toShow } from '../catalogue/shapes.ts';
import type { SearchQuery } from '../search/schemas.ts';
import type { SearchService } from '../search/service.ts';
import type { BookingSettings } from '../settings.ts';
import { localDate } from '../time.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const STYLES = ['/static/booking/booking.css'];
const SORTS: readonly string[] = ['relevance', 'rating', 'release_date'] satisfies SearchQuery['sort'][];
// Guest pages: anyone may open them; what is a user's own (holds, bookings, tickets) their
// scripts read with the user's token.
const access = { access: { public: true as const } };
// Pages judge their parameters themselves (a bad one is ignored or shows a "not found" page):
// the schemas only name them, as single strings.
const IdParams = Type.Object({ id: Type.String() });
const PageQuery = Type.Object({
  q: Type.Optional(Type.String()),
  city: Type.Optional(Type.String()),
  date: Type.Optional(Type.String()),
  genre: Type.Optional(Type.String()),
  language: Type.Optional(Type.String()),
  sort: Type.Optional(Type.String()),
  page: Type.Optional(Type.String()),
});
const page = { config: access, schema: { hide: true } };
const idPage = { config: access, schema: { hide: true, params: IdParams } };
const searchPage = { config: access, schema: { hide: true, querystring: PageQuery } };
const moviePage = { config: access, schema: { hide: true, params: IdParams, querystring: PageQuery } };

/** The booking pages: server-rendered, with small client modules for the interactive parts. */
export const pageRoutes: FastifyPluginAsyncTypebox<{
  catalogue: CatalogueService;
  search: SearchService;
  settings: BookingSettings;
  clock: Clock;
}> = async (app, { catalogue, search, settings, clock }) => {
  serveStatic(app, 'booking', new URL('./static/', import.meta.url));

  const notFound = (reply: FastifyReply, what: string) =>
    reply.code(404).page('/platform/pages/message', {
      title: 'Not found',
      message: `No such ${what}.`,
      tone: 'bad',
      link: { href: '/movies', title: 'Find a movie' },
      styles: STYLES,
    });

  app.get('/movies', searchPage, async (request, reply) => {
    const raw = request.query;
    const query: SearchQuery = {
      q: text(raw.q, 100),
      city: text(raw.city, 100),
      date: raw.date && DATE.test(raw.date) ? raw.date : undefined,
      genre: text(raw.genre, 30),
      language: text(raw.language, 50),
      sort: isSort(raw.sort) ? raw.sort : undefined,
      page: Math.min(1000, Math.max(1, Number.parseInt(raw.page ?? '1', 10) || 1)),
      page_size: 12,
    };
    const [cities, facets] = await Promise.all([catalogue.listCities(), catalogue.facets()]);
    if (query.city && !cities.some((city) => city.city_id === query.city || city.name === query.city)) {
      query.city = undefined;
    }
    const results = await search.search(query);
    const pages = Math.max(1, Math.ceil(results.total / 12));
    return reply.page('/booking/pages/search', {
      title: 'Movies',
      query,
      cities,
      facets,
      results,
      pages,
      pageLink: (n: number) =>
        `/movies?${new URLSearchParams(clean({ ...raw, page: String(n) })).toString()}`,
      styles: STYLES,
      scripts: ['/static/booking/search.js'],
    });
  });

  app.get('/movies/:id', moviePage, async (request, reply) => {
    const { id } = request.params;
    if (!UUID.test(id)) return notFound(reply, 'movie');
    const raw = request.query;
    const movie = await catalogue.getMovie(id).catch(unlessNotFound);
    if (!movie) return notFound(reply, 'movie');
    const cities = await catalogue.listCities();
    const city = cities.find((entry) => entry.city_id === raw.city || entry.name === raw.city) ?? cities[0];
    const today = localDate(clock.now(), city?.timezone ?? 'UTC');
    const date = raw.date && DATE.test(raw.date) ? raw.date : undefined;
    const listing = await catalogue.movieShows(id, { city: city?.city_id, date });
    return reply.page('/booking/pages/movie', {
      title: movie.title,
      movie,
      cities,
      city,
      date,
      today,
      listing,
      styles: STYLES,
    });
  });

  app.get('/shows/:id', idPage, async (request, reply) => {
    const { id } = request.params;
    if (!UUID.test(id)) return notFound(reply, 'show');
    const info = await catalogue.showInfo(id).catch(unlessNotFound);
    if (!info) return notFound(reply, 'show');
    return reply.page('/booking/pages/seats', {
      title: `${info.movie_title} · seats`,
      show: toShow(info),
      holdMinutes: settings.holdMs / 60_000,
      currency: settings.currency,
      maxSeats: settings.maxSeatsPerHold,
      styles: STYLES,
      scripts: ['/static/booking/seatmap.js'],
    });
  });

  app.get('/shows/:id/queue', idPage, async (request, reply) => {
    const { id } = request.params;
    if (!UUID.test(id)) return notFound(reply, 'show');
    const info = await catalogue.showInfo(id).catch(unlessNotFound);
    if (!info) return notFound(reply, 'show');
    return reply.page('/booking/pages/queue', {
      title: `${info.movie_title} · waiting room`,
      show: toShow(info),
      capacity: settings.queueCapacity,
      admissionMinutes: settings.admissionMs / 60_000,
      styles: STYLES,
      scripts: ['/static/booking/queue.js'],
    });
  });

  // A shell: the booking is its user's, so booking.js reads it with the user's token.
  app.get('/bookings/:id', idPage, async (request, reply) => {
    const { id } = request.params;
    if (!UUID.test(id)) return notFound(reply, 'booking');
    return reply.header('cache-control', 'no-store').page('/booking/pages/booking', {
      title: 'Booking',
      bookingId: id.toLowerCase(),
      cutoffHours: settings.refundCutoffMs / 3_600_000,
      styles: STYLES,
      scripts: ['/static/booking/booking.js'],
    });
  });

  app.get('/my-bookings', page, async (_request, reply) =>
    reply.page('/booking/pages/mine', {
      title: 'My bookings',
      styles: STYLES,
      scripts: ['/static/booking/mine.js'],
    }),
  );
};

function isSort(sort: string | undefined): sort is NonNullable<SearchQuery['sort']> {
  return SORTS.includes(sort ?? '');
}

/** A 404 from the service means "no such thing" (a page that says so); anything else is an error. */
function unlessNotFound(error: unknown): undefined {
  if (error instanceof AppError && error.status === 404) return undefined;
  throw error;
}

function text(value: string | undefined, max: number): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed.slice(0, max) : undefined;
}

function clean(query: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(query).filter((entry): entry is [string, string] => !!entry[1]));
}
