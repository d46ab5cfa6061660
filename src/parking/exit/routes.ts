import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { CardDetails } from '../../payments/api.ts';
import { platformError } from '../../platform/errors.ts';
import type { LiveBoards } from '../boards/live.ts';
import { access, tags } from '../http.ts';
import { EventStream } from '../schemas.ts';
import { ExitBody, ExitResult, LostBody, RefundBody, TicketParams, TicketWithHistory } from './schemas.ts';
import type { Checkout } from './service.ts';

/** A ticket's id and short code are printed on it: whoever holds the ticket may follow and pay it. */
const TICKET_CAPABILITY =
  'The ticket id or its short code (`ABCD-EFGH`) is the capability: whoever holds the ticket may call this, without credentials. A code that does not exist (or has a typo) answers 404 "No ticket with code …, check the code".';

/** HTTP only: schemas, the service call, the status code. */
export const exitRoutes: FastifyPluginAsyncTypebox<{ checkout: Checkout; live: LiveBoards }> = async (
  app,
  { checkout, live },
) => {
  // Keys are scoped by the proven panel or attendant, not by the ticket in the body: a key sent
  // again for another ticket is 422 rather than a second charge; two operators never collide.
  const paying = {
    idempotency: { scope: 'parking.pay' },
    openapi: { problems: [402, 404, 409, 422] },
  } as const;

  app.post(
    '/api/v1/parking/exit',
    {
      config: { links: 'rebase', ...access.panel, ...paying },
      schema: {
        tags,
        summary:
          'A vehicle leaves: the fee and its payment (paid at once with a card, or later on paymentUrl)',
        description:
          "`ticketId` takes the ticket id or the short code printed on the ticket (a typo: 404 in words). Without `payment` the answer holds the ticket's payment and its hosted `paymentUrl`: PENDING, or FAILED after a declined card (still payable there or here with another card); asking again returns the same payment. With `payment` (card details) the card is charged once: COMPLETED frees the spot and opens the gate; a declined card is a 402 (the driver's message in `detail`: nothing was charged, try another card) and the ticket stays ACTIVE with the same payment payable, so the next card (a new Idempotency-Key) retries that payment rather than making a second one. After the lot's exit grace period an unpaid payment, declined or not, is withdrawn (its page can no longer be paid) and a new one made for the fee due then. Paying needs an `Idempotency-Key` header: the same key and body replay the first answer; the panel's key sent again for another ticket or card → 422 `idempotency_key_reused`, nothing charged.",
        body: ExitBody,
        response: { 200: ExitResult, 202: ExitResult },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const result = await checkout.exit({ ...body, ...payment(request, body.payment) });
      return reply.code(body.payment && result.status === 'PENDING' ? 202 : 200).send(result);
    },
  );

  app.post(
    '/api/v1/parking/tickets/lost',
    {
      // An attendant only: anyone who reads a plate off a car could otherwise withdraw its payment.
      config: { links: 'rebase', ...access.attendant, ...paying },
      schema: {
        tags,
        summary: 'Lost ticket: find the vehicle by plate, mark the ticket LOST, charge the lost-ticket fee',
        description:
          "The fee is the lot's lost-ticket fee or, when more, the fee the stay has reached so far under the lot's pricing. An exit payment still unpaid (waiting, or declined) is withdrawn first: its page can no longer be paid; 409 `payment_pending` while a card is being charged for it. Paying needs an `Idempotency-Key` header; the attendant's key sent again for another plate → 422 `idempotency_key_reused`, nothing changed.",
        body: LostBody,
        response: { 200: ExitResult, 202: ExitResult },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const result = await checkout.reportLost({ ...body, ...payment(request, body.payment) });
      return reply.code(body.payment && result.status === 'PENDING' ? 202 : 200).send(result);
    },
  );

  app.get(
    '/api/v1/parking/tickets/:ticketId',
    {
      config: { links: 'rebase', ...access.public, openapi: { problems: [404] } },
      schema: {
        tags,
        summary: 'A ticket with its current payment',
        description: TICKET_CAPABILITY,
        params: TicketParams,
        response: { 200: TicketWithHistory },
      },
    },
    async (request) => checkout.ticket(request.params.ticketId),
  );

  app.get(
    '/api/v1/parking/tickets/:ticketId/events',
    {
      config: { links: 'rebase', ...access.public, openapi: { problems: [404] } },
      schema: {
        tags,
        summary:
          'Server-Sent Events for one ticket: `ticket` (now), then `gate_open`, `payment_failed`, `payment_refunded`',
        description: TICKET_CAPABILITY,
        params: TicketParams,
        response: { 200: EventStream },
      },
    },
    async (request, reply) =>
      live.streamTicket(await checkout.resolve(request.params.ticketId), request, reply),
  );

  app.post(
    '/api/v1/parking/tickets/:ticketId/refund',
    {
      config: { links: 'rebase', ...access.admin, openapi: { problems: [404, 409] } },
      schema: {
        tags,
        summary: 'Refund the completed payment of a ticket',
        params: TicketParams,
        body: RefundBody,
        response: { 200: ExitResult },
      },
    },
    async (request) => checkout.refund(request.params.ticketId, request.body.reason),
  );
};

/** Card details travel without spaces; paying needs the Idempotency-Key (DESIGN.md). */
function payment(request: FastifyRequest, card: CardDetails | undefined) {
  if (!card) return {};
  const key = request.headers['idempotency-key'];
  if (typeof key !== 'string') {
    throw platformError('validation_failed', {
      detail: 'Paying needs an Idempotency-Key header (any unique string up to 255 characters)',
      extras: { errors: [{ field: 'headers.idempotency-key', message: 'is required when paying' }] },
    });
  }
  return { card: { ...card, card_number: card.card_number.replace(/ /g, '') } };
}
