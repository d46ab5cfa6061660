import { Type } from 'typebox';

/** TypeBox schemas of the payments HTTP API (they also make /docs). */
export const PaymentParams = Type.Object({ paymentId: Type.String({ maxLength: 64 }) });

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);

export const PaymentBody = Type.Object(
  {
    payment_id: Type.String({ format: 'uuid' }),
    purpose: Type.String({ enum: ['booking', 'parking'] }),
    reference: Type.String(),
    description: Type.String(),
    amount: Type.Number({ description: 'Two decimals, e.g. 12.50' }),
    currency: Type.String({ examples: ['USD'] }),
    status: Type.String({ enum: ['PENDING', 'COMPLETED', 'FAILED', 'REFUNDED'] }),
    allow_retry: Type.Boolean({ description: 'Whether another card may be tried after a decline' }),
    card: Nullable(Type.Object({ last4: Type.String(), brand: Type.String() })),
    failure_code: Nullable(Type.String()),
    failure_message: Nullable(Type.String()),
    charge_outstanding: Type.Boolean({ description: 'A charge awaits the gateway (after a timeout)' }),
    refunded_amount: Type.Number(),
    refund_reason: Nullable(Type.String()),
    payment_url: Type.String({ description: 'The hosted payment page' }),
    return_url: Nullable(Type.String()),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
    completed_at: Nullable(Type.String({ format: 'date-time' })),
    failed_at: Nullable(Type.String({ format: 'date-time' })),
    refunded_at: Nullable(Type.String({ format: 'date-time' })),
  },
  { description: 'A payment' },
);

export const CardDetailsSchema = Type.Object(
  {
    card_number: Type.String({ maxLength: 40, examples: ['4242 4242 4242 4242'] }),
    exp_month: Type.Integer({ examples: [12] }),
    exp_year: Type.Integer({ examples: [2030] }),
    cvc: Type.String({ maxLength: 8, examples: ['123'] }),
  },
  {
    description:
      'Sandbox test cards: 4242 4242 4242 4242 succeeds, 4000 0000 0000 0002 is declined, ' +
      '4000 0000 0000 9995 has insufficient funds, 4000 0000 0000 0119 never answers (202 PENDING).',
  },
);

export const PayRequest = Type.Object({
  payment_method: Type.Optional(Type.String({ enum: ['CARD'] })),
  payment_details: CardDetailsSchema,
});

export const RefundRequest = Type.Object({
  amount: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: 'Omit for a full refund' })),
  reason: Type.String({ minLength: 1, maxLength: 500 }),
});

export const SettleRequest = Type.Object({
  outcome: Type.Unsafe<'succeeded' | 'failed'>(Type.String({ enum: ['succeeded', 'failed'] })),
});

export const WebhookAck = Type.Object({ received: Type.Boolean(), duplicate: Type.Boolean() });
