import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { bookingUser, ownerScope } from '../caller.ts';
import { IdParams, Uuid } from '../catalogue/schemas.ts';
import {
  Booking,
  BookingCreate,
  BookingList,
  CancelRequest,
  ShowCancelled,
  ShowCancelRequest,
  TicketCheck,
} from './schemas.ts';
import type { BookingsService } from './service.ts';

const tags = ['booking'];
const adminTags = ['booking admin'];

export const bookingsRoutes: FastifyPluginAsyncTypebox<{ bookings: BookingsService }> = async (
  app,
  { bookings },
) => {
  app.post(
    '/api/v1/bookings',
    {
      // The platform scopes keys by the caller (the user), so two customers who happen to pick
      // the same key never collide, and one user's key names one request.
      config: {
        links: 'rebase',
        access: { user: true },
        idempotency: { scope: 'bookings', required: true },
        openapi: { problems: [402, 403, 404, 409, 410], headers: { 201: ['Location'], 202: ['Location'] } },
      },
      schema: {
        tags,
        summary: 'Book held seats by paying for them (needs an Idempotency-Key header)',
        description:
          "The hold must be the token's user's (another user's hold → 404). " +
          '201 CONFIRMED with `qr_code`; 202 PENDING while the payment gateway has not answered (poll ' +
          'GET /api/v1/bookings/{id}); 402 `payment_declined` (the seats stay held until `hold_expires_at`: ' +
          'pay again with another card and a new Idempotency-Key; no FAILED booking, no notification); ' +
          '410 `hold_expired`. A second successful payment for the same hold is refunded automatically. ' +
          "The Idempotency-Key is the user's (not the hold's): sent again with the same body it replays the first " +
          'answer; with another body (another hold included) → 422 `idempotency_key_reused`, nothing booked or ' +
          "charged. Another user's same key is their own request.",
        headers: Type.Object({ 'idempotency-key': Type.String({ minLength: 1, maxLength: 255 }) }),
        body: BookingCreate,
        response: { 201: Booking, 202: Booking },
      },
    },
    async (request, reply) => {
      const { status, booking } = await bookings.book(
        request.body,
        request.headers['idempotency-key'],
        bookingUser(request),
      );
      return reply.code(status).header('location', `/api/v1/bookings/${booking.booking_id}`).send(booking);
    },
  );

  app.get(
    '/api/v1/bookings/:id',
    {
      config: {
        links: 'rebase',
        access: { user: true, service: 'booking:read', admin: true },
        openapi: { problems: [404] },
      },
      schema: {
        tags,
        summary: 'A booking (with its ticket QR code once confirmed, for its user)',
        description:
          "Its user sees all of it; a service or the admin see it without the ticket (`ticket_token` and `qr_code` null). Another user's booking → 404.",
        params: IdParams,
        response: { 200: Booking },
      },
    },
    async (request) => bookings.get(request.params.id, ownerScope(request)),
  );

  app.get(
    '/api/v1/users/:id/bookings',
    {
      config: { links: 'rebase', access: { user: { param: 'id' }, service: 'booking:read', admin: true } },
      schema: {
        tags,
        summary: "A user's bookings, newest first",
        description:
          "With that user's own token (another user's token → 404), or by a service or the admin (without tickets).",
        params: Type.Object({ id: Uuid }),
        response: { 200: BookingList },
      },
    },
    async (request) => ({
      bookings: await bookings.forUser(request.params.id, {
        ticket: request.caller.kind === 'user',
      }),
    }),
  );

  app.post(
    '/api/v1/bookings/:id/cancel',
    {
      config: {
        links: 'rebase',
        access: { user: true, admin: true },
        openapi: { problems: [403, 404, 409] },
      },
      schema: {
        tags,
        summary: 'Cancel a confirmed booking (full refund until the cutoff before the show)',
        description:
          "The token's user cancels their own booking (another user's → 404; a body `user_id` naming someone else → 403); the admin may cancel any.",
        params: IdParams,
        body: CancelRequest,
        response: { 200: Booking },
      },
    },
    async (request) => {
      const body = request.body;
      const byAdmin = request.caller.kind === 'admin';
      // The admin acts on any booking; a `user_id` they send must still be the booking's.
      const owner = byAdmin ? body.user_id?.toLowerCase() : bookingUser(request, body.user_id);
      return bookings.cancel(request.params.id, {
        owner,
        byAdmin,
        accept_no_refund: body.accept_no_refund,
      });
    },
  );

  app.post(
    '/api/v1/shows/:id/cancel',
    {
      config: { links: 'rebase', access: { admin: true }, openapi: { problems: [404, 409] } },
      // The body is optional (`curl -X POST` with the admin key is enough).
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        tags: adminTags,
        summary: 'Cancel a show: every booking is refunded in full and every booker notified',
        params: IdParams,
        body: ShowCancelRequest,
        response: { 200: ShowCancelled },
      },
    },
    async (request) =>
      bookings.cancelShow(request.params.id, request.body.reason ?? 'cancelled by the venue'),
  );

  app.get(
    '/api/v1/tickets/:token',
    {
      config: {
        access: { operator: 'booking:door', admin: true },
        redactUrl: true,
        openapi: { problems: [404] },
      },
      schema: {
        tags,
        summary: "Check a ticket's QR code at the door",
        params: Type.Object({ token: Type.String({ maxLength: 200 }) }),
        response: { 200: TicketCheck },
      },
    },
    async (request) => bookings.checkTicket(request.params.token),
  );

  // The same check with the token in the body: a signed ticket is a bearer credential, and URLs
  // end up in proxy, browser and access logs (the GET above is kept for scanners already
  // deployed, with its token redacted from our own log lines).
  app.post(
    '/api/v1/tickets/check',
    {
      config: { access: { operator: 'booking:door', admin: true }, openapi: { problems: [404] } },
      schema: {
        tags,
        summary: "Check a ticket's QR code at the door (the token in the body, out of every URL log)",
        body: Type.Object(
          { token: Type.String({ minLength: 1, maxLength: 200 }) },
          { additionalProperties: false },
        ),
        response: { 200: TicketCheck },
      },
    },
    async (request) => bookings.checkTicket(request.body.token),
  );
};
