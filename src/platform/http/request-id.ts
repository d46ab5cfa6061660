import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const ACCEPTED = /^[\w.:-]{1,128}$/;
// A random per-process prefix and a counter: unique across processes without the cost of a UUID per request.
const prefix = randomBytes(6).toString('base64url');
let counter = 0;

/** Keeps a well-formed `X-Request-Id` from a proxy or client, otherwise makes one. */
export function requestIdFor(request: IncomingMessage): string {
  const incoming = request.headers['x-request-id'];
  if (typeof incoming === 'string' && ACCEPTED.test(incoming)) return incoming;
  return newRequestId();
}

/** A fresh id, for answers given before a request exists (the HTTP parser's refusals). */
export function newRequestId(): string {
  counter = (counter + 1) % Number.MAX_SAFE_INTEGER;
  return `${prefix}-${counter.toString(36)}`;
}
