import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { TicketParams } from '../exit/schemas.ts';
import type { Checkout } from '../exit/service.ts';
import { access, tags } from '../http.ts';
import { Receipt } from './schemas.ts';

/** The receipt of a paid stay as JSON; the printable page is `/parking/receipts/{ticket}` (pages/routes.ts). */
export const receiptRoutes: FastifyPluginAsyncTypebox<{ checkout: Checkout }> = async (app, { checkout }) => {
  app.get(
    '/api/v1/parking/tickets/:ticketId/receipt',
    {
      config: { ...access.public, openapi: { problems: [404, 409] } },
      schema: {
        tags,
        summary:
          'The receipt of a paid ticket: entry and exit times in the lot zone, duration, the pricing rule applied, the amount',
        description:
          'The ticket id or its short code is the capability (whoever holds the ticket, as for its status). 409 `receipt_not_ready` until the ticket is paid. The printable page is `/parking/receipts/{ticketId}`.',
        params: TicketParams,
        response: { 200: Receipt },
      },
    },
    async (request) => checkout.receipt(request.params.ticketId),
  );
};
