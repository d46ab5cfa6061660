import { Type } from 'typebox';
import { TEMPLATE_ID_PATTERN } from './ids.ts';

/** Request and response schemas of /api/templates (they also make /docs). */
export const TemplateId = Type.String({
  maxLength: 50,
  pattern: TEMPLATE_ID_PATTERN,
  description: '`{type}.{channel}` or `{type}.{channel}.{locale}`, e.g. `booking_confirmed.email.de`',
});
const Channel = Type.Union([
  Type.Literal('push'),
  Type.Literal('sms'),
  Type.Literal('email'),
  Type.Literal('in_app'),
]);

const Parts = {
  subject: Type.Optional(
    Type.String({ maxLength: 1000, description: 'LiquidJS; e-mail subject or push title (unused for SMS)' }),
  ),
  body: Type.String({ minLength: 1, maxLength: 100_000, description: 'LiquidJS; plain text' }),
  html_body: Type.Optional(
    Type.Union([Type.String({ maxLength: 200_000 }), Type.Null()], {
      description:
        'LiquidJS, e-mail only; outputs are HTML-escaped. Without it the HTML part is the text body.',
    }),
  ),
  link: Type.Optional(
    Type.Union([Type.String({ maxLength: 2000 }), Type.Null()], {
      description: 'LiquidJS, in_app only: where the feed item leads (a relative path or an https URL)',
    }),
  ),
};

export const TemplateBody = Type.Object(
  { id: TemplateId, channel: Type.Optional(Channel), ...Parts },
  { additionalProperties: false },
);
export const TemplateUpdate = Type.Object(
  { channel: Type.Optional(Channel), ...Parts },
  { additionalProperties: false },
);
export const TemplateParams = Type.Object({ id: TemplateId });
export const TemplateQuery = Type.Object({
  type: Type.Optional(Type.String({ maxLength: 20 })),
  channel: Type.Optional(Channel),
});

export const Template = Type.Object({
  id: Type.String(),
  type: Type.String(),
  channel: Channel,
  locale: Type.Union([Type.String(), Type.Null()]),
  subject: Type.String(),
  body: Type.String(),
  html_body: Type.Union([Type.String(), Type.Null()]),
  link: Type.Union([Type.String(), Type.Null()]),
  variables: Type.Array(Type.String(), { description: 'Variables the template needs in `data`' }),
  updated_at: Type.String({ format: 'date-time' }),
});
export const TemplateList = Type.Object({ templates: Type.Array(Template) });

export const PreviewBody = Type.Object(
  {
    data: Type.Record(Type.String(), Type.Unknown(), { description: 'Template variables' }),
    time_zone: Type.Optional(
      Type.String({ maxLength: 64, description: 'IANA zone for `date`, default UTC' }),
    ),
  },
  { additionalProperties: false },
);
export const Rendered = Type.Object({
  subject: Type.Optional(Type.String()),
  text: Type.String(),
  html: Type.Optional(Type.String()),
  link: Type.Optional(Type.String()),
  missing: Type.Array(Type.String(), { description: 'Variables the template needs that `data` lacks' }),
});
