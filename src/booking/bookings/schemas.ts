import { type Static, Type } from 'typebox';
import { Timestamp, Uuid } from '../catalogue/schemas.ts';

export const CardDetailsSchema = Type.Object(
  {
    card_number: Type.String({
      minLength: 12,
      maxLength: 23,
      description: 'Test cards: 4242 4242 4242 4242 succeeds',
    }),
    exp_month: Type.Integer({ minimum: 1, maximum: 12 }),
    exp_year: Type.Integer({ minimum: 0, maximum: 9999 }),
    cvc: Type.String({ pattern: '^[0-9]{3,4}$' }),
  },
  { additionalProperties: false },
);

export const BookingCreate = Type.Object(
  {
    hold_id: Uuid,
    payment_method: Type.Literal('CARD'),
    payment_details: CardDetailsSchema,
    contact: Type.Optional(
      Type.Object(
        {
          email: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
          phone: Type.Optional(Type.String({ pattern: '^\\+[1-9][0-9]{6,14}$', description: 'E.164' })),
        },
        { additionalProperties: false, description: 'Where the confirmation and reminders go' },
      ),
    ),
  },
  { additionalProperties: false },
);
export type BookingCreate = Static<typeof BookingCreate>;

export const BookingStatusSchema = Type.Enum(['PENDING', 'CONFIRMED', 'FAILED', 'CANCELLED']);

export const Booking = Type.Object({
  booking_id: Uuid,
  status: BookingStatusSchema,
  hold_id: Uuid,
  user_id: Uuid,
  seats: Type.Array(Type.String()),
  show: Type.Object({
    show_id: Uuid,
    movie_id: Uuid,
    movie_title: Type.String(),
    theater_name: Type.String(),
    city: Type.String(),
    screen_number: Type.Integer(),
    screen_type: Type.String(),
    show_time: Timestamp,
    end_time: Timestamp,
    local_time: Type.String(),
    timezone: Type.String(),
  }),
  total_amount: Type.Number(),
  total_paid: Type.Number({ description: 'What was charged for the booking (before any refund)' }),
  currency: Type.String(),
  payment_id: Type.Union([Type.String(), Type.Null()]),
  payment_url: Type.Union([Type.String(), Type.Null()], {
    description: 'While PENDING: the hosted payment page of the latest attempt',
  }),
  booking_time: Timestamp,
  confirmed_at: Type.Union([Timestamp, Type.Null()]),
  cancelled_at: Type.Union([Timestamp, Type.Null()]),
  failure_reason: Type.Union([Type.String(), Type.Null()]),
  refund: Type.Union([
    Type.Object({
      amount: Type.Number(),
      status: Type.Enum(['PENDING', 'COMPLETED', 'FAILED']),
    }),
    Type.Null(),
  ]),
  cancellation: Type.Union(
    [
      Type.Object({
        allowed: Type.Boolean({ description: 'False once the show has started' }),
        refund_amount: Type.Number({
          description: 'What cancelling now gives back: all until refund_until, then 0',
        }),
        refund_until: Timestamp,
      }),
      Type.Null(),
    ],
    { description: 'CONFIRMED: what cancelling now would refund (null otherwise)' },
  ),
  qr_code: Type.Union([Type.String(), Type.Null()], {
    description: 'CONFIRMED: the signed ticket token as a QR code (PNG data URL)',
  }),
  ticket_token: Type.Union([Type.String(), Type.Null()]),
});
export type Booking = Static<typeof Booking>;

export const BookingList = Type.Object({ bookings: Type.Array(Booking) });

export const CancelRequest = Type.Object(
  {
    user_id: Type.Optional(
      Type.String({
        format: 'uuid',
        description: "No longer needed (the token decides); if sent, it must be the token's user",
      }),
    ),
    accept_no_refund: Type.Optional(
      Type.Boolean({ description: 'Needed to cancel after the refund cutoff (no refund is then due)' }),
    ),
  },
  { additionalProperties: false },
);

export const ShowCancelRequest = Type.Object(
  { reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })) },
  { additionalProperties: false },
);

export const ShowCancelled = Type.Object({
  show_id: Uuid,
  status: Type.Literal('CANCELLED'),
  bookings_cancelled: Type.Integer(),
  pending_bookings_failed: Type.Integer(),
  refund_total: Type.Number(),
});

export const TicketCheck = Type.Object({
  valid: Type.Boolean(),
  booking_id: Uuid,
  status: BookingStatusSchema,
  seats: Type.Array(Type.String()),
  show_id: Uuid,
  show_time: Timestamp,
});
