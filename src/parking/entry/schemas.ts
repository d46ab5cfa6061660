import { Type } from 'typebox';
import { NEEDS, VEHICLE_TYPES } from '../lot/allocation.ts';
import { PanelId } from '../schemas.ts';

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
