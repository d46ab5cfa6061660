import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../platform/errors.ts';
import { sendProblem, toAppError } from '../platform/http/problem.ts';
import { setRateLimitHeaders } from '../platform/ratelimit/headers.ts';
import { accountOf } from './accounts.ts';
import { textFromBytes, tooLarge } from './content.ts';
import { pasteError } from './errors.ts';
import type { CreateInput, PasteService } from './service.ts';
import { MAX_CONTENT_BYTES } from './settings.ts';

/** JSON escapes (\n, \", \\) make the wire form larger than the text; the 10 MB content limit is checked after parsing. */
const JSON_WIRE_LIMIT = 2 * MAX_CONTENT_BYTES + 64 * 1024;
const RAW_TYPES = ['text/plain', 'application/octet-stream', 'application/x-www-form-urlencoded'];

/**
 * The create routes' own body parsers and error handler, for the scope they are registered in:
 * the curl one-liner's x-www-form-urlencoded body is the file, not a form, and a raw body is the
 * UTF-8 text itself.
 */
export function useCreateBodyParsers(scope: FastifyInstance) {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser(
    'application/json',
    { parseAs: 'string', bodyLimit: JSON_WIRE_LIMIT },
    scope.getDefaultJsonParser('error', 'error'),
  );
  scope.addContentTypeParser(
    RAW_TYPES,
    { parseAs: 'buffer', bodyLimit: MAX_CONTENT_BYTES },
    (request, body: Buffer, done) => {
      const charset = /charset\s*=\s*"?([\w-]+)/i
        .exec(request.headers['content-type'] ?? '')?.[1]
        ?.toLowerCase();
      if (charset && charset !== 'utf-8' && charset !== 'utf8' && charset !== 'us-ascii') {
        return done(
          pasteError('unsupported_media_type', `Only UTF-8 text is accepted, not charset=${charset}`),
        );
      }
      try {
        done(null, textFromBytes(body));
      } catch (error) {
        done(error instanceof Error ? error : new Error(String(error)));
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
    return await pastes.create(input, owner);
  } catch (error) {
    // A refused paste costs nothing from the allowance.
    if (error instanceof AppError && error.status < 500)
      await pastes.refundCreateAllowance(policy, owner, request.ip);
    throw error;
  }
}
