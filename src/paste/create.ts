import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../platform/errors.ts';
import { sendProblem, toAppError } from '../platform/http/problem.ts';
import { setRateLimitHeaders } from '../platform/ratelimit/headers.ts';
import { accountOf, PUBLIC_OR_OWNER } from './accounts.ts';
import {
  commandLineInput,
  MULTIPART_OVERHEAD,
  PageForm,
  pageFormOf,
  parseUpload,
  sendCreatedText,
} from './commandline.ts';
import { textFromBytes, tooLarge } from './content.ts';
import { pasteError } from './errors.ts';
import type { CreatePasteQuery } from './schemas.ts';
import type { CreateInput, PasteService } from './service.ts';
import { MAX_CONTENT_BYTES } from './settings.ts';

/** JSON escapes (\n, \", \\) make the wire form larger than the text; the 10 MB content limit is checked after parsing. */
const JSON_WIRE_LIMIT = 2 * MAX_CONTENT_BYTES + 64 * 1024;
const RAW_TYPES = ['text/plain', 'application/octet-stream'];
/** Form encoding can triple the size of the text; the create form's 10 MB is checked on the decoded text. */
const PAGE_FORM_LIMIT = 3 * MAX_CONTENT_BYTES + 64 * 1024;

/**
 * The create routes' own body parsers and error handler, for the scope they are registered in:
 * the curl one-liner's x-www-form-urlencoded body is the file, not a form, and a raw body is the
 * UTF-8 text itself; multipart/form-data is `curl -F file=@f` (commandline.ts). With `pageForm`
 * (POST /, where the create form posts), an x-www-form-urlencoded body that is the form is read
 * as one (`PageForm`), and any other is the text.
 */
export function useCreateBodyParsers(scope: FastifyInstance, { pageForm = false } = {}) {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser(
    'application/json',
    { parseAs: 'string', bodyLimit: JSON_WIRE_LIMIT },
    scope.getDefaultJsonParser('error', 'error'),
  );
  scope.addContentTypeParser(RAW_TYPES, { parseAs: 'buffer', bodyLimit: MAX_CONTENT_BYTES }, rawText);
  if (pageForm) {
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'buffer', bodyLimit: PAGE_FORM_LIMIT },
      (request, body: Buffer, done) => {
        const fields = pageFormOf(request, body);
        if (fields) done(null, new PageForm(fields));
        else rawText(request, body, done);
      },
    );
  } else {
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'buffer', bodyLimit: MAX_CONTENT_BYTES },
      rawText,
    );
  }
  scope.addContentTypeParser(
    'multipart/form-data',
    { parseAs: 'buffer', bodyLimit: MAX_CONTENT_BYTES + MULTIPART_OVERHEAD },
    (request, body: Buffer, done) => {
      try {
        done(null, parseUpload(body, request.headers['content-type'] ?? ''));
      } catch (error) {
        done(error instanceof Error ? error : new Error(String(error)));
      }
    },
  );
  useCreateErrorHandler(scope);
}

/**
 * `curl -T f host/paste` sends the file without a media type: on a PUT, the body is the file
 * whatever its type says (text only: binary is 422 as everywhere).
 */
export function usePutBodyParsers(scope: FastifyInstance, { errorHandler = true } = {}) {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_CONTENT_BYTES }, rawText);
  // A scope with its own handler (haste.ts) builds on `createProblem` instead.
  if (errorHandler) useCreateErrorHandler(scope);
}

/** A raw body is the UTF-8 text itself (another charset is 415). */
function rawText(request: FastifyRequest, body: Buffer, done: (error: Error | null, body?: unknown) => void) {
  const charset = /charset\s*=\s*"?([\w-]+)/i.exec(request.headers['content-type'] ?? '')?.[1]?.toLowerCase();
  if (charset && charset !== 'utf-8' && charset !== 'utf8' && charset !== 'us-ascii') {
    return done(pasteError('unsupported_media_type', `Only UTF-8 text is accepted, not charset=${charset}`));
  }
  try {
    done(null, textFromBytes(body));
  } catch (error) {
    done(error instanceof Error ? error : new Error(String(error)));
  }
}

function useCreateErrorHandler(scope: FastifyInstance) {
  scope.setErrorHandler((error: FastifyError, request, reply) => {
    const appError = createProblem(error);
    if (appError.code === 'content_too_large' && drainable(request)) reply.removeHeader('connection');
    if (appError.status >= 500) request.log.error({ err: error, code: appError.code }, 'request failed');
    return sendProblem(reply, appError);
  });
}

