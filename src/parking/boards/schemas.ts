import { Type } from 'typebox';
import { SPOT_TYPES } from '../lot/allocation.ts';
import { Timestamp } from '../schemas.ts';

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
