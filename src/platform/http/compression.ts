import compress from '@fastify/compress';
import type { FastifyInstance } from 'fastify';

/**
 * Text-like media types: JSON, problem+json, HTML, CSS, JavaScript, SVG, plain text (pastes).
 * Images, archives and octet streams are already compressed or opaque, and text/event-stream must
 * go out event by event (SSE streams are hijacked replies anyway, which never reach onSend).
 */
const COMPRESSIBLE =
  /^text\/(?!event-stream)|^application\/(?:javascript|[\w.+-]*json|[\w.+-]*xml)(?:;|$)|^image\/svg\+xml/;

/**
 * Responses of `minBytes` and more (COMPRESSION_MIN_BYTES, 1 KB) in br, gzip or deflate, as the
 * client's Accept-Encoding prefers (brotli at quality 4: close to gzip's speed with smaller
 * output; 11, zlib's default, costs milliseconds per response). Smaller ones gain less than the
 * framing costs. A client that sends no Accept-Encoding (autocannon, curl without --compressed,
 * `inject`) gets the bytes as they are.
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
  await app.register(compress, {
    threshold: minBytes,
    encodings: ['br', 'gzip', 'deflate'],
    customTypes: COMPRESSIBLE,
    globalDecompression: false,
  });
}
