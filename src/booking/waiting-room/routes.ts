import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RateLimiter } from '../../platform/ratelimit/index.ts';
import { bookingUser, perAddress } from '../caller.ts';
import { IdParams } from '../catalogue/schemas.ts';
import type { BookingSettings } from '../settings.ts';
import type { QueueLive } from './live.ts';
import { QueueQuery, QueueStatus } from './schemas.ts';
import type { WaitingRoomService } from './service.ts';

const tags = ['booking'];

export const waitingRoomRoutes: FastifyPluginAsyncTypebox<{
  waitingRoom: WaitingRoomService;
  live: QueueLive;
  settings: BookingSettings;
  limiter: RateLimiter;
}> = async (app, { waitingRoom, live, settings, limiter }) => {
  // Joins and live streams count against one allowance per client address.
  const joins = perAddress(limiter, settings.queueRate, 'waiting-room requests');

  app.get(
    '/api/v1/shows/:id/queue',
    {
      config: { access: { user: true }, openapi: { rateLimited: true, problems: [403, 404, 409, 410] } },
      onRequest: joins,
      schema: {
        tags,
        summary: "Join a hot show's waiting room (or see where you stand)",
        description:
          'The token decides who joins (a `user_id` naming another user → 403). ' +
          'Returns `{position, estimated_wait}`; once admitted, `admission_token` (valid for 10 minutes) ' +
          'which the hold request needs. 100 people are admitted at a time. Rate-limited per client address (429).',
        params: IdParams,
        querystring: QueueQuery,
        response: { 200: QueueStatus },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return waitingRoom.status(request.params.id, bookingUser(request, request.query.user_id));
    },
  );

  app.get(
    '/api/v1/shows/:id/queue/events',
    {
      config: { access: { user: true }, openapi: { rateLimited: true, problems: [403, 404, 409, 410] } },
      onRequest: joins,
      schema: {
        tags,
        summary: 'Live queue position (Server-Sent Events: `position`, then `admitted` with the token)',
        params: IdParams,
        querystring: QueueQuery,
        response: {
          200: {
            description: 'An event stream; each event carries the same JSON as GET …/queue',
            content: { 'text/event-stream': { schema: { type: 'string' } } },
          },
        },
      },
    },
    async (request, reply) => {
      await live.open(request, reply, request.params.id, bookingUser(request, request.query.user_id));
    },
  );
};
