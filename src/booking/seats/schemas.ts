import { type Static, Type } from 'typebox';
import { IdParams, SeatTypeSchema, Timestamp, Uuid } from '../catalogue/schemas.ts';

export { IdParams };

export const SeatLabel = Type.String({
  pattern: '^[A-Za-z]{1,2}[0-9]{1,3}$',
  description: 'Row and number, e.g. C7',
});

export const SeatMap = Type.Object({
  show_id: Uuid,
  seats: Type.Array(
    Type.Object({
      seat_id: Type.String({ description: 'The seat label, e.g. C7' }),
      status: Type.Enum(['AVAILABLE', 'BOOKED'], {
        description: 'Held seats show as BOOKED',
      }),
      price: Type.Number(),
      row: Type.String(),
      number: Type.Integer(),
      column: Type.Optional(
        Type.Integer({
          description: 'Its column in the row counting aisle gaps; absent when that is its number',
        }),
      ),
      seat_type: SeatTypeSchema,
    }),
  ),
  available: Type.Integer(),
  total: Type.Integer(),
  currency: Type.String(),
});
export type SeatMap = Static<typeof SeatMap>;

export function holdRequest(maxSeats: number) {
  return Type.Object(
    {
      seat_ids: Type.Array(SeatLabel, { minItems: 1, maxItems: maxSeats, uniqueItems: true }),
      user_id: Type.Optional(
        Type.String({
          format: 'uuid',
          description: "Optional: the token decides the user; if sent, it must be the token's user",
        }),
      ),
      admission_token: Type.Optional(
        Type.String({ maxLength: 200, description: 'From the waiting room, needed for hot shows' }),
      ),
    },
    { additionalProperties: false },
  );
}
export interface HoldRequest {
  seat_ids: string[];
  user_id?: string;
  admission_token?: string;
}

export const Hold = Type.Object({
  hold_id: Uuid,
  show_id: Uuid,
  user_id: Uuid,
  seats: Type.Array(Type.String()),
  status: Type.Enum(['HELD', 'BOOKED', 'RELEASED', 'EXPIRED']),
  expires_at: Timestamp,
  total_amount: Type.Number(),
  currency: Type.String(),
});
export type Hold = Static<typeof Hold>;

export const HoldList = Type.Object({
  holds: Type.Array(Hold, { description: 'Live holds (HELD, not expired), oldest first' }),
});

export const HoldListQuery = Type.Object({ show_id: Type.Optional(Uuid) }, { additionalProperties: false });

export const Integrity = Type.Object({
  show_id: Uuid,
  double_booked_seats: Type.Integer({ description: 'Seats claimed by more than one live hold or booking' }),
  incomplete_holds: Type.Integer({
    description: 'Seats of live holds that the inventory does not give them',
  }),
  held_seats: Type.Integer(),
  booked_seats: Type.Integer(),
  live_holds: Type.Integer({ description: 'Holds not expired or released, and bookings' }),
});

export const EventStream = {
  description: 'Server-Sent Events',
  content: {
    'text/event-stream': {
      schema: Type.String({ description: '`event: <name>` and `data: <JSON>` blocks' }),
    },
  },
};
