import { constants, createZstdCompress, type ZstdOptions, zstdCompressSync } from 'node:zlib';

type Compress = (input: Buffer) => Buffer;

/** What a Node zstd stream keeps internally: its native handle and the [availOut, availIn] it reports. */
interface Internals {
  _handle?: {
    writeSync(
      flush: number,
      input: Buffer,
      inOff: number,
      inLen: number,
      out: Buffer,
      outOff: number,
      outLen: number,
    ): void;
  } | null;
  _writeState?: Uint32Array;
}

const OUT_CHUNK = 64 * 1024;

/**
 * zstd compression with one compression context per parameter set, kept for the process's life.
 * `zstdCompressSync` builds a stream, a native context and its match tables for every call and
 * closes them after: for a 10 KB paste that was ~45 of its ~60 µs (14 % of the app's CPU per
 * create). A context ended with `ZSTD_e_end` starts the next frame afresh, so each call still
 * gives a complete, independent frame, byte for byte what `zstdCompressSync` gives (zstd.test.ts).
 *
 * Node's sync API closes the context after each call, so this drives the stream's native handle
 * the way `zlib`'s own sync path does. Those are internals: if they are not there (another Node)
 * or the context reports an error, the call falls back to `zstdCompressSync` and the context is
 * not used again.
 */
export function createZstdCompressor(options: ZstdOptions): Compress {
  const fallback: Compress = (input) => zstdCompressSync(input, options);
  const stream = createZstdCompress(options) as ReturnType<typeof createZstdCompress> & Internals;
  const { _handle: handle, _writeState: state } = stream;
  if (!handle || typeof handle.writeSync !== 'function' || !state) return fallback;
  return reusing(stream, handle, state, fallback);
}

function reusing(
  stream: ReturnType<typeof createZstdCompress>,
  handle: NonNullable<Internals['_handle']>,
  state: Uint32Array,
  fallback: Compress,
): Compress {
  let broken = false;
  stream.on('error', () => {
    broken = true;
  });
  const out = Buffer.allocUnsafe(OUT_CHUNK);

  function compress(input: Buffer): Buffer {
    const chunks: Buffer[] = [];
    let inOff = 0;
    let inLeft = input.length;
    for (;;) {
      handle.writeSync(constants.ZSTD_e_end, input, inOff, inLeft, out, 0, OUT_CHUNK);
      if (broken) throw new Error('zstd context failed');
      const outLeft = state[0];
      const inLeftAfter = state[1];
      chunks.push(Buffer.from(out.subarray(0, OUT_CHUNK - outLeft)));
      inOff += inLeft - inLeftAfter;
      inLeft = inLeftAfter;
      // A full output buffer means zstd may have more of the frame to give.
      if (outLeft !== 0) break;
    }
    return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
  }

  return (input) => {
    // The native write aborts the process (an assertion, not an exception) on anything else.
    if (broken || !Buffer.isBuffer(input)) return fallback(input);
    try {
      return compress(input);
    } catch {
      broken = true;
      return fallback(input);
    }
  };
}
