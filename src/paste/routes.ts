import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { encodeFor } from '../platform/http/compression.ts';
import { conditional } from '../platform/http/conditional.ts';
import { setRateLimitHeaders } from '../platform/ratelimit/headers.ts';
import { accountOf, OWNER_ONLY, PUBLIC_OR_OWNER, readerOf } from './accounts.ts';
import { commandLineInput, isUpload } from './commandline.ts';
import {
  createFromCommandLine,
  createRouteOptions,
  spendAndCreate,
  useCreateBodyParsers,
  usePutBodyParsers,
} from './create.ts';
import { pasteError } from './errors.ts';
import { LANGUAGES } from './highlight.ts';
import type { PageCookies } from './pages/cookies.ts';
import type { LocalEntry, PasteReads } from './reads.ts';
import {
  CreatedPaste,
  CreatedUser,
  CreatePasteQuery,
  CreateUserBody,
  createBody,
  DeleteHeaders,
  Languages,
  MyPastes,
  MyPastesQuery,
  PasteView,
  problems,
  putBody,
  ReadHeaders,
  ShortUrlParams,
} from './schemas.ts';
import type { PasteService } from './service.ts';

const JSON_TYPE = 'application/json; charset=utf-8';
const TEXT_TYPE = 'text/plain; charset=utf-8';
const tags = ['paste'];

export interface PasteApiOptions {
  pastes: PasteService;
  reads: PasteReads;
  /** The pages' unlock cookie opens /{id}/raw of a password paste after the page took the password. */
  cookies: PageCookies;
  /** COMPRESSION_MIN_BYTES (undefined: off), for the JSON read that compresses its own body. */
  compressionMinBytes: number | undefined;
}

/** The JSON API: create, read, raw, delete, users. Pages are in pages/routes.ts. */
export const pasteApiRoutes: FastifyPluginAsyncTypebox<PasteApiOptions> = async (app, options) => {
  await app.register(createRoutes, options);
  await app.register(readRoutes, options);
  await app.register(ownerRoutes, options);
};

/** POST /api/v1/paste and /paste: JSON, or the raw text with the options in the query string. */
const createRoutes: FastifyPluginAsyncTypebox<PasteApiOptions> = async (scope, { pastes }) => {
  useCreateBodyParsers(scope);
  const schema = {
    tags,
    summary: 'Create a paste',
    description:
      'JSON `{content, syntax?, expires_in?, is_private?, password?, burn_after_read?}`, a raw text body, or a ' +
      'multipart upload (`curl -F file=@file …`, options as other fields or in the query string). /api/v1/paste ' +
      'answers JSON; the /paste alias (`curl --data-binary @file …/paste`) answers a raw body or an upload with ' +
      'the URL as text/plain, the delete token in X-Delete-Token. ' +
      'Limits: 10 MB of UTF-8 (413, refused before the body is read when Content-Length says so), text only ' +
      '(422), creates per IP or per API key (429 with Retry-After). An optional Idempotency-Key replays the first ' +
      "answer for 24 h (another body → 422 `idempotency_key_reused`); it belongs to the API key's owner, or without " +
      'one to the client address, so nobody else sending the same key gets this paste or its delete token.',
    body: createBody,
    querystring: CreatePasteQuery,
    response: { 201: CreatedPaste, ...problems(400, 401, 413, 415, 422, 429) },
  };
  // The JSON API answers JSON whatever the body; the alias (the curl one-liner) answers a raw body
  // with the URL as text, so a generated client of the API sees one 201, not `string | {…}`.
  const aliasResponse = {
    ...schema.response,
    201: {
      description:
        'JSON for a JSON body; the URL as text for a raw body (its delete token in X-Delete-Token)',
      content: {
        'application/json': { schema: CreatedPaste },
        'text/plain': { schema: { type: 'string' } },
      },
    },
  };
  // The alias names its own operationId: by the path rule (openapi.ts) both would be postPaste.
  for (const [url, summary, operationId, response] of [
    ['/api/v1/paste', schema.summary, undefined, schema.response],
    ['/paste', 'Create a paste (alias; the curl one-liner)', 'postPasteAlias', aliasResponse],
  ] as const) {
    const raw = url === '/paste';
    scope.post(
      url,
      { schema: { ...schema, summary, operationId, response }, ...createRouteOptions },
      async (request, reply) => {
        const { body } = request;
        if (body === undefined || body === null) {
          throw pasteError('invalid_option', {
            detail: 'The body is empty: send JSON {"content": "…"} or the text itself as text/plain',
            extras: { errors: [{ field: 'body', message: 'is required' }] },
          });
        }
        if ((typeof body === 'string' || isUpload(body)) && raw)
          return createFromCommandLine(pastes, request, reply, body);
        // The JSON API answers JSON whatever the body: one 201 for a generated client.
        const input =
          typeof body === 'string' || isUpload(body)
            ? commandLineInput(body, request.query, request.headers['x-paste-password'])
            : body;
        const created = await spendAndCreate(pastes, request, reply, input);
        return reply.code(201).header('location', `/api/v1/paste/${created.short_url}`).send(created);
      },
    );
  }
  await scope.register(putRoutes, { pastes });
};

