import { Type } from 'typebox';
import { SPOT_TYPES, VEHICLE_TYPES } from '../lot/allocation.ts';
import { Timestamp } from '../schemas.ts';

const Counts = Type.Object(Object.fromEntries(SPOT_TYPES.map((type) => [type, Type.Integer()])));

const Reserved = Type.Object(Object.fromEntries(SPOT_TYPES.map((type) => [type, Type.Integer()])), {
  description:
    'Spots held for reservations, per type: not in `availableSpots` (no walk-in gets them) until the reservation arrives or lapses',
});

const Vehicles = Type.Object(
  Object.fromEntries(
    VEHICLE_TYPES.map((type) => [
      type,
      Type.Optional(
        Type.Object({
          available: Type.Integer({ description: 'Free spots this vehicle may be given' }),
          total: Type.Integer({ description: 'All spots this vehicle fits' }),
          full: Type.Boolean({ description: 'No fitting spot is free' }),
        }),
      ),
    ]),
  ),
  {
    description:
      "Per vehicle type, the spots it may use under the lot's fit rules (MOTORCYCLE any, CAR any but MOTORCYCLE, BUS LARGE only); a vehicle no spot here fits is left out",
  },
);

export const Availability = Type.Object({
  floors: Type.Array(
    Type.Object({
      floor: Type.Integer(),
      motorcycle: Type.Integer(),
      compact: Type.Integer(),
      large: Type.Integer(),
      handicapped: Type.Integer(),
      electric: Type.Integer(),
      reserved: Type.Object(
        {
          motorcycle: Type.Integer(),
          compact: Type.Integer(),
          large: Type.Integer(),
          handicapped: Type.Integer(),
          electric: Type.Integer(),
        },
        { description: 'Spots held for reservations: neither free for a walk-in nor occupied' },
      ),
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
      reservedSpots: Reserved,
      reserved: Type.Integer({ description: 'Spots of this floor held for reservations' }),
      vehicles: Vehicles,
    }),
  ),
  total: Type.Object({
    availableSpots: Counts,
    totalSpots: Counts,
    reservedSpots: Reserved,
    reserved: Type.Integer({ description: 'Spots of the lot held for reservations' }),
    vehicles: Vehicles,
  }),
});
