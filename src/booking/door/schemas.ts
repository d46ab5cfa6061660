import { type Static, Type } from 'typebox';
import { Timestamp, Uuid } from '../catalogue/schemas.ts';

const Door = Type.String({
  minLength: 1,
  maxLength: 60,
  pattern: '^[^\\u0000-\\u001f]+$',
  description: 'Which door or scanner admitted the ticket (e.g. "Main entrance"), shown on a second scan',
});

export const TokenParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) });

export const CheckInRequest = Type.Object({ show_id: Uuid, door: Door }, { additionalProperties: false });
export type CheckInRequest = Static<typeof CheckInRequest>;

export const CheckInBodyRequest = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 200 }), show_id: Uuid, door: Door },
  { additionalProperties: false },
);

export const CheckedIn = Type.Object({
  admitted: Type.Literal(true),
  booking_id: Uuid,
  show_id: Uuid,
  seats: Type.Array(Type.String()),
  holder: Type.String({
    description:
      "Who booked, as far as we know it: the contact e-mail or phone given at checkout, partly masked (a•••e@example.com), else 'Guest'",
  }),
  movie_title: Type.String(),
  show_time: Timestamp,
  door: Type.String(),
  checked_in_at: Timestamp,
});
export type CheckedIn = Static<typeof CheckedIn>;
