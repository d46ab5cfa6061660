import { brotliCompressSync, constants, deflateSync, gzipSync } from 'node:zlib';
import { Negotiator } from '@fastify/accept-negotiator';
import compress from '@fastify/compress';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';

/**
 * Text-like media types: JSON, problem+json, HTML, CSS, JavaScript, SVG, plain text (pastes).
 * Images, archives and octet streams are already compressed or opaque, and text/event-stream must
 * go out event by event (SSE streams are hijacked replies anyway, which never reach onSend).
 */
const COMPRESSIBLE =
  /^text\/(?!event-stream)|^application\/(?:javascript|[\w.+-]*json|[\w.+-]*xml)(?:;|$)|^image\/svg\+xml/;

const ENCODINGS = ['br', 'gzip', 'deflate'] as const;
type Encoding = (typeof ENCODINGS)[number];

/** Brotli at quality 4: close to gzip's speed with smaller output; 11, zlib's default, costs milliseconds per response. */
const BROTLI_OPTIONS = { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } };

/**
 * Responses of `minBytes` and more (COMPRESSION_MIN_BYTES, 1 KB) in br, gzip or deflate, as the
 * client's Accept-Encoding prefers. Smaller ones gain less than the framing costs. A client that
 * sends no Accept-Encoding (autocannon, curl without --compressed, `inject`) gets the bytes as
 * they are.
 *
 * Which routes: reads (GET, HEAD) are where the large bodies are (pages, lists, documents,
 * pastes). Commands (POST, PUT, PATCH, DELETE) answer ids, statuses and problems, and the plugin's
 * two hooks cost every request whether the client asks for compression or not — on the hot
 * commands (a seat hold, a gate entry, a notification) more than anything they could save — so a
 * command is compressed only when its route asks (`compress: {}`); the nginx in front gzips
 * what the app sends uncompressed anyway. The hottest read, a cached paste's JSON, opts out too
 * and compresses itself (`encodeFor`), which decides with one header read; the health probes opt
 * out (health.ts): answers of a few hundred bytes, asked for every few seconds by every prober.
 *
 * Registered after every plugin that adds a route onSend hook reading the payload (idempotency
 * stores the response it sends): route onSend hooks run in the order their onRoute hooks were
 * added, and those must see the body, not its compressed stream. Request bodies are not
 * decompressed: no client needs it, and it would put a decompression bomb before the body limit.
 * An ETag is kept as the route set it on either coding, so If-None-Match keeps answering 304 to
 * clients of both (the raw paste compares it exactly); a validator per coding would matter only to
 * range requests, which no route serves.
 */
export async function registerCompression(app: FastifyInstance, minBytes: number): Promise<void> {
  // Before the plugin's own onRoute hook, which reads the route's `compress`.
  app.addHook('onRoute', (route) => {
    if (route.compress === undefined && !isRead(route.method)) route.compress = false;
  });
  await app.register(compress, {
    threshold: minBytes,
    encodings: [...ENCODINGS],
    brotliOptions: BROTLI_OPTIONS,
    customTypes: COMPRESSIBLE,
    globalDecompression: false,
  });
}

function isRead(method: string | string[]): boolean {
  return [method].flat().some((name) => name === 'GET' || name === 'HEAD');
}

// Clients send a handful of distinct Accept-Encoding values; each is parsed once.
const negotiator = new Negotiator<Encoding>({
  supportedValues: [...ENCODINGS],
  cache: new LRUCache<string, string>({ max: 100 }),
});

/**
 * `body` as the client's Accept-Encoding prefers, for a route with `compress: false` that sends a
 * text body it has in hand: the same codings, quality and threshold as the plugin (`minBytes`
 * undefined: COMPRESSION_MIN_BYTES=off). Sets Content-Encoding and Vary when it compresses.
 */
export function encodeFor(
  request: FastifyRequest,
  reply: FastifyReply,
  body: string,
  minBytes: number | undefined,
): string | Buffer {
  const accepted = request.headers['accept-encoding'];
  if (accepted === undefined || minBytes === undefined || body.length < minBytes) return body;
  // "x-gzip" is gzip's old name (RFC 9110 §8.4.1.3).
  const encoding = negotiator.negotiate(accepted.toLowerCase().replace(/\bx-gzip\b/g, 'gzip'));
  if (encoding === null) return body;
  const vary = reply.getHeader('vary');
  reply
    .header('content-encoding', encoding)
    .header('vary', vary === undefined ? 'accept-encoding' : `${vary}, accept-encoding`);
  return ENCODE[encoding](body);
}

const ENCODE: Record<Encoding, (body: string) => Buffer> = {
  br: (body) => brotliCompressSync(body, BROTLI_OPTIONS),
  gzip: (body) => gzipSync(body),
  deflate: (body) => deflateSync(body),
};
