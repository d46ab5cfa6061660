import { Type } from 'typebox';
import { EntryBody } from '../entry/schemas.ts';
import { Receipt } from '../receipts/schemas.ts';
import {
  Money,
  Nullable,
  PanelId,
  PaymentKind,
  PaymentStatus,
  Ticket,
  TicketCode,
  TicketRef,
  Timestamp,
} from '../schemas.ts';

export const Card = Type.Object(
  {
    card_number: Type.String({
      pattern: '^[0-9 ]{12,23}$',
      description: 'Test cards: 4242 4242 4242 4242 (succeeds), 4000 0000 0000 0002 (declined)',
    }),
    exp_month: Type.Integer({ minimum: 1, maximum: 12 }),
    exp_year: Type.Integer({ minimum: 2000, maximum: 2100 }),
    cvc: Type.String({ pattern: '^[0-9]{3,4}$' }),
  },
  {
    additionalProperties: false,
    description: 'Card details (payment_details); only the last four digits are kept',
  },
);

export const ExitBody = Type.Object(
  { ticketId: TicketRef, payment: Type.Optional(Card), panelId: Type.Optional(PanelId) },
  { additionalProperties: false },
);

export const LostBody = Type.Object(
  {
    licensePlate: EntryBody.properties.licensePlate,
    payment: Type.Optional(Card),
    panelId: Type.Optional(PanelId),
  },
  { additionalProperties: false },
);

export const TicketParams = Type.Object({ ticketId: TicketRef });

export const RefundBody = Type.Object(
  {
    reason: Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'Why the money goes back (kept with the payment)',
    }),
  },
  { additionalProperties: false },
);

export const TicketWithHistory = Type.Intersect([
  Ticket,
  Type.Object({
    payments: Type.Array(Type.String(), { description: 'Every payment id of the ticket, oldest first' }),
  }),
]);

export const ExitResult = Type.Object({
  ticketId: Type.String(),
  code: TicketCode,
  ticketStatus: Type.Enum(['ACTIVE', 'PAID', 'LOST']),
  licensePlate: Type.String(),
  spotId: Type.String(),
  amount: Money,
  currency: Type.String(),
  duration: Type.String({ description: '"<h>h <m>m"' }),
  paymentId: Type.String(),
  paymentUrl: Type.String({ description: 'Hosted payment page' }),
  status: PaymentStatus,
  kind: PaymentKind,
  failureReason: Nullable(Type.String()),
  paidAt: Nullable(Timestamp),
  receipt: Type.Union([Receipt, Type.Null()], { description: 'The receipt, once the payment completed' }),
});
