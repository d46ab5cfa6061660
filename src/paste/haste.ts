import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyError, FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../platform/errors.ts';
import { sendProblem } from '../platform/http/problem.ts';
import { PUBLIC_OR_OWNER, readerOf } from './accounts.ts';
import { commandLineInput } from './commandline.ts';
import { createProblem, createRouteOptions, spendAndCreate, usePutBodyParsers } from './create.ts';
import { pasteError } from './errors.ts';
import type { PasteReads } from './reads.ts';
import { previewReply, sendRaw } from './routes.ts';
import { CreatePasteQuery, problems, ReadHeaders } from './schemas.ts';
import type { PasteService } from './service.ts';

/**
 * The haste (hastebin) API, so hastebin clients and editor plugins work against this service as
 * they are: `POST /documents` (the body is the text) → 200 `{"key"}`, `GET /documents/{key}` →
 * `{"key","data"}`, `GET /raw/{key}` → the text. The key is the paste's short_url; a haste key may
 * carry a file extension (`abc123.py`), which is ignored, as haste-server does. Creates are the
 * paste service's (limits, rate limits, spam rules, Idempotency-Key), reads its checks.
 *
 * Two things follow the published client rather than the rest of this API: a create answers 200,
 * not 201 (the `haste` gem checks `status == 200`), and every problem+json answer carries the
 * haste server's `message` member (its clients show `message` on errors), here the problem's
 * detail.
 */
const tags = ['paste'];

const HasteKey = Type.Object({
  key: Type.String({
    pattern: '^[0-9A-Za-z]{1,8}(\\.[0-9A-Za-z_+-]{1,20})?$',
    description: 'The paste short_url, optionally with a file extension (`abc123.py`), which is ignored',
  }),
});

const HasteCreated = Type.Object({ key: Type.String({ description: 'The paste short_url' }) });
const HasteDocument = Type.Object({
  key: Type.String({ description: 'The paste short_url' }),
  data: Type.String({ description: 'The text' }),
});

const RawText = Type.String({
  description: 'The text itself, UTF-8, at most 10 MB, whatever the media type says',
});
/** What the haste client sends: the text as the body with any media type, or none at all. */
const hasteBody = Type.Unsafe<string>({
  content: {
    'text/plain': { schema: RawText },
    'application/x-www-form-urlencoded': {
      schema: {
        type: 'string',
        description: 'What the `haste` gem sends (Ruby net/http labels a raw body so)',
      },
    },
    'application/octet-stream': { schema: RawText },
  },
});

const hasteProblems = (...statuses: number[]) => problems(...statuses);
const PROBLEM_NOTE =
  ' Errors are problem+json with a `message` member as well (what haste clients show), equal to `detail`.';

export interface HasteOptions {
  pastes: PasteService;
  reads: PasteReads;
}

