import {
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_URL_PATH,
} from '@opentelemetry/semantic-conventions';
import type { FastifyInstance, FastifyRequest } from 'fastify';

const kSpan = Symbol('tracing.span');

declare module 'fastify' {
  interface FastifyRequest {
    [kSpan]: Span | null;
  }
}

/**
 * One server span per request, from Fastify's own hooks rather than an instrumentation of
 * node:http: the span is named by the route pattern (`POST /api/v1/holds`) the router found,
 * and `app.inject` requests (the tests) are traced like real ones. An incoming W3C `traceparent`
 * is its parent, so our spans join the caller's trace.
 *
 * The span is made the active context for the rest of the request by running the next hook
 * inside `context.with`: Fastify goes on to the later hooks, the body parser and the handler from
 * that callback, so all of them (auth, rate limits, the handler's queries) run inside the span —
 * also when the body arrives later on a real socket (tracing.test.ts checks both). This is the
 * first hook registered, so it runs before every other one.
 */
export function registerHttpSpans(app: FastifyInstance, tracer: Tracer): void {
  app.decorateRequest(kSpan, null);

  app.addHook('onRequest', (request, _reply, done) => {
    const route = request.routeOptions.url;
    const parent = propagation.extract(ROOT_CONTEXT, request.headers);
    const span = tracer.startSpan(
      route ? `${request.method} ${route}` : request.method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          [ATTR_HTTP_REQUEST_METHOD]: request.method,
          ...(route && { [ATTR_HTTP_ROUTE]: route }),
          [ATTR_URL_PATH]: pathOf(request),
        },
      },
      parent,
    );
    const active = trace.setSpan(parent, span);
    request[kSpan] = span;
    context.with(active, done);
  });

  app.addHook('onError', (request, _reply, error, done) => {
    request[kSpan]?.recordException(error);
    done();
  });

  const end = (request: FastifyRequest, status: number | undefined) => {
    const span = request[kSpan];
    if (!span) return;
    request[kSpan] = null;
    if (status !== undefined) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
    // A 4xx is the client's doing: only a 5xx (or no answer) marks the server's span an error.
    if (status === undefined || status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  };
  app.addHook('onResponse', (request, reply, done) => {
    end(request, reply.statusCode);
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    end(request, undefined);
    done();
  });
}

/** The path without its query; a route whose URL carries a secret shows its pattern instead (redact-url.ts). */
function pathOf(request: FastifyRequest): string {
  if (request.routeOptions.config?.redactUrl === true && request.routeOptions.url)
    return request.routeOptions.url;
  const query = request.url.indexOf('?');
  return query === -1 ? request.url : request.url.slice(0, query);
}
