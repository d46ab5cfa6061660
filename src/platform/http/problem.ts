import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type {
  ConnectionError,
  FastifyBaseLogger,
  FastifyError,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  preHandlerHookHandler,
} from 'fastify';
import { Type } from 'typebox';
import { AppError, isUnavailableError, platformError } from '../errors.ts';
import { registerRouteMethods } from './methods.ts';
import { newRequestId, requestIdFor } from './request-id.ts';

export const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  code: string;
  requestId: string;
  [extra: string]: unknown;
}

/** What the Problem schema says of itself (a route answering with it is documented by its status instead). */
export const PROBLEM_SCHEMA_DESCRIPTION =
  'RFC 9457 problem details; members beyond these say more about this problem (e.g. `errors`, `payment_status`)';

/** The one problem document, for /docs (openapi.ts) and for routes that list their error responses. */
export const ProblemSchema = Type.Object(
  {
    type: Type.String({ description: 'The kind of problem: /problems/<code>' }),
    title: Type.String({ description: 'The same for every problem of this type' }),
    status: Type.Integer({ description: 'The HTTP status code' }),
    detail: Type.String({ description: 'This occurrence, in words' }),
    instance: Type.String({ description: 'This occurrence: urn:request:<requestId>' }),
    code: Type.String({ description: 'The stable snake_case code (the last segment of type)' }),
    requestId: Type.String({ description: 'Also the x-request-id header and every log line of the request' }),
    errors: Type.Optional(
      Type.Array(
        Type.Object({
          field: Type.String({
            description:
              'The member at fault: for a schema failure the request part and path (`body.timezone`, `querystring.limit`, `headers.idempotency-key`), for a rule of the service the body member (`timezone`, `quiet_hours_end`)',
          }),
          message: Type.String({ description: 'What is wrong with it, in words that follow the field name' }),
        }),
        {
          description:
            'Per-field problems of a refused request (validation_failed, invalid_preferences and other 400/422 answers), so a form can show each at its field',
        },
      ),
    ),
  },
  { additionalProperties: true, description: PROBLEM_SCHEMA_DESCRIPTION },
);

/** The members every problem has; an extension field never replaces one of them. */
const CORE_MEMBERS = ['type', 'title', 'status', 'detail', 'instance', 'code', 'requestId'] as const;

/**
 * The problem document of an error: its core members, then its extension members. An extension
 * named like a core member (`status`, `type`, …) would change what the problem says about itself
 * (a client reads `status` as the HTTP status), so it is moved under `extensions` instead. Moved
 * rather than refused or dropped: the clash is only seen while answering, and throwing there would
 * turn a true 402 into a 500 (the booking is FAILED either way), while dropping would lose the
 * value without a trace; under `extensions` it stays readable and the core members stay true.
 *
 * `type` is a relative reference with its full path, as RFC 9457 §3.1.1 allows. `instance`
 * (§3.1.5, "identifies the specific occurrence") is the request id as a URN: unique per occurrence
 * where the path is not (every declined card on /api/v1/bookings has the same path), the key our
 * logs are searched by, and free of what a path can carry (paste links, payment ids are
 * capabilities). A generic RFC 9457 client that knows no `requestId` still shows or logs it.
 */
export function problemFor(error: AppError, requestId: string): Problem {
  const core = {
    type: `/problems/${error.code}`,
    title: error.title,
    status: error.status,
    detail: error.message,
    instance: `urn:request:${requestId}`,
    code: error.code,
    requestId,
  };
  const extras = error.extras;
  if (!CORE_MEMBERS.some((name) => Object.hasOwn(extras, name))) return { ...core, ...extras };
  const rest: Record<string, unknown> = { ...extras };
  const moved: Record<string, unknown> = {};
  for (const name of CORE_MEMBERS) {
    if (!Object.hasOwn(rest, name)) continue;
    moved[name] = rest[name];
    delete rest[name];
  }
  const own = rest.extensions;
  return {
    ...core,
    ...rest,
    extensions: typeof own === 'object' && own !== null ? { ...own, ...moved } : moved,
  };
}

