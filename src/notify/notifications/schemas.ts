import { Type } from 'typebox';

/** Request and response schemas of the notification API (they also make /docs). */
const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);
export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC' });
export const UserId = Type.String({
  pattern: '^[A-Za-z0-9_-]{1,64}$',
  description: 'Any id up to 64 characters',
});
// Any string: an unknown channel is a 422 `unknown_channel` from the service, not a 400.
const Channels = Type.Array(Type.String({ maxLength: 20 }), { minItems: 1, maxItems: 4, uniqueItems: true });
const Priority = Type.Union([
  Type.Literal('critical'),
  Type.Literal('high'),
  Type.Literal('normal'),
  Type.Literal('low'),
]);
const Data = Type.Record(Type.String(), Type.Unknown(), { description: 'Template variables' });

const SendAt = Type.String({
  format: 'date-time',
  description:
    'When to send (RFC 3339): the channels stay `scheduled` until then and may be cancelled (DELETE). Now or later (a minute of clock skew allowed) and at most NOTIFY_SEND_AT_MAX (30 days) ahead, else 422 `invalid_send_at`.',
});

export const UserParams = Type.Object({ userId: UserId });
export const IdParams = Type.Object({ id: Type.String({ maxLength: 200 }) });

export const SendBody = Type.Object(
  {
    id: Type.Optional(
      Type.String({ pattern: '^[\\x21-\\x7e]{1,64}$', description: 'Makes the request idempotent for 24 h' }),
    ),
    user_id: UserId,
    type: Type.String({ minLength: 1, maxLength: 20 }),
    channels: Channels,
    data: Data,
    priority: Type.Optional(Priority),
    send_at: Type.Optional(SendAt),
  },
  { additionalProperties: false },
);

export const ChannelOutcome = Type.Object({
  channel: Type.String(),
  status: Type.String({ description: 'queued, scheduled (quiet hours or send_at), skipped or rate_limited' }),
  reason: Type.Optional(Type.String()),
  retry_after: Type.Optional(Type.Integer({ description: 'Seconds until the limit resets' })),
});

export const Accepted = Type.Object({
  id: Type.String(),
  status: Type.String(),
  channels: Type.Array(ChannelOutcome),
});

const DeliveryView = Type.Object({
  channel: Type.String(),
  status: Type.String({
    description:
      'queued, scheduled, sending, sent, delivered, failed, dead_lettered, skipped, rate_limited or cancelled',
  }),
  reason: Nullable(Type.String()),
  provider: Nullable(Type.String()),
  attempts: Type.Integer(),
  scheduled_for: Nullable(Timestamp),
  sent_at: Nullable(Timestamp),
  delivered_at: Nullable(Timestamp),
});

const NotificationView = {
  id: Type.String(),
  user_id: Type.String(),
  type: Type.String(),
  priority: Type.String(),
  lane: Type.String(),
  data: Data,
  created_at: Timestamp,
  channels: Type.Array(DeliveryView),
};

export const NotificationStatus = Type.Object({
  ...NotificationView,
  sent_at: Nullable(Timestamp),
  delivered_at: Nullable(Timestamp),
  attempts: Type.Array(
    Type.Object({
      channel: Type.String(),
      attempt: Type.Integer(),
      at: Timestamp,
      provider: Nullable(Type.String()),
      error: Nullable(Type.String()),
    }),
  ),
});

export const HistoryQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  cursor: Type.Optional(Type.String({ maxLength: 100 })),
});

export const DeadLetterQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
});

export const History = Type.Object({
  notifications: Type.Array(Type.Object(NotificationView)),
  next_cursor: Nullable(Type.String()),
});

export const DeadLetters = Type.Object({
  dead_letters: Type.Array(
    Type.Object({
      id: Type.String({ description: '`{topic}:{deadLetterId}`; pass it to redrive' }),
      topic: Type.String(),
      notification_id: Type.String(),
      channel: Type.String(),
      user_id: Type.String(),
      attempts: Type.Integer(),
      error: Type.String(),
      dead_at: Timestamp,
    }),
  ),
});

export const BatchBody = Type.Object(
  {
    type: Type.String({ minLength: 1, maxLength: 20 }),
    channels: Channels,
    data: Type.Optional(Data),
    user_ids: Type.Optional(Type.Array(UserId, { minItems: 1, maxItems: 1000, uniqueItems: true })),
    recipients: Type.Optional(
      Type.Array(
        Type.Object({ user_id: UserId, data: Type.Optional(Data) }, { additionalProperties: false }),
        {
          minItems: 1,
          maxItems: 1000,
        },
      ),
    ),
    send_at: Type.Optional(SendAt),
    priority: Type.Optional(Priority),
  },
  { additionalProperties: false },
);

export const BatchAccepted = Type.Object({
  batch_id: Type.String(),
  recipients: Type.Integer(),
  counts: Type.Record(Type.String(), Type.Integer()),
});

/** A dead letter sent again: its delivery is queued with a fresh set of attempts. */
export const Redriven = Type.Object({
  id: Type.String(),
  notification_id: Type.String(),
  channel: Type.String(),
  status: Type.Literal('queued'),
});
