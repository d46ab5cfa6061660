import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../platform/clock.ts';
import { AppError } from '../platform/errors.ts';
import { sendProblem, toAppError } from '../platform/http/problem.ts';
import { setRateLimitHeaders } from '../platform/ratelimit/headers.ts';
import { accountOf, OWNER_ONLY, PUBLIC_OR_OWNER } from './accounts.ts';
import { textFromBytes, tooLarge } from './content.ts';
import { pasteError } from './errors.ts';
import { LANGUAGES } from './highlight.ts';
import type { LocalEntry, PasteReads } from './reads.ts';
import {
  CreatedPaste,
  CreatedUser,
  type CreatePasteBody,
  type CreatePasteQuery,
  CreatePasteQuery as CreatePasteQuerySchema,
  CreateUserBody,
  createBody,
  DeleteHeaders,
  Languages,
  MyPastes,
  MyPastesQuery,
  PasteView,
  problems,
  ReadHeaders,
  ShortUrlParams,
} from './schemas.ts';
import type { CreateInput, PasteService, Reader } from './service.ts';
import { MAX_CONTENT_BYTES } from './settings.ts';

const JSON_TYPE = 'application/json; charset=utf-8';
const TEXT_TYPE = 'text/plain; charset=utf-8';
/** JSON escapes (\n, \", \\) make the wire form larger than the text; the 10 MB content limit is checked after parsing. */
const JSON_WIRE_LIMIT = 2 * MAX_CONTENT_BYTES + 64 * 1024;
const RAW_TYPES = ['text/plain', 'application/octet-stream', 'application/x-www-form-urlencoded'];

/** Link-preview fetchers (chat apps, social networks, search engines): they must never burn a paste. */
const PREVIEW_AGENTS =
  /bot\b|crawler|spider|slurp|facebookexternalhit|facebot|twitterbot|slackbot|slack-imgproxy|discordbot|telegrambot|whatsapp|linkedinbot|skypeuripreview|embedly|iframely|mattermost|pinterest|vkshare|redditbot|applebot|google-safety|bingpreview|outlook|teams|preview/i;

export function isPreview(request: FastifyRequest): boolean {
  return request.method === 'HEAD' || PREVIEW_AGENTS.test(request.headers['user-agent'] ?? '');
}

/** The reader of a request; its account is the one the platform's auth hook proved (accounts.ts). */
export function readerOf(request: FastifyRequest, password?: string): Reader {
  const header = request.headers['x-paste-password'];
  return {
    user: accountOf(request),
    ip: request.ip,
    password: password ?? (typeof header === 'string' ? header : undefined),
    preview: isPreview(request),
  };
}