export const hasteRoutes: FastifyPluginAsyncTypebox<HasteOptions> = async (scope, { pastes }) => {
  usePutBodyParsers(scope, { errorHandler: false });
  useHasteErrors(scope);

  scope.post(
    '/documents',
    {
      ...createRouteOptions,
      config: {
        ...createRouteOptions.config,
        openapi: { rateLimited: true, headers: { 200: ['Location', 'X-Delete-Token'] as const } },
      },
      schema: {
        tags,
        summary: 'Create a paste (haste API: hastebin clients and editor plugins)',
        description:
          'The body is the text, whatever its media type (the `haste` gem sends x-www-form-urlencoded or none). ' +
          'Answers 200 `{"key"}` (haste clients check for 200), the delete token in X-Delete-Token. Options ' +
          'as POST /api/v1/paste in the query string; limits, rate limits and Idempotency-Key as there.' +
          PROBLEM_NOTE,
        body: hasteBody,
        querystring: CreatePasteQuery,
        response: { 200: HasteCreated, ...hasteProblems(400, 401, 413, 415, 422, 429) },
      },
    },
    async (request, reply) => {
      const { body } = request;
      if (typeof body !== 'string' || body.length === 0) {
        throw pasteError('invalid_option', {
          detail: 'The body is empty: send the text itself',
          extras: { errors: [{ field: 'content', message: 'must not be empty' }] },
        });
      }
      const input = commandLineInput(body, request.query, request.headers['x-paste-password']);
      const created = await spendAndCreate(pastes, request, reply, input);
      return reply
        .code(200)
        .header('location', `/documents/${created.short_url}`)
        .header('x-delete-token', created.delete_token)
        .send({ key: created.short_url });
    },
  );

  const read = { access: PUBLIC_OR_OWNER, openapi: { rateLimited: true } } as const;
  const readDescription =
    'The read checks of GET /api/v1/paste/{short_url}: unknown → 404, gone → 410, private → 404 but to the ' +
    'owner, password → X-Paste-Password (401), burn-after-read → this read burns it; an end-to-end encrypted ' +
    'paste → 409 `paste_encrypted` (the server has no text to give).' +
    PROBLEM_NOTE;

  scope.get(
    '/documents/:key',
    {
      config: read,
      schema: {
        tags,
        summary: 'Read a paste as a haste document `{"key","data"}`',
        description: readDescription,
        params: HasteKey,
        headers: ReadHeaders,
        response: { 200: HasteDocument, ...hasteProblems(400, 401, 404, 409, 410, 429) },
      },
    },
    async (request, reply) => {
      const key = shortUrlOf(request.params.key);
      const outcome = await pastes.read(key, readerOf(request), { text: true });
      if (outcome.kind === 'preview') return previewReply(reply);
      if (!outcome.entry.open) reply.header('cache-control', 'private, no-store');
      return reply.send({ key, data: outcome.entry.paste.content });
    },
  );

  scope.get(
    '/raw/:key',
    {
      // sendRaw answers with the content's ETag and a 304 to If-None-Match, as /{short_url}/raw.
      config: { ...read, openapi: { ...read.openapi, conditional: true } },
      schema: {
        tags,
        summary: 'Read a paste as text/plain (haste API)',
        description: readDescription,
        params: HasteKey,
        headers: ReadHeaders,
        response: {
          200: { content: { 'text/plain': { schema: { type: 'string' } } } },
          ...hasteProblems(400, 401, 404, 409, 410, 429),
        },
      },
    },
    async (request, reply) => {
      const outcome = await pastes.read(shortUrlOf(request.params.key), readerOf(request), { text: true });
      if (outcome.kind === 'preview') return previewReply(reply);
      return sendRaw(request, reply, outcome.entry, false);
    },
  );

  // The `haste` gem prints `$HASTE_SHARE_SERVER/share/{key}`: that link opens the paste page.
  scope.get<{ Params: { key: string } }>(
    '/share/:key',
    { schema: { hide: true }, config: { access: { public: true } } },
    async (request, reply) => {
      const key = /^[0-9A-Za-z]{1,8}/.exec(request.params.key)?.[0];
      if (!key) throw pasteError('paste_not_found', 'No such paste');
      return reply.redirect(`/${key}`, 302);
    },
  );
};

/** haste keys may end in a file extension (`abc123.js`), which names no other paste. */
function shortUrlOf(key: string): string {
  const dot = key.indexOf('.');
  return dot === -1 ? key : key.slice(0, dot);
}

/**
 * The create scope's error handler (limits, media types) with haste's `message` member added: a
 * haste client reads `message` from an error's JSON body.
 */
function useHasteErrors(scope: FastifyInstance) {
  scope.setErrorHandler((error: FastifyError, request, reply) => {
    const known = createProblem(error);
    if (known.status >= 500) request.log.error({ err: error, code: known.code }, 'request failed');
    return sendProblem(reply, withMessage(known));
  });
}

function withMessage(error: AppError): AppError {
  return new AppError(
    error.code,
    { status: error.status, title: error.title },
    { detail: error.message, extras: { ...error.extras, message: error.message }, headers: error.headers },
  );
}
