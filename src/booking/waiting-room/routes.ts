import type { FastifyInstance } from 'fastify';
import { IdParams } from '../catalogue/schemas.ts';
import type { createQueueLive } from './live.ts';
import { QueueQuery, QueueStatus } from './schemas.ts';
import type { WaitingRoomService } from './service.ts';

const tags = ['booking'];

export function waitingRoomRoutes(
  app: FastifyInstance,
  waitingRoom: WaitingRoomService,
  live: ReturnType<typeof createQueueLive>,
) {
  app.get(
    '/api/v1/shows/:id/queue',
    {
      schema: {
        tags,
        summary: "Join a hot show's waiting room (or see where you stand)",
        description:
          'Returns `{position, estimated_wait}`; once admitted, `admission_token` (valid for 10 minutes) ' +
          'which the hold request needs. 100 people are admitted at a time.',
        params: IdParams,
        querystring: QueueQuery,
        response: { 200: QueueStatus },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return waitingRoom.status(
        (request.params as { id: string }).id,
        (request.query as { user_id: string }).user_id,
      );
    },
  );

  app.get(
    '/api/v1/shows/:id/queue/events',
    {
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
      await live.open(
        request,
        reply,
        (request.params as { id: string }).id,
        (request.query as { user_id: string }).user_id,
      );
    },
  );
}
