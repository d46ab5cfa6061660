import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RateLimiter } from '../../platform/ratelimit/index.ts';
import { bookingUser, ownerScope, perAddress } from '../caller.ts';
import type { BookingSettings } from '../settings.ts';
import type { SeatsLive } from './live.ts';
import {
  EventStream,
  Hold,
  HoldList,
  HoldListQuery,
  holdRequest,
  IdParams,
  Integrity,
  SeatMap,
} from './schemas.ts';
import type { SeatsService } from './service.ts';

const tags = ['booking'];

export const seatsRoutes: FastifyPluginAsyncTypebox<{
  seats: SeatsService;
  live: SeatsLive;
  settings: BookingSettings;
  limiter: RateLimiter;
}> = async (app, { seats, live, settings, limiter }) => {
  app.get(
    '/api/v1/shows/:id/seats',
    {
      config: { access: { public: true }, cache: 'revalidate', openapi: { problems: [404] } },
      schema: {
        tags,
        summary: 'Seats of a show with status and price (held seats show as BOOKED)',
        params: IdParams,
        response: { 200: SeatMap },
      },
    },
    async (request) => seats.seatMap(request.params.id),
  );

  app.get(
    '/api/v1/shows/:id/seats/events',
    {
      config: { access: { public: true }, openapi: { problems: [404] } },
      schema: {
        tags,
        summary:
          'Server-Sent Events: `seats` with the seat map at once and after every hold, booking and release',
        description:
          'The same body as GET /api/v1/shows/{id}/seats (held seats show as BOOKED, never whose), pushed ' +
          'whichever process made the change, so a seat map turns seats taken while someone looks at it.',
        params: IdParams,
        response: { 200: EventStream },
      },
    },
    async (request, reply) => live.open(request, reply, request.params.id),
  );

  app.post(
    '/api/v1/shows/:id/hold',
    {
      config: {
        access: { user: true },
        openapi: { rateLimited: true, problems: [403, 404, 409, 410, 422], headers: { 201: ['Location'] } },
      },
      onRequest: perAddress(limiter, settings.holdRate, 'holds'),
      schema: {
        tags,
        summary: `Hold up to ${settings.maxSeatsPerHold} seats for 10 minutes, all or nothing`,
        description:
          'The token decides the user (a body `user_id` naming another user → 403). ' +
          'Any seat taken → 409 `seats_unavailable` with `seats` listing them, and nothing is held. ' +
          `A user holds at most ${settings.holdsPerUserShow} live hold(s) per show and ${settings.holdsPerUser} in all: ` +
          'past either, 409 `hold_limit` with `hold_ids` (book or release one first). ' +
          'Hot shows need the admission token from the waiting room (body `admission_token` or header `x-admission-token`). ' +
          'Holds per client address are rate-limited (429).',
        params: IdParams,
        body: holdRequest(settings.maxSeatsPerHold),
        response: { 201: Hold },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const userId = bookingUser(request, body.user_id);
      const header = request.headers['x-admission-token'];
      const admission_token = body.admission_token ?? (typeof header === 'string' ? header : undefined);
      const hold = await seats.hold(request.params.id, userId, {
        ...body,
        admission_token,
      });
      return reply.code(201).header('location', `/api/v1/holds/${hold.hold_id}`).send(hold);
    },
  );

  app.get(
    '/api/v1/holds',
    {
      config: { access: { user: true }, openapi: { problems: [] } },
      schema: {
        tags,
        summary: "The caller's live holds (of one show with `show_id`)",
        description:
          "Holds of the token's user that still hold seats (HELD, not past `expires_at`), oldest first: " +
          'a reloaded seat map resumes its hold from here, My bookings lists them with their countdown.',
        querystring: HoldListQuery,
        response: { 200: HoldList },
      },
    },
    async (request) => ({ holds: await seats.liveHolds(bookingUser(request), request.query.show_id) }),
  );

  app.get(
    '/api/v1/holds/:id',
    {
      config: { access: { user: true, admin: true }, openapi: { problems: [404] } },
      schema: {
        tags,
        summary: 'A hold and whether it still holds',
        description: "Another user's hold → 404.",
        params: IdParams,
        response: { 200: Hold },
      },
    },
    async (request) => seats.getHold(request.params.id, ownerScope(request)),
  );

  app.delete(
    '/api/v1/holds/:id',
    {
      config: { access: { user: true, admin: true }, openapi: { problems: [404] } },
      schema: {
        tags,
        summary: 'Release a hold before paying (its seats are free at once)',
        description: "Another user's hold → 404.",
        params: IdParams,
        response: { 200: Hold },
      },
    },
    async (request) => seats.releaseHold(request.params.id, ownerScope(request)),
  );

  app.get(
    '/api/v1/admin/shows/:id/integrity',
    {
      config: { access: { admin: true }, openapi: { problems: [404] } },
      schema: {
        tags: ['booking admin'],
        summary: 'Audit a show: seats claimed twice (must be 0) and holds missing seats (must be 0)',
        params: IdParams,
        response: { 200: Integrity },
      },
    },
    async (request) => seats.integrity(request.params.id),
  );
};
