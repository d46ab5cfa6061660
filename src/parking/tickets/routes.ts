import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import QRCode from 'qrcode';
import { err } from '../errors.ts';
import { TicketParams } from '../exit/schemas.ts';
import type { Checkout } from '../exit/service.ts';
import { access, tags } from '../http.ts';
import { formatCode } from './codes.ts';

const SVG_TYPE = 'image/svg+xml; charset=utf-8';
const Svg = { description: 'An SVG image', content: { 'image/svg+xml': { schema: { type: 'string' } } } };
const TICKET_CAPABILITY =
  'The ticket id or code is the capability: whoever holds the ticket may call this, without credentials.';

/** QR codes made on the server as SVG: the ticket's code (for the exit scanner) and its payment page (for a phone). */
export const ticketRoutes: FastifyPluginAsyncTypebox<{ checkout: Checkout }> = async (app, { checkout }) => {
  app.get(
    '/api/v1/parking/tickets/:ticketId/qr',
    {
      config: { ...access.public, openapi: { problems: [404] } },
      schema: {
        tags,
        summary: "QR code (SVG) of the ticket's short code, printed on the entry ticket and read at the exit",
        description: `${TICKET_CAPABILITY} A ticket issued before codes existed has none (404).`,
        params: TicketParams,
        response: { 200: Svg },
      },
    },
    async (request, reply) => {
      const { ticket } = await checkout.ticketWithPayments(request.params.ticketId);
      if (!ticket.code)
        throw err('ticket_not_found', 'This ticket was issued before short codes; use its number');
      // A ticket's code never changes: the image may be kept as long as the ticket.
      reply.header('cache-control', 'private, max-age=86400');
      return reply.type(SVG_TYPE).send(await qrSvg(formatCode(ticket.code)));
    },
  );

  app.get(
    '/api/v1/parking/tickets/:ticketId/payment-qr',
    {
      config: { ...access.public, openapi: { problems: [404, 409] } },
      schema: {
        tags,
        summary: "QR code (SVG) of the ticket's payment page, for paying on a phone at the exit panel",
        description: `${TICKET_CAPABILITY} 409 \`no_payment_due\` when no payment is waiting (ask the amount at the exit first, or it is paid).`,
        params: TicketParams,
        response: { 200: Svg },
      },
    },
    async (request, reply) => {
      const { current } = await checkout.ticketWithPayments(request.params.ticketId);
      if (current?.status !== 'PENDING') {
        throw err(
          'no_payment_due',
          'No payment is waiting for this ticket: ask for the amount at the exit first',
        );
      }
      // The payment can be replaced (a new amount after the grace period): never cached.
      reply.header('cache-control', 'no-store');
      return reply.type(SVG_TYPE).send(await qrSvg(absolute(current.paymentUrl, request)));
    },
  );
};

/** A phone needs a full address: a relative payment link is completed from the address in use. */
function absolute(url: string, request: FastifyRequest): string {
  return new URL(url, `${request.protocol}://${request.host}`).toString();
}

function qrSvg(text: string): Promise<string> {
  // Level M survives a smudged or creased print; a margin of 2 modules is enough on a white card.
  return QRCode.toString(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
}
