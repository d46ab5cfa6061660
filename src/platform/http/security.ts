import type { FastifyInstance } from 'fastify';
import type { Cors } from './cors.ts';
import { nulInUrl } from './input.ts';

/**
 * On HTML pages (set by `reply.page`). The CSP forbids inline script, so any text users put on a page (a paste, a
 * name) can at worst show up, never run. JSON responses do not carry these: a browser never
 * renders them as documents (nosniff + their media type), and every header sent costs every
 * request.
 */
export const PAGE_HEADERS: Record<string, string> = {
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
};

/** Swagger UI ships an inline bootstrap and styles; it gets a CSP that allows that and nothing more. */
const DOCS_HEADERS: Record<string, string> = {
  ...PAGE_HEADERS,
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
};

/**
 * The platform's one onRequest hook: the headers above, a cross-origin request's CORS headers
 * (cors.ts; not on the metrics port, which no page calls), and a NUL in the URL refused
 * (input.ts). One hook rather than one per concern, since each hook and each hook phase costs
 * every request.
 */
export function registerSecurityHeaders(app: FastifyInstance, cors?: Cors): void {
  app.addHook('onRequest', (request, reply, done) => {
    // On every response, the two headers that matter for any content type, and the request id.
    reply
      .header('x-content-type-options', 'nosniff')
      .header('cross-origin-resource-policy', 'same-origin')
      .header('x-request-id', request.id);
    if (request.url.startsWith('/docs')) reply.headers(DOCS_HEADERS);
    if (cors !== undefined && request.headers.origin !== undefined) cors.onRequest(request, reply);
    done(nulInUrl(request));
  });
}
