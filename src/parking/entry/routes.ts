import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { access, tags } from '../http.ts';
import { Ticket } from '../schemas.ts';
import { EntryBody } from './schemas.ts';
import type { EntryService } from './service.ts';

/** HTTP only: schemas, the service call, the status code. */
export const entryRoutes: FastifyPluginAsyncTypebox<{ entry: EntryService }> = async (app, { entry }) => {
  app.post(
    '/api/v1/parking/entry',
    {
      config: { ...access.panel, openapi: { problems: [409, 422] } },
      schema: {
        tags,
        summary: 'A vehicle enters: assign the first fitting free spot and issue a ticket',
        description:
          'Floors are searched in the order of the lot config; on a floor the smallest fitting spot type is used, HANDICAPPED and ELECTRIC last unless asked for in `needs` (then those come first, lot-wide). 409 `parking_full` issues no ticket; 409 `vehicle_already_parked` when the plate is inside.',
        body: EntryBody,
        response: { 201: Ticket },
      },
    },
    async (request, reply) => reply.code(201).send(await entry.enter(request.body)),
  );
};
