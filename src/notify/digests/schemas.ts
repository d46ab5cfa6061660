import { Type } from 'typebox';

/** Schemas of the digest settings API (they also make /docs). */
export const DigestParams = Type.Object({
  type: Type.String({
    pattern: '^[A-Za-z0-9_-]{1,20}$',
    description: 'A notification type (≤ 20 characters)',
  }),
});

export const DigestBody = Type.Object(
  {
    every: Type.Optional(
      Type.String({
        pattern: '^[0-9]+[smhd]$',
        description: 'A fixed window from its first event: `10m`, `1h`, `1d` (1 minute to 7 days)',
      }),
    ),
    daily_at: Type.Optional(
      Type.String({
        pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$',
        description: "Daily at this local time (`HH:MM`) in each user's time zone",
      }),
    ),
  },
  { additionalProperties: false, description: 'Exactly one of `every` and `daily_at`' },
);

export const DigestSetting = Type.Object({
  type: Type.String(),
  every_seconds: Type.Union([Type.Integer(), Type.Null()]),
  daily_at: Type.Union([Type.String(), Type.Null()]),
});

export const DigestList = Type.Object({ digests: Type.Array(DigestSetting) });
