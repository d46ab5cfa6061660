import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import { constants, zstdDecompressSync } from 'node:zlib';
import { pasteError } from './errors.ts';
import { MAX_CONTENT_BYTES } from './settings.ts';
import { createZstdCompressor } from './zstd.ts';

/**
 * What makes text acceptable: valid UTF-8 (so it can be served as `text/plain; charset=utf-8`
 * and shown on a page), no NUL bytes (the cheap and reliable tell of a binary file), and at
 * most 10 MB of UTF-8 bytes.
 */
export function textFromBytes(bytes: Buffer): string {
  if (bytes.length > MAX_CONTENT_BYTES) throw tooLarge();
  if (!isUtf8(bytes)) {
    throw pasteError('content_not_utf8', 'The body is not valid UTF-8; only text can be pasted');
  }
  if (bytes.includes(0)) throw binary();
  return bytes.toString('utf8');
}

/** The same rules for text that arrived inside JSON (already decoded, so check what decoding hid). */
export function checkText(text: string): Buffer {
  if (!text.isWellFormed()) {
    throw pasteError(
      'content_not_utf8',
      'The content has unpaired surrogates and cannot be encoded as UTF-8',
    );
  }
  if (text.includes('\u0000')) throw binary();
  // A string of n UTF-16 units takes at most 3n UTF-8 bytes: skip the count when it cannot be too large.
  if (text.length * 3 > MAX_CONTENT_BYTES && Buffer.byteLength(text, 'utf8') > MAX_CONTENT_BYTES)
    throw tooLarge();
  return Buffer.from(text, 'utf8');
}

export function tooLarge() {
  return pasteError('content_too_large', {
    detail: `Pastes are limited to ${MAX_CONTENT_BYTES} bytes (10 MB) of UTF-8 text`,
    extras: { limit_bytes: MAX_CONTENT_BYTES },
  });
}

function binary() {
  return pasteError(
    'content_binary',
    'The content contains NUL bytes, so it looks like a binary file, not text',
  );
}

export interface StoredContent {
  hash: string;
  data: Buffer;
  size: number;
}

export function packContent(bytes: Buffer): StoredContent {
  return {
    hash: createHash('sha256').update(bytes).digest('hex'),
    data: compressorFor(bytes.length)(bytes),
    size: bytes.length,
  };
}

/**
 * Level 3 (zstd's default): ~3-4x on source code at a few hundred MB/s. Its match tables are
 * sized for large inputs (window 2 MB, hash 2^17, chain 2^16 entries) and are cleared for every
 * frame; for a 10 KB paste that clearing was most of the compressor's work (callgrind: 322k
 * instructions per 10 KB compression, 192k with the tables bounded by the input's size, for a
 * stored size 0.3 % larger on source files of 9-97 KB). Inputs above 2 MB get level 3 as it is.
 * Each window size has one context for the process's life (zstd.ts): building a context per
 * call cost more than compressing.
 */
function zstdParams(windowLog: number): Record<number, number> {
  return {
    [constants.ZSTD_c_compressionLevel]: 3,
    [constants.ZSTD_c_windowLog]: windowLog,
    [constants.ZSTD_c_hashLog]: Math.min(17, windowLog - 1),
    [constants.ZSTD_c_chainLog]: Math.min(16, windowLog - 1),
  };
}

/** One reusable context per window size (zstd.ts): at most 12 of them, 10 to 21. */
const compressors = new Map<number, (input: Buffer) => Buffer>();

function compressorFor(size: number) {
  const windowLog = Math.min(21, Math.max(10, Math.ceil(Math.log2(size))));
  let compress = compressors.get(windowLog);
  if (!compress) {
    compress = createZstdCompressor({ params: zstdParams(windowLog) });
    compressors.set(windowLog, compress);
  }
  return compress;
}

export function unpackContent(data: Uint8Array, encoding: string): string {
  if (encoding !== 'zstd') throw new Error(`unknown content encoding ${encoding}`);
  return zstdDecompressSync(data).toString('utf8');
}