/**
 * Fastify refuses a body over the limit on its Content-Length and closes the connection, as the
 * client may go on sending. But Node has already told an `Expect: 100-continue` upload (curl's,
 * above 1 MB) to go on, so a close mid-upload shows curl's user "Broken pipe" instead of the 413.
 * An upload a little over the limit is read to its end and dropped instead (Node reads what a
 * handler left unread), and the answer arrives; anything larger still closes the connection.
 */
function drainable(request: FastifyRequest): boolean {
  const length = Number(request.headers['content-length']);
  return Number.isSafeInteger(length) && length <= 2 * MAX_CONTENT_BYTES;
}

/** What a create route answers for an error: the body parsers' limits and media types, then the rest. */
export function createProblem(error: FastifyError): AppError {
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return tooLarge();
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return pasteError(
      'unsupported_media_type',
      'Send JSON ({"content": "..."}), the text itself as text/plain or application/octet-stream, or a file as multipart/form-data',
    );
  }
  return toAppError(error);
}

/**
 * Every create route's options. Anonymous by design (limited per address); the owner's key makes
 * the paste theirs. A command-line create may carry its password in the query string, so access
 * logs show the path alone. Schema errors are attached rather than thrown so that
 * emptyContentCheck, the first preHandler (before the idempotency one), can throw them together
 * with its own.
 */
export const createRouteOptions = {
  config: {
    access: PUBLIC_OR_OWNER,
    idempotency: { scope: 'paste.create' },
    redactUrl: true,
    // What OpenAPI cannot read from the schema (platform/http/openapi.ts).
    openapi: { rateLimited: true, headers: { 201: ['Location', 'X-Delete-Token'] as const } },
  },
  attachValidation: true,
  preHandler: emptyContentCheck,
};

const EMPTY_CONTENT = {
  instancePath: '/content',
  schemaPath: '#/properties/content/minLength',
  keyword: 'minLength',
  params: { limit: 1 },
  message: 'must NOT have fewer than 1 characters',
};

/**
 * JSON `content` must not be empty. The schema cannot say so cheaply: ajv's `minLength: 1` counts
 * every code point of the string (a loop over the whole text, a visible share of a create's CPU)
 * to compare the count with 1. This throws the 400 that schema gave, with the same errors in
 * ajv's order: the body's own (unknown fields), then content's, then the other fields'; and a
 * body error hides the query string's, which ajv checks after the body.
 */
export async function emptyContentCheck(request: FastifyRequest) {
  const body = request.body;
  const failed = request.validationError;
  // JSON bodies are not coerced (validation.ts): a content that is not a string failed the schema.
  if (
    typeof body !== 'object' ||
    body === null ||
    Array.isArray(body) ||
    !('content' in body) ||
    body.content !== ''
  ) {
    if (failed) throw failed;
    return;
  }
  if (failed?.validationContext === 'body') {
    const issues = failed.validation;
    issues.splice(
      issues.filter((issue: { instancePath: string }) => issue.instancePath === '').length,
      0,
      EMPTY_CONTENT,
    );
    throw failed;
  }
  throw Object.assign(new Error('body/content must NOT have fewer than 1 characters'), {
    statusCode: 400,
    code: 'FST_ERR_VALIDATION',
    validation: [EMPTY_CONTENT],
    validationContext: 'body',
  });
}

/**
 * Spends one create from the caller's allowance (with the RateLimit headers), creates the paste,
 * and gives the point back when the paste is refused. The create form does the same (pages).
 */
export async function spendAndCreate(
  pastes: PasteService,
  request: FastifyRequest,
  reply: FastifyReply,
  input: CreateInput,
  owner = accountOf(request),
) {
  const { policy, decision } = await pastes.spendCreateAllowance(owner, request.ip);
  setRateLimitHeaders(reply, policy, decision);
  if (!decision.allowed) {
    throw pasteError('too_many_pastes', {
      detail: `At most ${policy.points} pastes per ${policy.durationSec} s`,
    });
  }
  try {
    return await pastes.create(input, owner, request.publicOrigin);
  } catch (error) {
    // A refused paste costs nothing from the allowance.
    if (error instanceof AppError && error.status < 500)
      await pastes.refundCreateAllowance(policy, owner, request.ip);
    throw error;
  }
}

/**
 * A create from the command line (a raw body, an upload, a PUT): options from the upload's fields
 * and the query string, the password also from X-Paste-Password; answered with the URL as text.
 */
export async function createFromCommandLine(
  pastes: PasteService,
  request: FastifyRequest,
  reply: FastifyReply,
  body: string | Record<string, unknown>,
) {
  const input = commandLineInput(
    body,
    request.query as CreatePasteQuery,
    request.headers['x-paste-password'],
  );
  return sendCreatedText(reply, await spendAndCreate(pastes, request, reply, input));
}
