import { Type } from 'typebox';
import { NEEDS, SPOT_TYPES, VEHICLE_TYPES } from './allocation.ts';

/** Request and response schemas of the parking API (they also make /docs). */
const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);
const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC' });
const Money = Type.Number({ description: 'Amount in the lot currency, two decimals' });
const PanelId = Type.String({
  minLength: 1,
  maxLength: 40,
  description: 'An entry or exit panel of the lot config',
});
export const TicketId = Type.String({ format: 'uuid', description: 'The ticket id printed on the ticket' });

export const Card = Type.Object(
  {
    card_number: Type.String({
      pattern: '^[0-9 ]{12,23}$',
      description: 'Test cards: 4242 4242 4242 4242 (succeeds), 4000 0000 0000 0002 (declined)',
    }),
    exp_month: Type.Integer({ minimum: 1, maximum: 12 }),
    exp_year: Type.Integer({ minimum: 2000, maximum: 2100 }),
    cvc: Type.String({ pattern: '^[0-9]{3,4}$' }),
  },
  {
    additionalProperties: false,
    description: 'Card details (payment_details); only the last four digits are kept',
  },
);

export const EntryBody = Type.Object(
  {
    licensePlate: Type.String({
      minLength: 1,
      maxLength: 20,
      description: 'Normalised: upper case, no spaces, dashes or dots',
    }),
    vehicleType: Type.Enum(VEHICLE_TYPES),
    needs: Type.Optional(
      Type.Array(Type.Enum(NEEDS), {
        maxItems: 2,
        uniqueItems: true,
        description: 'Special spots to offer first',
      }),
    ),
    panelId: Type.Optional(PanelId),
  },
  { additionalProperties: false },
);

export const ExitBody = Type.Object(
  { ticketId: TicketId, payment: Type.Optional(Card), panelId: Type.Optional(PanelId) },
  { additionalProperties: false },
);

export const LostBody = Type.Object(
  {
    licensePlate: EntryBody.properties.licensePlate,
    payment: Type.Optional(Card),
    panelId: Type.Optional(PanelId),
  },
  { additionalProperties: false },
);

export const TicketParams = Type.Object({ ticketId: TicketId });

export const RefundBody = Type.Object(
  {
    reason: Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'Why the money goes back (kept with the payment)',
    }),
  },
  { additionalProperties: false },
);

const PaymentStatus = Type.Enum(['PENDING', 'COMPLETED', 'FAILED', 'REFUNDED']);
const PaymentKind = Type.Enum(['EXIT', 'LOST'], {
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
});

export const TicketWithHistory = Type.Intersect([
  Ticket,
  Type.Object({
    payments: Type.Array(Type.String(), { description: 'Every payment id of the ticket, oldest first' }),
  }),
]);

export const ExitResult = Type.Object({
  ticketId: Type.String(),
  ticketStatus: Type.Enum(['ACTIVE', 'PAID', 'LOST']),
  licensePlate: Type.String(),
  spotId: Type.String(),
  amount: Money,
  currency: Type.String(),
  duration: Type.String({ description: '"<h>h <m>m"' }),
  paymentId: Type.String(),
  paymentUrl: Type.String({ description: 'Hosted payment page' }),
  status: PaymentStatus,
  kind: PaymentKind,
  failureReason: Nullable(Type.String()),
});

const Counts = Type.Object(Object.fromEntries(SPOT_TYPES.map((type) => [type, Type.Integer()])));

export const Availability = Type.Object({
  floors: Type.Array(
    Type.Object({
      floor: Type.Integer(),
      motorcycle: Type.Integer(),
      compact: Type.Integer(),
      large: Type.Integer(),
      handicapped: Type.Integer(),
      electric: Type.Integer(),
    }),
  ),
});

export const Boards = Type.Object({
  lot: Type.Object({ id: Type.String(), name: Type.String() }),
  updatedAt: Timestamp,
  boards: Type.Array(
    Type.Object({
      boardId: Type.String(),
      floor: Type.Integer(),
      name: Type.String(),
      availableSpots: Counts,
      totalSpots: Counts,
    }),
  ),
  total: Type.Object({ availableSpots: Counts, totalSpots: Counts }),
});

export const Lot = Type.Object({
  id: Type.String(),
  name: Type.String(),
  timeZone: Type.String(),
  currency: Type.String(),
  pricing: Type.String({ description: 'The pricing strategy in words' }),
  lostTicketFee: Money,
  entryPanels: Type.Array(Type.Object({ id: Type.String(), name: Type.String() })),
  exitPanels: Type.Array(Type.Object({ id: Type.String(), name: Type.String() })),
  floors: Type.Array(
    Type.Object({
      floor: Type.Integer(),
      name: Type.String(),
      boardId: Type.String(),
      spots: Type.Integer(),
    }),
  ),
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