/** The JSON API: create, read, raw, delete, users. Pages are in pages.ts. */
export async function pasteApiRoutes(
  app: FastifyInstance,
  service: PasteService,
  reads: PasteReads,
  clock: Clock,
) {
  await app.register(async (scope) => createRoutes(scope, service));

  const readSchema = {
    tags: ['paste'],
    summary: 'Read a paste',
    description:
      'Unknown → 404; expired or deleted → 410 until purged, then 404; private → 404 unless the owner asks ' +
      '(Authorization: Bearer); password-protected → 401 without the right X-Paste-Password (wrong ones are ' +
      'limited per IP: 429). A burn-after-read paste is deleted by this read, except for HEAD and link-preview bots.',
    params: ShortUrlParams,
    headers: ReadHeaders,
    response: { 200: PasteView, ...problems(400, 401, 404, 410, 429) },
  };
  const readJson = function (
    this: unknown,
    request: FastifyRequest<{ Params: { short_url: string } }>,
    reply: FastifyReply,
  ) {
    // The hot path: a cached public paste is answered without a single await.
    const entry = reads.peek(request.params.short_url);
    if (entry?.open) {
      if (request.method !== 'HEAD') reads.countView(entry);
      return reply.type(JSON_TYPE).send(reads.json(entry));
    }
    return slowJson(request, reply);
  };
  async function slowJson(request: FastifyRequest<{ Params: { short_url: string } }>, reply: FastifyReply) {
    const outcome = await service.read(request.params.short_url, readerOf(request));
    if (outcome.kind === 'preview') return previewReply(reply);
    reply.header('cache-control', 'no-store');
    return reply.type(JSON_TYPE).send(reads.json(outcome.entry));
  }
  // The platform's check passes a read without Authorization on without a promise, so the cached
  // hot path above stays free of awaits; the owner's key is proven only when one is sent.
  const read = { access: PUBLIC_OR_OWNER };
  app.get('/api/v1/paste/:short_url', { config: read, schema: readSchema }, readJson);
  app.get(
    '/paste/:short_url',
    { config: read, schema: { ...readSchema, summary: 'Read a paste (alias)' } },
    readJson,
  );

  app.get(
    '/api/v1/paste/languages',
    {
      config: { access: { public: true } },
      schema: {
        tags: ['paste'],
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
        tags: ['paste'],
        summary: 'The paste as text/plain (with ETag; ?download=1 for an attachment)',
        params: ShortUrlParams,
        headers: ReadHeaders,
        response: {
          200: { content: { 'text/plain': { schema: { type: 'string' } } } },
          ...problems(400, 401, 404, 410, 429),
        },
      },
    },
    (
      request: FastifyRequest<{ Params: { short_url: string }; Querystring: { download?: string } }>,
      reply,
    ) => {
      const entry = reads.peek(request.params.short_url);
      if (entry?.open && request.query.download === undefined) {
        if (request.method !== 'HEAD') reads.countView(entry);
        return sendRaw(request, reply, entry, false, clock);
      }
      return (async () => {
        const outcome = await service.read(request.params.short_url, readerOf(request));
        if (outcome.kind === 'preview') return previewReply(reply);
        return sendRaw(request, reply, outcome.entry, request.query.download !== undefined, clock);
      })();
    },
  );

  app.delete(
    '/api/v1/paste/:short_url',
    {
      // The delete token is checked by the service: the route itself is open to anyone.
      config: { access: PUBLIC_OR_OWNER },
      schema: {
        tags: ['paste'],
        summary: "Delete a paste (the owner's API key or its delete_token)",
        description: 'Soft delete: reads answer 410 until the cleanup purges it 24 h later, then 404.',
        params: ShortUrlParams,
        headers: DeleteHeaders,
        response: { 204: { type: 'null', description: 'Deleted' }, ...problems(400, 401, 403, 404, 410) },
      },
    },
    async (request: FastifyRequest<{ Params: { short_url: string } }>, reply) => {
      const token = request.headers['x-delete-token'];
      await service.deletePaste(request.params.short_url, {
        user: accountOf(request),
        deleteToken: typeof token === 'string' ? token : undefined,
      });
      return reply.code(204).send();
    },
  );

  app.post(
    '/api/v1/users',
    {
      // Sign-up: limited per address in the service (PASTE_RATE_SIGNUP).
      config: { access: { public: true } },
      schema: {
        tags: ['paste'],
        summary: 'Create a user; the answer shows its API key once',
        body: CreateUserBody,
        response: { 201: CreatedUser, ...problems(400, 409, 429) },
      },
    },
    async (request: FastifyRequest<{ Body: CreateUserBody }>, reply) =>
      reply.code(201).send(await service.createUser(request.body.email, request.ip)),
  );

  app.get(
    '/api/v1/users/me/pastes',
    {
      config: { access: OWNER_ONLY },
      schema: {
        tags: ['paste'],
        summary: "The caller's live pastes, newest first",
        querystring: MyPastesQuery,
        response: { 200: MyPastes, ...problems(400, 401) },
      },
    },
    async (request: FastifyRequest<{ Querystring: MyPastesQuery }>) => {
      const user = accountOf(request);
      // The route's access makes the platform refuse a request without the key; this only narrows.
      if (!user) throw pasteError('credentials_required');
      return service.listMine(user, request.query.limit, request.query.cursor);
    },
  );
}