export function sendProblem(reply: FastifyReply, error: AppError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  reply.code(error.status);
  if (prefersHtml(reply.request.headers.accept) && typeof reply.page === 'function') {
    return reply.page('/platform/pages/message', errorPage(error, reply.request.id));
  }
  return reply.type(PROBLEM_TYPE).send(problemFor(error, reply.request.id));
}

/**
 * A browser navigating (its Accept names `text/html` ahead of any JSON type) gets the error as a
 * page with a way back; every API client (JSON types, `*\/*`, no Accept — curl, fetch) keeps
 * problem+json. The page says the same: status, title, detail and the request id.
 */
export function prefersHtml(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  const html = accept.indexOf('text/html');
  if (html === -1 || /text\/html\s*;\s*q=0(\.0*)?\s*(,|$)/.test(accept)) return false;
  const json = accept.search(/application\/(problem\+)?json/);
  return json === -1 || html < json;
}

function errorPage(error: AppError, requestId: string) {
  const server = error.status >= 500;
  return {
    title: `${error.status} ${error.title}`,
    heading: error.title,
    message: error.message,
    tone: 'bad',
    reference: server
      ? `If it happens again, tell us this request id: ${requestId}`
      : `Request id: ${requestId}`,
    link: { href: '/', title: 'Back to the home page' },
  };
}

/** Turns anything thrown into an AppError: ours as they are, Fastify's by their code, the rest as 500. */
export function toAppError(error: FastifyError | AppError | Error): AppError {
  if (error instanceof AppError) return error;
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) {
    const where = fastifyError.validationContext ?? 'body';
    const errors = fastifyError.validation.map((issue) => ({
      field: fieldName(where, issue.instancePath, issue.params as Record<string, unknown>),
      message: issue.message ?? 'is invalid',
    }));
    return platformError('validation_failed', {
      detail: errors.map((e) => `${e.field} ${e.message}`).join('; '),
      extras: { errors },
    });
  }
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return platformError('payload_too_large', 'The request body is larger than this endpoint accepts');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return platformError(
        'unsupported_media_type',
        'Send application/json (or text/plain where documented)',
      );
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return platformError('bad_request', 'Content-Length does not match the body');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return platformError('malformed_json', 'The body is empty but Content-Type says JSON');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return platformError('malformed_json');
    case 'FST_ERR_BAD_URL':
      return platformError('bad_request', 'The path is not a valid URL (bad percent-encoding?)');
  }
  if (error instanceof SyntaxError && fastifyError.statusCode === 400) return platformError('malformed_json');
  if (isUnavailableError(error)) {
    return platformError('service_unavailable', { headers: { 'Retry-After': '2' }, cause: error });
  }
  const status = fastifyError.statusCode;
  if (status && status >= 400 && status < 500) {
    return platformError(
      status === 404 ? 'not_found' : status === 413 ? 'payload_too_large' : 'bad_request',
      {
        detail: error.message,
      },
    );
  }
  return platformError('internal_error', {
    detail: 'Something went wrong on our side; the request id helps us find it',
    cause: error,
  });
}

