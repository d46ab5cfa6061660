import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { access, callerUser, tags } from '../http.ts';
import {
  AvailabilityQuery,
  Reservation,
  ReservationAvailability,
  ReservationBody,
  ReservationList,
  ReservationParams,
} from './schemas.ts';
import { MIN_RESERVATION_MINUTES, type ReservationsService } from './service.ts';

const RULES =
  `The window must start in the future, end after its start, last at least ${MIN_RESERVATION_MINUTES} minutes and start within the lot's ` +
  '`maxDaysAhead` (else 422 `invalid_reservation_window`, its `errors` naming the field); the spot type must fit the vehicle (422 `needs_not_possible`). ' +
  'A lot without a `reservations` section answers 409 `reservations_closed`.';

/** HTTP only: reservations of the caller (a user token); availability is public. */
export const reservationRoutes: FastifyPluginAsyncTypebox<{ reservations: ReservationsService }> = async (
  app,
  { reservations },
) => {
  app.post(
    '/api/v1/parking/reservations',
    {
      config: {
        ...access.user,
        idempotency: { scope: 'parking.reservations' },
        openapi: { problems: [409, 422], headers: { 201: ['Location'] } },
      },
      schema: {
        tags,
        summary: 'Reserve a spot type for a time window ahead',
        description:
          `${RULES} At most \`perUser\` live reservations per user (409 \`too_many_reservations\`), one live reservation per plate at a time (409 \`reservation_overlaps\`), ` +
          'and never more live reservations of a type at any instant than the lot takes (409 `no_reservable_spot`). ' +
          'Starting within `holdAheadMinutes`, a spot is held at once (HELD), or nothing is booked (409 `no_reservable_spot`). ' +
          'The quote is the lot pricing over the window; nothing is charged now, the exit pays the reserved window at least.',
        body: ReservationBody,
        response: { 201: Reservation },
      },
    },
    async (request, reply) => {
      const booked = await reservations.book(callerUser(request), request.body);
      return reply
        .code(201)
        .header('location', `/api/v1/parking/reservations/${booked.reservationId}`)
        .send(booked);
    },
  );

  app.get(
    '/api/v1/parking/reservations',
    {
      config: { ...access.user, openapi: { problems: [] } },
      schema: {
        tags,
        summary: "The caller's reservations, the latest start first (50 at most)",
        response: { 200: ReservationList },
      },
    },
    async (request) => reservations.mine(callerUser(request)),
  );

  app.get(
    '/api/v1/parking/reservations/availability',
    {
      config: { ...access.public, openapi: { problems: [409, 422] } },
      schema: {
        tags,
        summary: 'How many more reservations of a spot type a window takes, and its quote',
        description: `${RULES} With \`vehicleType\`, the answer carries the price of the window.`,
        querystring: AvailabilityQuery,
        response: { 200: ReservationAvailability },
      },
    },
    async (request) => reservations.availability(request.query),
  );

  app.get(
    '/api/v1/parking/reservations/:id',
    {
      config: { ...access.user, openapi: { problems: [404] } },
      schema: {
        tags,
        summary: 'One of the caller’s reservations',
        description: "Another user's reservation → 404 `reservation_not_found`.",
        params: ReservationParams,
        response: { 200: Reservation },
      },
    },
    async (request) => reservations.reservation(callerUser(request), request.params.id),
  );

  app.delete(
    '/api/v1/parking/reservations/:id',
    {
      config: { ...access.user, openapi: { problems: [404, 409] } },
      schema: {
        tags,
        summary: 'Cancel a reservation before arrival (its held spot is free at once)',
        description:
          "BOOKED or HELD → CANCELLED; again → the same answer. Used, a no-show → 409 `reservation_not_cancellable`. Another user's → 404.",
        params: ReservationParams,
        response: { 200: Reservation },
      },
    },
    async (request) => reservations.cancel(callerUser(request), request.params.id),
  );
};
