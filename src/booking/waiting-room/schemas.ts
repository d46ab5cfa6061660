import { type Static, Type } from 'typebox';
import { Timestamp, Uuid } from '../catalogue/schemas.ts';

export const QueueQuery = Type.Object(
  {
    user_id: Type.Optional(
      Type.String({
        format: 'uuid',
        description: "Optional: the token decides the user; if sent, it must be the token's user",
      }),
    ),
  },
  { additionalProperties: false },
);

export const QueueStatus = Type.Object({
  show_id: Uuid,
  user_id: Uuid,
  status: Type.Enum(['WAITING', 'ADMITTED', 'NOT_REQUIRED'], {
    description: 'NOT_REQUIRED: the show has no waiting room, hold directly',
  }),
  position: Type.Integer({ description: 'Place in line (1 = next); 0 once admitted' }),
  estimated_wait: Type.String({ description: 'A duration in minutes, e.g. "12 minutes"' }),
  estimated_wait_seconds: Type.Integer(),
  waiting: Type.Integer({ description: 'People waiting for this show' }),
  admission_token: Type.Union([Type.String(), Type.Null()], {
    description: 'Once admitted: pass it to the hold request (admission_token)',
  }),
  admitted_until: Type.Union([Timestamp, Type.Null()]),
});
export type QueueStatus = Static<typeof QueueStatus>;
