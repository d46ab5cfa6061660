import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { UserTokens } from '../../platform/auth/user-tokens.ts';
import { ADMIN, requireAdminKey } from '../admin.ts';
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

export function bookingsRoutes(
  app: FastifyInstance,
  bookings: BookingsService,
  { adminApiKey, userTokens }: { adminApiKey: string; userTokens: UserTokens },
) {
  app.post(
    '/api/v1/bookings',
    {
      // Keys are scoped by hold, so two customers who happen to pick the same key never collide.
      config: {
        idempotency: {
          scope: 'bookings',
          required: true,
          principal: (request) => (request.body as { hold_id?: unknown } | undefined)?.hold_id?.toString(),
        },
      },
      schema: {
        tags,
        summary: 'Book held seats by paying for them (needs an Idempotency-Key header)',
        description:
          '201 CONFIRMED with `qr_code`; 202 PENDING while the payment gateway has not answered (poll ' +
          'GET /api/v1/bookings/{id}); 402 `payment_declined` (booking FAILED, seats released); ' +
          '410 `hold_expired`. A second successful payment for the same hold is refunded automatically.',
        headers: Type.Object({ 'idempotency-key': Type.String({ minLength: 1, maxLength: 255 }) }),
        body: BookingCreate,
        response: { 201: Booking, 202: Booking },
      },
    },
    async (request, reply) => {
      const { status, booking } = await bookings.book(
        request.body as BookingCreate,
        request.headers['idempotency-key'] as string,
      );
      return reply.code(status).header('location', `/api/v1/bookings/${booking.booking_id}`).send(booking);
    },
  );

  app.get(
    '/api/v1/bookings/:id',
    {
      schema: {
        tags,
        summary: 'A booking (with its QR code once confirmed)',
        params: IdParams,
        response: { 200: Booking },
      },
    },
    async (request) => bookings.get((request.params as { id: string }).id),
  );

  app.get(
    '/api/v1/users/:id/bookings',
    {
      onRequest: userTokens.ownerOnly((request) => (request.params as { id: string }).id.toLowerCase()),
      schema: {
        tags,
        summary: "A user's bookings, newest first (needs that user's token)",
        description: "401 without a valid `Authorization: Bearer <user token>`; another user's token → 404.",
        security: [{ userToken: [] }],
        params: Type.Object({ id: Uuid }),
        response: { 200: BookingList },
      },
    },
    async (request) => ({ bookings: await bookings.forUser((request.params as { id: string }).id) }),
  );

  app.post(
    '/api/v1/bookings/:id/cancel',
    {
      schema: {
        tags,
        summary: 'Cancel a confirmed booking (full refund until the cutoff before the show)',
        params: IdParams,
        body: CancelRequest,
        response: { 200: Booking },
      },
    },
    async (request) =>
      bookings.cancel(
        (request.params as { id: string }).id,
        request.body as { user_id: string; accept_no_refund?: boolean },
      ),
  );

  app.post(
    '/api/v1/shows/:id/cancel',
    {
      // The body is optional (`curl -X POST` with the admin key is enough).
      preValidation: async (request) => {
        request.body ??= {};
      },
      onRequest: requireAdminKey(adminApiKey),
      schema: {
        ...ADMIN,
        summary: 'Cancel a show: every booking is refunded in full and every booker notified',
        params: IdParams,
        body: ShowCancelRequest,
        response: { 200: ShowCancelled },
      },
    },
    async (request) =>
      bookings.cancelShow(
        (request.params as { id: string }).id,
        (request.body as { reason?: string } | undefined)?.reason ?? 'cancelled by the venue',
      ),
  );

  app.get(
    '/api/v1/tickets/:token',
    {
      config: { redactUrl: true },
      schema: {
        tags,
        summary: "Check a ticket's QR code at the door",
        params: Type.Object({ token: Type.String({ maxLength: 200 }) }),
        response: { 200: TicketCheck },
      },
    },
    async (request) => bookings.checkTicket((request.params as { token: string }).token),
  );
}
