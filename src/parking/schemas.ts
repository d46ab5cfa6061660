import { Type } from 'typebox';
import { SPOT_TYPES, VEHICLE_TYPES } from './lot/allocation.ts';

/** Schemas the parking features share (each feature's own are in its schemas.ts; they also make /docs). */
export const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) =>
  Type.Union([schema, Type.Null()]);
export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC' });
export const Money = Type.Number({ description: 'Amount in the lot currency, two decimals' });
export const PanelId = Type.String({
  minLength: 1,
  maxLength: 40,
  description: 'An entry or exit panel of the lot config',
});
export const TicketId = Type.String({ format: 'uuid', description: 'The ticket id printed on the ticket' });
/**
 * What a driver or a scanner gives: the ticket id or its short code. Not a format check: a typo
 * answers 404 "No ticket with code …, check the code", which a panel can show as it is.
 */
export const TicketRef = Type.String({
  minLength: 1,
  maxLength: 64,
  description:
    'The ticket id (UUID) or the short code printed on the ticket (`ABCD-EFGH`; any case, dash and spaces optional)',
});
export const TicketCode = Type.Union(
  [Type.String({ pattern: '^[2-9A-HJ-NP-Y]{4}-[2-9A-HJ-NP-Y]{4}$' }), Type.Null()],
  {
    description: 'The short code printed on the ticket (null for tickets issued before codes existed)',
  },
);

export const PaymentStatus = Type.Enum(['PENDING', 'COMPLETED', 'FAILED', 'REFUNDED'], {
  description:
    'FAILED with `failureReason`: a card was declined, and the payment stays payable with another card (at the panel or on its page) until the exit grace period or a lost ticket withdraws it (`failureReason: canceled`, final)',
});
export const PaymentKind = Type.Enum(['EXIT', 'LOST'], {
  description: 'EXIT: the fee of the stay; LOST: the lost-ticket fee',
});

const Payment = Type.Object({
  paymentId: Type.String(),
  kind: PaymentKind,
  amount: Money,
  currency: Type.String(),
  duration: Type.String(),
  status: PaymentStatus,
  paymentUrl: Type.String(),
  failureReason: Nullable(Type.String()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const Ticket = Type.Object({
  ticketId: Type.String(),
  code: TicketCode,
  licensePlate: Type.String(),
  vehicleType: Type.Enum(VEHICLE_TYPES),
  spotId: Type.String(),
  spotType: Type.Enum(SPOT_TYPES),
  floor: Type.Integer(),
  status: Type.Enum(['ACTIVE', 'PAID', 'LOST']),
  entryTime: Timestamp,
  exitTime: Nullable(Timestamp),
  lostAt: Nullable(Timestamp),
  paidAt: Nullable(Timestamp),
  payment: Type.Union([Payment, Type.Null()]),
  reservationId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
    description: 'The reservation the vehicle arrived on (its window is priced at the exit), or null',
  }),
});

/** Documents an SSE endpoint (and keeps it out of the fuzzer, whose requests would never end). */
export const EventStream = {
  description: 'Server-Sent Events',
  content: {
    'text/event-stream': {
      schema: Type.String({ description: '`event: <name>` and `data: <JSON>` blocks' }),
    },
  },
};
