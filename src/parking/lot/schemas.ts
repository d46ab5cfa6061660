import { Type } from 'typebox';
import { Money } from '../schemas.ts';
import { SPOT_TYPES } from './allocation.ts';

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
  reservations: Type.Union(
    [
      Type.Object({
        spots: Type.Object(
          Object.fromEntries(SPOT_TYPES.map((type) => [type, Type.Optional(Type.Integer())])),
          {
            description:
              'The most reservations of each type live at one instant (a type left out takes none)',
          },
        ),
        holdAheadMinutes: Type.Integer({ description: 'A spot is held from this long before the start' }),
        graceMinutes: Type.Integer({
          description: 'After the start, a reservation waits this long, then is a no-show',
        }),
        maxDaysAhead: Type.Integer(),
        perUser: Type.Integer({ description: 'Live reservations one user may have at once' }),
      }),
      Type.Null(),
    ],
    { description: 'The reservation rules; null: the lot takes no reservations' },
  ),
});
