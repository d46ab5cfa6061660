import { Type } from 'typebox';
import { VEHICLE_TYPES } from '../lot/allocation.ts';
import { Money, PaymentKind, TicketCode, Timestamp } from '../schemas.ts';

const LotTime = Type.String({
  description: 'On the lot\'s wall clock with its zone, e.g. "Nov 27, 2026, 6:55 AM EST"',
});

export const Receipt = Type.Object(
  {
    receiptNumber: Type.String({ description: 'The payment id' }),
    lot: Type.Object({ id: Type.String(), name: Type.String(), timeZone: Type.String() }),
    ticketId: Type.String(),
    code: TicketCode,
    licensePlate: Type.String(),
    vehicleType: Type.Enum(VEHICLE_TYPES),
    spotId: Type.String(),
    floor: Type.Integer(),
    entryTime: Timestamp,
    exitTime: { ...Timestamp, description: 'ISO 8601 UTC: the time the amount was computed for (the exit)' },
    paidAt: Timestamp,
    local: Type.Object({ entryTime: LotTime, exitTime: LotTime, paidAt: LotTime }),
    duration: Type.String({ description: '"<h>h <m>m"' }),
    kind: PaymentKind,
    rule: Type.String({ description: 'The pricing rule applied, in words' }),
    amount: Money,
    currency: Type.String(),
    status: Type.Enum(['COMPLETED', 'REFUNDED'], { description: 'REFUNDED: the money went back afterwards' }),
    url: Type.String({ description: 'The printable receipt page (relative to this server)' }),
  },
  { description: 'The receipt of a paid stay' },
);
