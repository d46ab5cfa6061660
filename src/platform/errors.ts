/**
 * Errors as data: every service declares a catalogue of stable snake_case codes with their
 * HTTP status, and throws `err('code', {...})`. One handler (http/problem.ts) turns them into
 * RFC 9457 problem+json.
 */
export interface ErrorSpec {
  status: number;
  title: string;
}

export interface ErrorOptions {
  detail?: string;
  /** Extra members of the problem document, e.g. `{seats: ['C7']}`. */
  extras?: Record<string, unknown>;
  headers?: Record<string, string>;
  cause?: unknown;
}

/**
 * A refusal (4xx) or a failure (5xx) with its code. Made the way @fastify/error makes Fastify's own
 * errors: an Error by prototype (`instanceof Error`, so Fastify and pino treat it as one) whose
 * constructor does not run Error's, because that one records a stack trace every time, and a
 * refusal is an answer, not a fault: on a hot refusal path (a sold-out show's 409s) recording
 * the stack was the costliest step of the request. Failures still record theirs.
 */
export class AppError {
  name = 'AppError';
  readonly message: string;
  declare stack?: string;
  readonly cause?: unknown;
  readonly code: string;
  readonly status: number;
  readonly title: string;
  readonly extras: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(code: string, spec: ErrorSpec, options: ErrorOptions = {}) {
    // An empty detail says nothing: the title stands in, so every problem has one (RFC 9457 §3.1.4).
    this.message = options.detail || spec.title;
    if (options.cause !== undefined) this.cause = options.cause;
    this.code = code;
    this.status = spec.status;
    this.title = spec.title;
    this.extras = options.extras ?? {};
    this.headers = options.headers ?? {};
    if (spec.status >= 500) Error.captureStackTrace(this, AppError);
  }
}
Object.setPrototypeOf(AppError.prototype, Error.prototype);

export type ErrorFactory<C extends Record<string, ErrorSpec>> = ((
  code: keyof C & string,
  options?: ErrorOptions | string,
) => AppError) & { catalogue: C };

export function defineErrors<const C extends Record<string, ErrorSpec>>(catalogue: C): ErrorFactory<C> {
  const factory = (code: keyof C & string, options?: ErrorOptions | string) => {
    const given = typeof options === 'string' ? { detail: options } : options;
    return new AppError(code, catalogue[code], given);
  };
  return Object.assign(factory, { catalogue });
}

/** The platform's own codes; services add theirs in their `errors.ts`. */
export const platformError = defineErrors({
  bad_request: { status: 400, title: 'Malformed request' },
  validation_failed: { status: 400, title: 'The request is not valid' },
  malformed_json: { status: 400, title: 'The body is not valid JSON' },
  unauthorized: { status: 401, title: 'Missing or invalid credentials' },
  forbidden: { status: 403, title: 'Not allowed' },
  not_found: { status: 404, title: 'Not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  request_timeout: { status: 408, title: 'The request was not received in time' },
  conflict: { status: 409, title: 'Conflict' },
  idempotency_in_progress: { status: 409, title: 'A request with this Idempotency-Key is still in progress' },
  gone: { status: 410, title: 'Gone' },
  payload_too_large: { status: 413, title: 'The body is too large' },
  uri_too_long: { status: 414, title: 'The request URI is too long' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  idempotency_key_reused: { status: 422, title: 'Idempotency-Key reused with a different request' },
  unprocessable: { status: 422, title: 'The request cannot be processed' },
  rate_limited: { status: 429, title: 'Too many requests' },
  headers_too_large: { status: 431, title: 'The request headers are too large' },
  internal_error: { status: 500, title: 'Internal server error' },
  service_unavailable: { status: 503, title: 'A dependency is unavailable, try again shortly' },
});

/** Errors from drivers that mean "a dependency is down", which clients should retry, not report. */
export function isUnavailableError(error: unknown): boolean {
  const name = (error as { name?: unknown })?.name;
  // ioredis while Redis is away; nats.js while NATS is away.
  if (
    typeof name === 'string' &&
    [
      'MaxRetriesPerRequestError',
      'ClosedConnectionError',
      'RequestError',
      'TimeoutError',
      'NoRespondersError',
    ].includes(name)
  ) {
    return true;
  }
  // pg: a backend that died under a query, a pool that could not connect in time, a client
  // used after its connection broke (found by src/faults/postgres.fault-test.ts).
  if (
    error instanceof Error &&
    /Connection is closed|Stream isn't writeable|Connection terminated|timeout exceeded when trying to connect|not queryable/.test(
      error.message,
    )
  )
    return true;
  const code = (error as { code?: unknown })?.code;
  if (typeof code !== 'string') return false;
  return (
    ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND'].includes(code) ||
    // PostgreSQL: admin shutdown / connection failure / cannot connect now / too many connections
    ['57P01', '57P02', '57P03', '08000', '08003', '08006', '08001', '08004', '53300'].includes(code)
  );
}
