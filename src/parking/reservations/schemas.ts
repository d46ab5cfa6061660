import { Type } from 'typebox';
import { SPOT_TYPES, VEHICLE_TYPES } from '../lot/allocation.ts';
import { Money, Nullable, Timestamp } from '../schemas.ts';

const Instant = Type.String({
  format: 'date-time',
  description:
    "ISO 8601 with its offset (`2026-01-05T09:00:00-05:00` or `…Z`); the lot's zone is in `GET /lot`",
});

export const ReservationBody = Type.Object(
  {
    licensePlate: Type.String({
      minLength: 1,
      maxLength: 20,
      description: 'The plate the entry recognises the reservation by; normalised like at the entry',
    }),
    vehicleType: Type.Enum(VEHICLE_TYPES),
    spotType: Type.Enum(SPOT_TYPES, { description: 'Must fit the vehicle (a bus: LARGE only)' }),
    startsAt: Instant,
    endsAt: Instant,
  },
  { additionalProperties: false },
);

export const ReservationParams = Type.Object({ id: Type.String({ format: 'uuid' }) });

export const AvailabilityQuery = Type.Object(
  {
    spotType: Type.Enum(SPOT_TYPES),
    startsAt: Instant,
    endsAt: Instant,
    vehicleType: Type.Optional(
      Type.Enum(VEHICLE_TYPES, { description: 'With it, the answer carries the quote' }),
    ),
  },
  { additionalProperties: false },
);

const Quote = Type.Object({
  amount: Money,
  currency: Type.String(),
  rule: Type.String({ description: "The lot's pricing rule over the reserved window, in words" }),
});

const Local = Type.String({
  description: "On the lot's wall clock with its zone: `Jan 5, 2026, 9:00 AM EST`",
});

export const Reservation = Type.Object({
  reservationId: Type.String({ format: 'uuid' }),
  status: Type.Enum(['BOOKED', 'HELD', 'USED', 'NO_SHOW', 'CANCELLED'], {
    description:
      'BOOKED: no spot held yet; HELD: a spot kept for it (`spotId`); USED: the vehicle entered (`ticketId`); NO_SHOW: not there by `holdUntil`; CANCELLED',
  }),
  licensePlate: Type.String(),
  vehicleType: Type.Enum(VEHICLE_TYPES),
  spotType: Type.Enum(SPOT_TYPES),
  startsAt: Timestamp,
  endsAt: Timestamp,
  holdUntil: { ...Timestamp, description: 'The start plus the grace period: after it, a no-show' },
  timeZone: Type.String({ description: "The lot's IANA zone" }),
  local: Type.Object({ startsAt: Local, endsAt: Local, holdUntil: Local }),
  quote: { ...Quote, description: 'The price of the window, paid at the exit (nothing is taken now)' },
  spotId: Nullable(Type.String({ description: 'The held spot (HELD, USED)' })),
  floor: Type.Union([Type.Integer(), Type.Null()]),
  ticketId: Nullable(Type.String({ format: 'uuid', description: 'The ticket of the entry that used it' })),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const ReservationList = Type.Object({ reservations: Type.Array(Reservation) });

export const ReservationAvailability = Type.Object({
  spotType: Type.Enum(SPOT_TYPES),
  startsAt: Timestamp,
  endsAt: Timestamp,
  limit: Type.Integer({ description: 'Reservations of this type the lot takes at any one instant' }),
  available: Type.Integer({ description: 'How many more can be booked for this whole window' }),
  quote: Type.Union([Quote, Type.Null()]),
});
