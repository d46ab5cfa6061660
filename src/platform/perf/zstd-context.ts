import { constants, createZstdCompress, type ZstdOptions, zstdCompressSync } from 'node:zlib';

/**
 * A zstd compressor that keeps one native compression context for the process's life.
 *
 * Why: `zlib.zstdCompressSync` builds a stream, a native context and its match tables on every
 * call and frees them after; for a paste of a few KB that set-up costs more than the compression.
 * An A/B run of paste-create with `zstdCompressSync` instead showed this worth well over what
 * a hack must earn (bench/README.md). Node has no public way to reuse a context synchronously.
 *
 * What it assumes (Node's zlib internals, checked by zstd-context.test.ts): a `ZstdCompress`
 * stream has a native `_handle` whose `writeSync(flush, in, inOff, inLen, out, outOff, outLen)`
 * compresses synchronously and reports `[availOut, availIn]` in the stream's `_writeState`, the
 * way zlib's own sync path drives it. A context ended with `ZSTD_e_end` starts the next frame
 * afresh, so each call gives a complete, independent frame, byte for byte `zstdCompressSync`'s.
 * If the internals are missing (another Node) or the context fails, calls fall back to
 * `zstdCompressSync` and the canary test fails.
 */
export interface ZstdCompressor {
  (input: Buffer): Buffer;
  /** False when the internals were not found and every call goes through `zstdCompressSync`. */
  readonly reusesContext: boolean;
}

interface StreamInternals {
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

type Handle = NonNullable<StreamInternals['_handle']>;

const OUT_CHUNK = 64 * 1024;

export function createZstdCompressor(options: ZstdOptions): ZstdCompressor {
  const fallback = (input: Buffer) => zstdCompressSync(input, options);
  const stream: ReturnType<typeof createZstdCompress> & StreamInternals = createZstdCompress(options);
  const { _handle: handle, _writeState: state } = stream;
  if (!handle || typeof handle.writeSync !== 'function' || !(state instanceof Uint32Array)) {
    return Object.assign(fallback, { reusesContext: false });
  }
  let broken = false;
  stream.on('error', () => {
    broken = true;
  });
  const compress = frameWriter(handle, state, () => broken);
  const reusing = (input: Buffer) => {
    // The native write aborts the process (an assertion, not an exception) on anything else.
    if (broken || !Buffer.isBuffer(input)) return fallback(input);
    try {
      return compress(input);
    } catch {
      broken = true;
      return fallback(input);
    }
  };
  return Object.assign(reusing, {
    get reusesContext() {
      return !broken;
    },
  });
}

/** One complete frame per call: writes with ZSTD_e_end until zstd leaves room in the output. */
function frameWriter(handle: Handle, state: Uint32Array, broken: () => boolean) {
  const out = Buffer.allocUnsafe(OUT_CHUNK);
  return (input: Buffer): Buffer => {
    const chunks: Buffer[] = [];
    let inOff = 0;
    let inLeft = input.length;
    for (;;) {
      handle.writeSync(constants.ZSTD_e_end, input, inOff, inLeft, out, 0, OUT_CHUNK);
      if (broken()) throw new Error('zstd context failed');
      const outLeft = state[0];
      const inLeftAfter = state[1];
      chunks.push(Buffer.from(out.subarray(0, OUT_CHUNK - outLeft)));
      inOff += inLeft - inLeftAfter;
      inLeft = inLeftAfter;
      // A full output buffer means zstd may have more of the frame to give.
      if (outLeft !== 0) return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
    }
  };
}