/**
 * PUT: `curl -T file host/paste` (PUT /paste), with a trailing slash curl appends the file's name
 * (`…/paste/` → PUT /paste/file.txt, `host/` → PUT /file.txt), and `curl -T - host/` sends stdin
 * to PUT /. At the root only a name with a dot is taken (`/:filename` would otherwise answer every
 * top-level path: PUT /movies stays a 405, and short URLs have no dots). The name is not kept.
 */
const putRoutes: FastifyPluginAsyncTypebox<Pick<PasteApiOptions, 'pastes'>> = async (scope, { pastes }) => {
  usePutBodyParsers(scope);
  const schema = {
    tags,
    description:
      'The body is the text, whatever its media type (`curl -T` sends none); options in the query string. ' +
      'Answers the URL as text/plain with the delete token in X-Delete-Token. Limits and Idempotency-Key as ' +
      'POST /api/v1/paste.',
    body: putBody,
    querystring: CreatePasteQuery,
    response: {
      201: { content: { 'text/plain': { schema: { type: 'string' } } } },
      ...problems(400, 401, 413, 415, 422, 429),
    },
  };
  const FileName = Type.Object({
    filename: Type.String({ description: 'The file name curl appends; not kept' }),
  });
  const routes = [
    ['/paste', 'Create a paste from an upload (`curl -T file host/paste`)', undefined],
    ['/', 'Create a paste from an upload (`curl -T - host/`)', 'putPasteAtRoot'],
    ['/paste/:filename', 'Create a paste from an upload (`curl -T file host/paste/`)', undefined],
    ['/:filename(^[^.]*\\.[^.].*$)', 'Create a paste from an upload (`curl -T file.txt host/`)', undefined],
  ] as const;
  for (const [url, summary, operationId] of routes) {
    // The two with a file name stay out of the OpenAPI document: only curl builds those URLs, and
    // `/paste/{filename}` next to `/paste/{short_url}` is one path to a client generator.
    const params = url.includes(':filename') ? { params: FileName, hide: true } : {};
    scope.put(
      url,
      { schema: { ...schema, ...params, summary, operationId }, ...createRouteOptions },
      async (request, reply) => {
        const { body } = request;
        if (typeof body !== 'string') throw emptyBody();
        return createFromCommandLine(pastes, request, reply, body);
      },
    );
  }
};

function emptyBody() {
  return pasteError('invalid_option', {
    detail: 'The body is empty',
    extras: { errors: [{ field: 'content', message: 'must not be empty' }] },
  });
}

