import { Type } from 'typebox';
import { Money } from '../schemas.ts';

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