function previewReply(reply: FastifyReply) {
  // A preview of a burn-after-read paste learns that it exists, nothing more, and burns nothing.
  return reply
    .header('cache-control', 'no-store')
    .type(TEXT_TYPE)
    .send('This paste is deleted after it is read once. Open it in a browser to read it.\n');
}

function sendRaw(
  request: FastifyRequest,
  reply: FastifyReply,
  entry: LocalEntry,
  download: boolean,
  clock: Clock,
) {
  const { paste } = entry;
  if (entry.open) {
    const seconds = Math.floor(Math.min(86_400_000, entry.expiresAtMs - clock.now().getTime()) / 1000);
    reply.header('cache-control', `public, max-age=${Math.max(0, seconds)}`);
  } else {
    reply.header('cache-control', 'private, no-store');
  }
  reply.header('etag', entry.etag);
  if (download) reply.header('content-disposition', `attachment; filename="${paste.short_url}.txt"`);
  if (request.headers['if-none-match'] === entry.etag) return reply.code(304).send();
  return reply.type(TEXT_TYPE).send(paste.content);
}

type CreateRequest = FastifyRequest<{ Body: CreatePasteBody | string; Querystring: CreatePasteQuery }>;

/** POST /api/v1/paste and /paste: JSON, or the raw text with the options in the query string. */
function createRoutes(scope: FastifyInstance, service: PasteService) {
  // Parsers of this scope only: the curl one-liner's x-www-form-urlencoded body is the file, not a form.
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser(
    'application/json',
    { parseAs: 'string', bodyLimit: JSON_WIRE_LIMIT },
    scope.getDefaultJsonParser('error', 'error'),
  );
  scope.addContentTypeParser(
    RAW_TYPES,
    { parseAs: 'buffer', bodyLimit: MAX_CONTENT_BYTES },
    (request, body, done) => {
      const charset = /charset\s*=\s*"?([\w-]+)/i
        .exec(request.headers['content-type'] ?? '')?.[1]
        ?.toLowerCase();
      if (charset && charset !== 'utf-8' && charset !== 'utf8' && charset !== 'us-ascii') {
        return done(
          pasteError('unsupported_media_type', `Only UTF-8 text is accepted, not charset=${charset}`),
        );
      }
      try {
        done(null, textFromBytes(body as Buffer));
      } catch (error) {
        done(error as Error);
      }
    },
  );
  scope.setErrorHandler((error: FastifyError, request, reply) => {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return sendProblem(reply, tooLarge());
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return sendProblem(
        reply,
        pasteError(
          'unsupported_media_type',
          'Send JSON ({"content": "..."}) or the text itself as text/plain or application/octet-stream',
        ),
      );
    }
    const appError = toAppError(error);
    if (appError.status >= 500) request.log.error({ err: error, code: appError.code }, 'request failed');
    return sendProblem(reply, appError);
  });

  const schema = {
    tags: ['paste'],
    summary: 'Create a paste',
    description:
      'JSON `{content, syntax?, expires_in?, is_private?, password?, burn_after_read?}` answers JSON; a raw text body ' +
      '(`curl --data-binary @file …/paste`) answers the URL as text/plain, with the delete token in X-Delete-Token. ' +
      'Limits: 10 MB of UTF-8 (413, refused before the body is read when Content-Length says so), text only ' +
      '(422), creates per IP or per API key (429 with Retry-After).',
    body: createBody,
    querystring: CreatePasteQuerySchema,
    response: {
      201: {
        content: {
          'application/json': { schema: CreatedPaste },
          'text/plain': { schema: { type: 'string' } },
        },
      },
      ...problems(400, 401, 413, 415, 422, 429),
    },
  };
  const handler = async (request: CreateRequest, reply: FastifyReply) => {
    const owner = accountOf(request);
    if (request.body === undefined || request.body === null) {
      throw pasteError('invalid_option', {
        detail: 'The body is empty: send JSON {"content": "…"} or the text itself as text/plain',
        extras: { errors: [{ field: 'body', message: 'is required' }] },
      });
    }
    const raw = typeof request.body === 'string';
    const input: CreateInput = raw ? rawInput(request) : (request.body as CreatePasteBody);
    const { policy, decision } = await service.spendCreateAllowance(owner, request.ip);
    setRateLimitHeaders(reply, policy, decision);
    if (!decision.allowed) {
      throw pasteError('too_many_pastes', {
        detail: `At most ${policy.points} pastes per ${policy.durationSec} s`,
      });
    }
    let created: Awaited<ReturnType<PasteService['create']>>;
    try {
      created = await service.create(input, owner);
    } catch (error) {
      // A refused paste costs nothing from the allowance.
      if (error instanceof AppError && error.status < 500)
        await service.refundCreateAllowance(policy, owner, request.ip);
      throw error;
    }
    reply.code(201).header('location', `/api/v1/paste/${created.short_url}`);
    if (!raw) return reply.send(created);
    return reply.header('x-delete-token', created.delete_token).type(TEXT_TYPE).send(`${created.url}\n`);
  };
  // Anonymous by design (limited per address); the owner's key makes the paste theirs. A raw
  // create may carry its password in the query string, so access logs show the path alone.
  const config = { access: PUBLIC_OR_OWNER, idempotency: { scope: 'paste.create' }, redactUrl: true };
  // Schema errors are attached rather than thrown so that emptyContentCheck, the first preHandler
  // (before the idempotency one), can throw them together with its own.
  const options = { config, attachValidation: true, preHandler: emptyContentCheck };
  scope.post('/api/v1/paste', { schema, ...options }, handler);
  scope.post(
    '/paste',
    { schema: { ...schema, summary: 'Create a paste (alias; the curl one-liner)' }, ...options },
    handler,
  );
}

