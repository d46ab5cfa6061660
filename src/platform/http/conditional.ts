import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify';

/**
 * Conditional GETs (RFC 9110 §13): an `ETag` on every cacheable read and a 304 without a body
 * when the client already holds that version.
 *
 * `REVALIDATE` is the Cache-Control of reads anyone may make of data that can change or be
 * deleted (a paste, a seat map, the catalogue): shared caches may keep the answer but must ask
 * again before each reuse, so a deletion or a sold seat is never served from a cache, and the
 * asking costs a 304 without a body. A `max-age` would have let caches serve a deleted paste
 * until it ran out.
 */
export const REVALIDATE = 'public, no-cache';

/** Whether `If-None-Match` names `etag`: weak comparison over a list, or `*` (RFC 9110 §13.1.2). */
export function matchesEtag(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header === etag) return true;
  const wanted = opaque(etag);
  const values = Array.isArray(header) ? header.join(',') : header;
  return values.split(',').some((candidate) => {
    const tag = candidate.trim();
    return tag === '*' || opaque(tag) === wanted;
  });
}

const opaque = (tag: string) => (tag.startsWith('W/') ? tag.slice(2) : tag);

/** A weak validator of a rendered body: equal bodies, equal tags. */
export function weakEtag(body: string | Buffer): string {
  return `W/"${createHash('sha1').update(body).digest('base64url').slice(0, 27)}"`;
}

/** Sets the validator and the cache policy; answers 304 (no body) when the client has this version. */
export function conditional(request: FastifyRequest, reply: FastifyReply, etag: string): boolean {
  reply.header('etag', etag);
  if (!reply.hasHeader('cache-control')) reply.header('cache-control', REVALIDATE);
  if (!matchesEtag(request.headers['if-none-match'], etag)) return false;
  reply.code(304);
  return true;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * `revalidate`: a public read whose 200 answers carry a weak ETag of the body and
     * `Cache-Control: public, no-cache`, and turn into a 304 when `If-None-Match` names it.
     */
    cache?: 'revalidate';
  }
}

/**
 * The hook behind `config.cache`: hashes the serialized body of a 200 GET (or HEAD) on the way
 * out. Routes with a body kept pre-rendered (the paste reads) set their own validator instead.
 * Installed on the routes that ask for it only: a global onSend hook is a promise on every
 * answer of every route (holds, paste reads) for the few that are cacheable.
 */
export function registerConditionalGets(app: FastifyInstance): void {
  const validate: onSendHookHandler = async (request, reply, payload) => {
    if (reply.statusCode !== 200) return payload;
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
    if (reply.hasHeader('etag')) return payload;
    if (!conditional(request, reply, weakEtag(payload))) return payload;
    reply.removeHeader('content-length');
    return '';
  };
  app.addHook('onRoute', (route) => {
    if (route.config?.cache !== 'revalidate') return;
    const existing = route.onSend;
    route.onSend = [
      ...(existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]),
      validate,
    ];
  });
}