function fieldName(where: string, instancePath: string, params: Record<string, unknown>): string {
  const path = instancePath.replace(/^\//, '').replaceAll('/', '.');
  const missing = typeof params?.missingProperty === 'string' ? params.missingProperty : undefined;
  const extra = typeof params?.additionalProperty === 'string' ? params.additionalProperty : undefined;
  return [where, path, missing ?? extra].filter(Boolean).join('.');
}

/**
 * For the few errors the router answers before a Fastify request exists (an oversized path
 * parameter): the same problem+json, written on the raw response.
 */
export function sendRawProblem(request: IncomingMessage, response: ServerResponse, error: AppError): void {
  const requestId = requestIdFor(request);
  response.writeHead(error.status, {
    'content-type': PROBLEM_TYPE,
    'x-content-type-options': 'nosniff',
    'x-request-id': requestId,
  });
  response.end(JSON.stringify(problemFor(error, requestId)));
}

/**
 * Fastify's `clientErrorHandler`: what Node's HTTP parser refuses before any request exists — a
 * request line or headers over MAX_HEADER_BYTES, a request not received within the timeouts,
 * bytes that are not HTTP — gets the same problem+json as everything else (with a request id of
 * its own, since none came in), then the connection is closed.
 */
export function answerClientError(
  error: ConnectionError,
  socket: Socket,
  options: { limits: HeaderLimits; log: FastifyBaseLogger },
): void {
  // A reset connection has nobody left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const refusal = parserRefusal(error, options.limits);
  options.log.debug({ code: refusal.code, reason: error.code }, 'refused by the HTTP parser');
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const requestId = newRequestId();
  const body = JSON.stringify(problemFor(refusal, requestId));
  const head = [
    `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}`,
    `content-type: ${PROBLEM_TYPE}`,
    `content-length: ${Buffer.byteLength(body)}`,
    'x-content-type-options: nosniff',
    `x-request-id: ${requestId}`,
    'connection: close',
  ];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`, () => socket.destroy());
}

interface HeaderLimits {
  maxHeaderBytes: number;
  maxHeadersCount: number;
}

function parserRefusal(error: ConnectionError, limits: HeaderLimits): AppError {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return platformError('request_timeout', 'The request did not arrive in full within the time allowed');
    // Node reports both a request over the byte limit and one over the header count this way.
    case 'HPE_HEADER_OVERFLOW':
      return requestLineTooLong(error.rawPacket, limits.maxHeaderBytes)
        ? platformError('uri_too_long', `The request line is longer than ${limits.maxHeaderBytes} bytes`)
        : platformError(
            'headers_too_large',
            `At most ${limits.maxHeadersCount} headers and ${limits.maxHeaderBytes} bytes of request line and headers`,
          );
    default:
      return platformError('bad_request', 'The request is not valid HTTP/1.1');
  }
}

/**
 * Node's limit counts the request line and the headers together; when the request line alone
 * is over it, the URI is what is too long (414), else the headers (431). Only the chunk being
 * parsed is at hand: a request line split over several reads is answered 431.
 */
function requestLineTooLong(rawPacket: unknown, maxHeaderBytes: number): boolean {
  if (!Buffer.isBuffer(rawPacket) || !/^[A-Z]+ /.test(rawPacket.toString('latin1', 0, 16))) return false;
  const end = rawPacket.indexOf('\r\n');
  return (end === -1 ? rawPacket.length : end) > maxHeaderBytes;
}

/**
 * `notFoundHooks`: run before the not-found handler (the request metrics' recorder). No route
 * takes OPTIONS, so a CORS preflight lands there too: `preflight` answers one about a route that
 * exists (cors.ts). A path that other methods answer is 405 with `Allow` (methods.ts); one that
 * nothing answers is 404.
 */
export function registerProblemHandlers(
  app: FastifyInstance,
  notFoundHooks: preHandlerHookHandler[] = [],
  preflight: (request: FastifyRequest, reply: FastifyReply) => boolean = () => false,
): void {
  const methodsOf = registerRouteMethods(app);
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const appError = toAppError(error);
    if (appError.status >= 500) request.log.error({ err: error, code: appError.code }, 'request failed');
    else request.log.debug({ code: appError.code }, appError.message);
    return sendProblem(reply, appError);
  });
  app.setNotFoundHandler({ preHandler: notFoundHooks }, (request, reply) => {
    if (preflight(request, reply)) return reply;
    const path = request.url.split('?')[0];
    const allowed = methodsOf(path);
    if (allowed.length > 0 && !allowed.includes(request.method)) {
      const allow = allowed.join(', ');
      return sendProblem(
        reply,
        platformError('method_not_allowed', {
          detail: `${request.method} is not allowed on ${path}; it answers ${allow}`,
          headers: { Allow: allow },
        }),
      );
    }
    return sendProblem(reply, platformError('not_found', `No route for ${request.method} ${path}`));
  });
}