/** GET of a paste as JSON (and its alias), as raw text, and the languages list. */
const readRoutes: FastifyPluginAsyncTypebox<PasteApiOptions> = async (
  app,
  { pastes, reads, cookies, compressionMinBytes },
) => {
  const readSchema = {
    tags,
    description:
      'Unknown → 404; expired or deleted → 410 until purged, then 404; private → 404 unless the owner asks ' +
      '(Authorization: Bearer); password-protected → 401 without the right X-Paste-Password (wrong ones are ' +
      'limited per IP: 429). A burn-after-read paste is deleted by this read, except for HEAD and link-preview bots.',
    params: ShortUrlParams,
    headers: ReadHeaders,
  };
  // The platform's check passes a read without Authorization on without a promise, so the cached
  // hot path stays free of awaits; the owner's key is proven only when one is sent.
  const read = { access: PUBLIC_OR_OWNER, openapi: { conditional: true, rateLimited: true } } as const;
  for (const [url, summary, operationId] of [
    ['/api/v1/paste/:short_url', 'Read a paste', undefined],
    ['/paste/:short_url', 'Read a paste (alias)', 'getPasteByShortUrlAlias'],
  ] as const) {
    app.get(
      url,
      {
        config: read,
        // The hottest route: it compresses its JSON itself (encodeFor), deciding with one header
        // read, where the plugin's two hooks would cost every read, compressed or not.
        compress: false,
        schema: {
          ...readSchema,
          summary,
          operationId,
          response: { 200: PasteView, ...problems(400, 401, 404, 410, 429) },
        },
      },
      (request, reply) => {
        // The hot path: a cached public paste is answered without a single await.
        const entry = reads.peek(request.params.short_url);
        if (entry?.open) {
          if (request.method !== 'HEAD') reads.countView(entry);
          sendOpenJson(request, reply, reads, entry, compressionMinBytes);
          return;
        }
        return (async () => {
          const outcome = await pastes.read(request.params.short_url, readerOf(request));
          if (outcome.kind === 'preview') previewReply(reply);
          else if (!outcome.entry.open) {
            reply.header('cache-control', 'no-store');
            sendJson(request, reply, reads.json(outcome.entry), compressionMinBytes);
          } else sendOpenJson(request, reply, reads, outcome.entry, compressionMinBytes);
          return reply;
        })();
      },
    );
  }

  app.get(
    '/api/v1/paste/languages',
    {
      config: { access: { public: true } },
      schema: {
        tags,
        summary: 'The syntax labels `syntax` accepts (highlight.js languages; their aliases work too)',
        response: { 200: Languages },
      },
    },
    async () => ({ languages: LANGUAGES }),
  );

  app.get(
    '/:short_url/raw',
    {
      config: read,
      schema: {
        tags,
        summary: 'The paste as text/plain (with ETag; ?download=1 for an attachment)',
        description:
          'An end-to-end encrypted paste answers 409 `paste_encrypted` (and is not burned): the server holds ' +
          'only its envelope, which GET /api/v1/paste/{short_url} gives.',
        params: ShortUrlParams,
        headers: ReadHeaders,
        response: {
          200: { content: { 'text/plain': { schema: { type: 'string' } } } },
          ...problems(400, 401, 404, 409, 410, 429),
        },
      },
    },
    (request, reply) => {
      const download = asksForDownload(request.query);
      const entry = reads.peek(request.params.short_url);
      if (entry?.open && !download) {
        if (request.method !== 'HEAD') reads.countView(entry);
        sendRaw(request, reply, entry, false);
        return;
      }
      return (async () => {
        const shortUrl = request.params.short_url;
        const outcome = await pastes.read(
          shortUrl,
          readerOf(request, undefined, cookies.unlocked(request, shortUrl)),
          { text: true },
        );
        if (outcome.kind === 'preview') previewReply(reply);
        else sendRaw(request, reply, outcome.entry, download);
        return reply;
      })();
    },
  );
};