const EMPTY_CONTENT = {
  instancePath: '/content',
  schemaPath: '#/properties/content/minLength',
  keyword: 'minLength',
  params: { limit: 1 },
  message: 'must NOT have fewer than 1 characters',
};

/**
 * JSON `content` must not be empty. The schema cannot say so cheaply: ajv's `minLength: 1` counts
 * every code point of the string (a loop over the whole 10 KB, ~8 % of a create's CPU in the
 * paste-create profile) to compare the count with 1. This throws the 400 that schema gave, with
 * the same errors in ajv's order: the body's own (unknown fields), then content's, then the other
 * fields'; and a body error hides the query string's, which ajv checks after the body.
 */
async function emptyContentCheck(request: CreateRequest) {
  const body = request.body as { content?: unknown } | null | undefined;
  const failed = request.validationError;
  // JSON bodies are not coerced (validation.ts): a content that is not a string failed the schema.
  if (typeof body !== 'object' || body === null || Array.isArray(body) || body.content !== '') {
    if (failed) throw failed;
    return;
  }
  if (failed?.validationContext === 'body') {
    const issues = failed.validation as { instancePath: string }[];
    issues.splice(issues.filter((issue) => issue.instancePath === '').length, 0, EMPTY_CONTENT);
    throw failed;
  }
  throw Object.assign(new Error('body/content must NOT have fewer than 1 characters'), {
    statusCode: 400,
    code: 'FST_ERR_VALIDATION',
    validation: [EMPTY_CONTENT],
    validationContext: 'body',
  });
}

function rawInput(request: CreateRequest): CreateInput {
  const content = request.body as string;
  if (content.length === 0) {
    throw pasteError('invalid_option', {
      detail: 'The body is empty',
      extras: { errors: [{ field: 'content', message: 'must not be empty' }] },
    });
  }
  const header = request.headers['x-paste-password'];
  return {
    ...request.query,
    content,
    password: request.query.password ?? (typeof header === 'string' ? header : undefined),
  };
}
