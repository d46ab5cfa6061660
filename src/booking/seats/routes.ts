import type { FastifyInstance } from 'fastify';
import { ADMIN, requireAdminKey } from '../admin.ts';
import { Hold, type HoldRequest, holdRequest, IdParams, Integrity, SeatMap } from './schemas.ts';
import type { SeatsService } from './service.ts';

const tags = ['booking'];

export function seatsRoutes(
  app: FastifyInstance,
  seats: SeatsService,
  options: { maxSeats: number; adminApiKey: string },
) {
  app.get(
    '/api/v1/shows/:id/seats',
    {
      schema: {
        tags,
        summary: 'Seats of a show with status and price (held seats show as BOOKED)',
        params: IdParams,
        response: { 200: SeatMap },
      },
    },
    async (request) => seats.seatMap((request.params as { id: string }).id),
  );

  app.post(
    '/api/v1/shows/:id/hold',
    {
      schema: {
        tags,
        summary: `Hold up to ${options.maxSeats} seats for 10 minutes, all or nothing`,
        description:
          'Any seat taken → 409 `seats_unavailable` with `seats` listing them, and nothing is held. ' +
          'Hot shows need the admission token from the waiting room (body `admission_token` or header `x-admission-token`).',
        params: IdParams,
        body: holdRequest(options.maxSeats),
        response: { 201: Hold },
      },
    },
    async (request, reply) => {
      const body = request.body as HoldRequest;
      const header = request.headers['x-admission-token'];
      const admission_token = body.admission_token ?? (typeof header === 'string' ? header : undefined);
      const hold = await seats.hold((request.params as { id: string }).id, { ...body, admission_token });
      return reply.code(201).header('location', `/api/v1/holds/${hold.hold_id}`).send(hold);
    },
  );

  app.get(
    '/api/v1/holds/:id',
    {
      schema: {
        tags,
        summary: 'A hold and whether it still holds',
        params: IdParams,
        response: { 200: Hold },
      },
    },
    async (request) => seats.getHold((request.params as { id: string }).id),
  );

  app.delete(
    '/api/v1/holds/:id',
    {
      schema: {
        tags,
        summary: 'Release a hold before paying (its seats are free at once)',
        params: IdParams,
        response: { 200: Hold },
      },
    },
    async (request) => seats.releaseHold((request.params as { id: string }).id),
  );

  app.get(
    '/api/v1/admin/shows/:id/integrity',
    {
      onRequest: requireAdminKey(options.adminApiKey),
      schema: {
        ...ADMIN,
        summary: 'Audit a show: seats claimed twice (must be 0) and holds missing seats (must be 0)',
        params: IdParams,
        response: { 200: Integrity },
      },
    },
    async (request) => seats.integrity((request.params as { id: string }).id),
  );
}