/** Delete (owner or delete token), sign-up, and the owner's list. */
const ownerRoutes: FastifyPluginAsyncTypebox<PasteApiOptions> = async (app, { pastes }) => {
  app.delete(
    '/api/v1/paste/:short_url',
    {
      // The delete token is checked by the service: the route itself is open to anyone.
      config: { access: PUBLIC_OR_OWNER },
      schema: {
        tags,
        summary: "Delete a paste (the owner's API key or its delete_token)",
        description: 'Soft delete: reads answer 410 until the cleanup purges it 24 h later, then 404.',
        params: ShortUrlParams,
        headers: DeleteHeaders,
        response: { 204: { type: 'null', description: 'Deleted' }, ...problems(400, 401, 403, 404, 410) },
      },
    },
    async (request, reply) => {
      const token = request.headers['x-delete-token'];
      await pastes.deletePaste(request.params.short_url, {
        user: accountOf(request),
        deleteToken: typeof token === 'string' ? token : undefined,
      });
      noContent(reply);
      return reply;
    },
  );

  app.post(
    '/api/v1/users',
    {
      // Sign-up: limited per address in the service (PASTE_RATE_SIGNUP).
      config: { access: { public: true }, openapi: { rateLimited: true } },
      schema: {
        tags,
        summary: 'Create a user; the answer shows its API key once',
        body: CreateUserBody,
        response: { 201: CreatedUser, ...problems(400, 409, 429) },
      },
    },
    async (request, reply) => {
      const { policy, decision } = await pastes.spendSignup(request.ip);
      setRateLimitHeaders(reply, policy, decision);
      if (!decision.allowed) throw pasteError('too_many_signups');
      return reply.code(201).send(await pastes.createUser(request.body.email));
    },
  );

  app.get(
    '/api/v1/users/me/pastes',
    {
      config: { access: OWNER_ONLY },
      schema: {
        tags,
        summary: "The caller's live pastes, newest first",
        querystring: MyPastesQuery,
        response: { 200: MyPastes, ...problems(400, 401) },
      },
    },
    async (request) => {
      const user = accountOf(request);
      // The route's access makes the platform refuse a request without the key; this only narrows.
      if (!user) throw pasteError('credentials_required');
      return pastes.listMine(user, request.query.limit, request.query.cursor, request.publicOrigin);
    },
  );
};

/** `?download` (any value) asks for an attachment; the raw route has no query schema. */
function asksForDownload(query: unknown): boolean {
  return typeof query === 'object' && query !== null && 'download' in query;
}

/*
 * These send what the routes' response schemas describe in a form the schema types do not
 * cover (a body rendered once and kept as a string, a 204 without a body), so they take the
 * untyped reply; the routes return that same reply.
 */

/** The JSON body is rendered once per paste and kept as a string (reads.ts), so it is sent as is. */
function sendJson(request: FastifyRequest, reply: FastifyReply, body: string, minBytes: number | undefined) {
  reply.type(JSON_TYPE).send(encodeFor(request, reply, body, minBytes));
}

/** A paste anyone may read: its validator, and a 304 when the client holds this version. */
function sendOpenJson(
  request: FastifyRequest,
  reply: FastifyReply,
  reads: PasteReads,
  entry: LocalEntry,
  minBytes: number | undefined,
) {
  if (conditional(request, reply, entry.jsonEtag)) reply.send();
  else sendJson(request, reply, reads.json(entry), minBytes);
}

function noContent(reply: FastifyReply) {
  reply.code(204).send();
}

export function previewReply(reply: FastifyReply) {
  // A preview of a burn-after-read paste learns that it exists, nothing more, and burns nothing.
  return reply
    .header('cache-control', 'no-store')
    .type(TEXT_TYPE)
    .send('This paste is deleted after it is read once. Open it in a browser to read it.\n');
}

export function sendRaw(request: FastifyRequest, reply: FastifyReply, entry: LocalEntry, download: boolean) {
  const { paste } = entry;
  // Never a max-age: a paste can be deleted at any time, and a cache must not outlive that.
  if (!entry.open) reply.header('cache-control', 'private, no-store');
  if (download) reply.header('content-disposition', `attachment; filename="${paste.short_url}.txt"`);
  if (conditional(request, reply, entry.etag)) return reply.send();
  return reply.type(TEXT_TYPE).send(paste.content);
}
