import { type Static, Type } from 'typebox';
import { ProblemSchema } from '../platform/http/problem.ts';
import { MAX_EXPIRES_IN, MIN_EXPIRES_IN } from './settings.ts';

/** TypeBox schemas of the text sharing API; they validate requests and generate /docs. */

export const ShortUrlParams = Type.Object({
  short_url: Type.String({ pattern: '^[0-9A-Za-z]{1,8}$', description: '1 to 8 characters of [0-9A-Za-z]' }),
});

const options = {
  syntax: Type.Optional(
    Type.String({
      maxLength: 50,
      description:
        'A highlight.js language name or alias (GET /api/v1/paste/languages); absent means auto-detected on the page',
    }),
  ),
  expires_in: Type.Optional(
    Type.Integer({
      minimum: MIN_EXPIRES_IN,
      maximum: MAX_EXPIRES_IN,
      description: 'Seconds until the paste expires (60 s to 5 years); absent means never',
    }),
  ),
  is_private: Type.Optional(Type.Boolean({ description: 'Readable by the owner only; needs an API key' })),
  password: Type.Optional(
    Type.String({ minLength: 1, maxLength: 200, description: 'Readers must send it (X-Paste-Password)' }),
  ),
  burn_after_read: Type.Optional(
    Type.Boolean({
      description: 'Deleted by its first read (HEAD and link-preview bots do not count)',
    }),
  ),
  encryption: Type.Optional(
    Type.Literal('aes-256-gcm', {
      description:
        'End-to-end encrypted: `content` is the standard-base64 envelope (version, flags, iv, salt and ' +
        'iterations when a password is mixed in, AES-256-GCM ciphertext and tag; see the paste README) made by ' +
        'the client, whose key stays in the link fragment. Not with `password` or `syntax`',
    }),
  ),
};

export const CreatePasteBody = Type.Object(
  {
    // Not empty, but no `minLength: 1` here: ajv counts every code point of the string to check
    // it (see emptyContentCheck in routes.ts, which gives the same 400).
    content: Type.String({ description: 'The text: UTF-8, not empty, at most 10 MB' }),
    ...options,
  },
  { additionalProperties: false },
);
export type CreatePasteBody = Static<typeof CreatePasteBody>;

/** Options of a raw-body create (`curl --data-binary @file`), in the query string. */
export const CreatePasteQuery = Type.Object(options);
export type CreatePasteQuery = Static<typeof CreatePasteQuery>;

const RawText = Type.String({
  description: 'The text itself, UTF-8, at most 10 MB; options go in the query string',
});

/**
 * `curl -F file=@f` (multipart/form-data): the text is the one file part, whatever its field name,
 * or a `content`, `file` or `sprunge` field (`-F 'content=<f'`); the other fields are options.
 */
export const UploadBody = Type.Object(
  {
    content: Type.String({
      description:
        'The text, UTF-8, at most 10 MB: a file part under any field name (`-F file=@notes.txt`), or a ' +
        '`content`, `file` or `sprunge` field (`-F "content=<notes.txt"`)',
    }),
    ...options,
  },
  { additionalProperties: false },
);

const curlForm = Type.String({
  description: 'What `curl --data-binary @file` sends: taken as raw text, not a form',
});

/**
 * The create body by media type: JSON is `CreatePasteBody`, multipart is `UploadBody` (as text
 * fields, coerced), the other types are the text itself. TypeBox cannot derive a type from a
 * media-type map, so `Unsafe` states the ones the parsers give.
 */
export const createBody = Type.Unsafe<CreatePasteBody | string>({
  content: {
    'application/json': { schema: CreatePasteBody },
    'text/plain': { schema: RawText },
    'application/octet-stream': { schema: RawText },
    'application/x-www-form-urlencoded': { schema: curlForm },
    'multipart/form-data': { schema: UploadBody },
  },
});

/**
 * POST / (where the create form posts): the form, or what curl sends. No JSON here: the API is
 * at /api/v1/paste. The form's own errors are shown on the form, so its fields are not a schema.
 */
export const homeCreateBody = Type.Unsafe<unknown>({
  content: {
    'application/x-www-form-urlencoded': {
      schema: {
        description:
          'The create form (`content=…&syntax=…`: a browser, or `curl -d content=…`); any other body, such as ' +
          'the file `curl --data-binary @file` sends, is taken as the raw text',
      },
    },
    'multipart/form-data': { schema: UploadBody },
    'text/plain': { schema: RawText },
    'application/octet-stream': { schema: RawText },
  },
});

/** PUT (`curl -T file …/paste`): the body is the text, whatever its media type (curl sends none). */
export const putBody = Type.Unsafe<string>({
  content: { 'text/plain': { schema: RawText }, 'application/octet-stream': { schema: RawText } },
});

const Timestamp = Type.String({ format: 'date-time' });
const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

export const CreatedPaste = Type.Object({
  short_url: Type.String(),
  url: Type.String({ description: 'The paste page' }),
  expires_at: NullableTimestamp,
  delete_token: Type.String({ description: 'Shown once: send it as X-Delete-Token to delete the paste' }),
});

export const PasteView = Type.Object({
  content: Type.String(),
  syntax: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp,
  expires_at: NullableTimestamp,
  views: Type.Integer({ description: 'Reads so far; batched, so it may lag a few seconds across instances' }),
  content_type: Type.String(),
  is_private: Type.Boolean(),
  size: Type.Integer({ description: 'Bytes of UTF-8' }),
  encryption: Type.Optional(
    Type.Literal('aes-256-gcm', {
      description: 'Only on an end-to-end encrypted paste: `content` is then its base64 envelope',
    }),
  ),
});

export const CreateUserBody = Type.Object(
  { email: Type.String({ format: 'email', maxLength: 255 }) },
  { additionalProperties: false },
);
export type CreateUserBody = Static<typeof CreateUserBody>;

export const CreatedUser = Type.Object({
  id: Type.Integer(),
  email: Type.String(),
  api_key: Type.String({
    description: 'Shown once; only its hash is stored. Send it as Authorization: Bearer',
  }),
  created_at: Timestamp,
});

export const MyPastesQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  cursor: Type.Optional(
    Type.String({ pattern: '^[0-9A-Za-z]{6,8}$', description: 'next_cursor of the previous page' }),
  ),
});
export type MyPastesQuery = Static<typeof MyPastesQuery>;

export const MyPastes = Type.Object({
  pastes: Type.Array(
    Type.Object({
      short_url: Type.String(),
      url: Type.String(),
      syntax: Type.Union([Type.String(), Type.Null()]),
      created_at: Timestamp,
      expires_at: NullableTimestamp,
      views: Type.Integer(),
      is_private: Type.Boolean(),
      size: Type.Integer(),
      has_password: Type.Boolean(),
      burn_after_read: Type.Boolean(),
    }),
  ),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});

export const Languages = Type.Object({ languages: Type.Array(Type.String()) });

export const ReadHeaders = Type.Object({
  'x-paste-password': Type.Optional(Type.String({ description: 'The password of a protected paste' })),
  authorization: Type.Optional(Type.String({ description: 'Bearer <api_key>: needed for private pastes' })),
});

export const DeleteHeaders = Type.Object({
  'x-delete-token': Type.Optional(Type.String({ description: 'The delete_token returned at creation' })),
  authorization: Type.Optional(Type.String({ description: "Bearer <the owner's api_key>" })),
});

/** Error responses by status, for /docs: the platform's one problem schema. */
export function problems(...statuses: number[]) {
  return Object.fromEntries(statuses.map((status) => [status, ProblemSchema]));
}
