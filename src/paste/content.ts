import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import { constants, zstdDecompressSync } from 'node:zlib';
import { createZstdCompressor, type ZstdCompressor } from '../platform/perf/zstd-context.ts';
import { pasteError } from './errors.ts';
import { MAX_CONTENT_BYTES } from './settings.ts';

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
    data: compress(bytes),
    size: bytes.length,
  };
}

/**
 * Level 3 (zstd's default) compresses source code a few times over at a few hundred MB/s. Its
 * match tables are sized for large inputs and are cleared for every frame, which for a paste of
 * a few KB costs more than the compression itself; bounding them by the input's size removes
 * that work for a stored size hardly larger. Inputs above 2 MB get level 3 as it is.
 */
function zstdParams(windowLog: number): Record<number, number> {
  return {
    [constants.ZSTD_c_compressionLevel]: 3,
    [constants.ZSTD_c_windowLog]: windowLog,
    [constants.ZSTD_c_hashLog]: Math.min(17, windowLog - 1),
    [constants.ZSTD_c_chainLog]: Math.min(16, windowLog - 1),
  };
}

/**
 * One compression context per window size (10 to 21), kept for the process's life: setting one
 * up per call cost more than compressing (src/platform/perf/zstd-context.ts says why and how).
 */
const compressors = new Map<number, ZstdCompressor>();

function compress(bytes: Buffer): Buffer {
  const windowLog = Math.min(21, Math.max(10, Math.ceil(Math.log2(bytes.length))));
  let compressor = compressors.get(windowLog);
  if (!compressor) {
    compressor = createZstdCompressor({ params: zstdParams(windowLog) });
    compressors.set(windowLog, compressor);
  }
  return compressor(bytes);
}

export function unpackContent(data: Uint8Array, encoding: string): string {
  if (encoding !== 'zstd') throw new Error(`unknown content encoding ${encoding}`);
  return zstdDecompressSync(data).toString('utf8');
}
