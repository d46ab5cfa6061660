import { Type } from 'typebox';
import { Timestamp } from '../notifications/schemas.ts';

/** Request and response schemas of a user's preferences, push subscriptions and limits. */
const Hhmm = Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'Local time "HH:MM"' });

const PreferenceFields = {
  push_enabled: Type.Boolean(),
  sms_enabled: Type.Boolean(),
  email_enabled: Type.Boolean(),
  in_app_enabled: Type.Boolean({ description: 'The in-app feed (GET /api/users/{id}/feed)' }),
  email_marketing_enabled: Type.Boolean({
    description: 'E-mail of bulk types (NOTIFY_MARKETING_TYPES); the one-click unsubscribe turns it off',
  }),
  quiet_hours_start: Type.Union([Hhmm, Type.Null()]),
  quiet_hours_end: Type.Union([Hhmm, Type.Null()]),
  timezone: Type.String({ minLength: 1, maxLength: 64, description: 'IANA zone, e.g. Europe/Berlin' }),
  email: Type.Union([Type.String({ format: 'email', maxLength: 254 }), Type.Null()]),
  phone: Type.Union([Type.String({ pattern: '^\\+[1-9][0-9]{6,14}$', description: 'E.164' }), Type.Null()]),
  locale: Type.Union([Type.String({ pattern: '^[a-z]{2}(-[A-Z]{2})?$' }), Type.Null()]),
};

export const Preferences = Type.Object(PreferenceFields);
export const PreferencesPut = Type.Object(
  {
    push_enabled: PreferenceFields.push_enabled,
    sms_enabled: PreferenceFields.sms_enabled,
    email_enabled: PreferenceFields.email_enabled,
    in_app_enabled: Type.Optional(PreferenceFields.in_app_enabled),
    email_marketing_enabled: Type.Optional(PreferenceFields.email_marketing_enabled),
    quiet_hours_start: Type.Optional(PreferenceFields.quiet_hours_start),
    quiet_hours_end: Type.Optional(PreferenceFields.quiet_hours_end),
    timezone: Type.Optional(PreferenceFields.timezone),
    email: Type.Optional(PreferenceFields.email),
    phone: Type.Optional(PreferenceFields.phone),
    locale: Type.Optional(PreferenceFields.locale),
  },
  { additionalProperties: false },
);
export const PreferencesPatch = Type.Partial(Preferences, { additionalProperties: false, minProperties: 1 });

export const PushSubscriptionBody = Type.Object(
  {
    endpoint: Type.String({ pattern: '^https://', maxLength: 2000, format: 'uri' }),
    keys: Type.Object(
      {
        p256dh: Type.String({ minLength: 1, maxLength: 200 }),
        auth: Type.String({ minLength: 1, maxLength: 100 }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export const PushSubscriptionDelete = Type.Object({ endpoint: Type.String({ maxLength: 2000 }) });

export const Limits = Type.Object({
  limits: Type.Array(
    Type.Object({
      channel: Type.String(),
      limit: Type.Integer(),
      window_seconds: Type.Integer(),
      remaining: Type.Integer(),
      reset_at: Timestamp,
    }),
  ),
});
