import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { access, tags } from '../http.ts';
import { EventStream } from '../schemas.ts';
import type { LiveBoards } from './live.ts';
import { Availability, Boards } from './schemas.ts';
import type { BoardsService } from './service.ts';

/** HTTP only: free spots now, and the boards as a live stream. */
export const boardsRoutes: FastifyPluginAsyncTypebox<{ boards: BoardsService; live: LiveBoards }> = async (
  app,
  { boards, live },
) => {
  app.get(
    '/api/v1/parking/availability',
    {
      config: access.publicRead,
      schema: { tags, summary: 'Free spots per floor and type', response: { 200: Availability } },
    },
    async () => boards.availability(),
  );

  app.get(
    '/api/v1/parking/boards',
    {
      config: access.publicRead,
      schema: {
        tags,
        summary: 'The display boards: free and total spots per floor and type',
        response: { 200: Boards },
      },
    },
    async () => boards.boards(),
  );

  app.get(
    '/api/v1/parking/boards/stream',
    {
      config: access.public,
      schema: {
        tags,
        summary: 'Server-Sent Events: `boards` with the full boards, at once and after every park and unpark',
        response: { 200: EventStream },
      },
    },
    async (request, reply) => live.streamBoards(request, reply),
  );
};
