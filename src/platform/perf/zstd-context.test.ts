import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { constants, createZstdCompress, zstdCompressSync, zstdDecompressSync } from 'node:zlib';
import { createZstdCompressor } from './zstd-context.ts';

const params = { [constants.ZSTD_c_compressionLevel]: 3, [constants.ZSTD_c_windowLog]: 14 };
const source = readFileSync(new URL('./zstd-context.ts', import.meta.url));

test('canary: a ZstdCompress stream still has the native handle and write state this relies on', () => {
  const stream = createZstdCompress({ params });
  const handle: unknown = Reflect.get(stream, '_handle');
  const state: unknown = Reflect.get(stream, '_writeState');
  stream.destroy();
  assert.ok(
    typeof handle === 'object' && handle !== null && typeof Reflect.get(handle, 'writeSync') === 'function',
    'zlib internals changed: ZstdCompress#_handle.writeSync is gone; remove src/platform/perf/zstd-context.ts ' +
      'or adapt it (and A/B paste-create again)',
  );
  assert.ok(state instanceof Uint32Array && state.length === 2, 'zlib internals changed: _writeState');
  assert.equal(createZstdCompressor({ params }).reusesContext, true);
});

test('one context, many calls: each a complete frame, byte for byte what zstdCompressSync gives', () => {
  const compress = createZstdCompressor({ params });
  const inputs = [
    source.subarray(0, 4_000),
    Buffer.from('x'.repeat(5000)),
    Buffer.from(''),
    source.subarray(100, 3_000),
    // Larger than the 64 KB output chunk even compressed: the frame comes out in several pieces.
    Buffer.from(
      Array.from({ length: 200_000 }, (_, i) => String.fromCharCode(33 + ((i * 7919) % 94))).join(''),
    ),
    source.subarray(0, 4_000),
  ];
  for (const input of inputs) {
    const frame = compress(input);
    assert.deepEqual(frame, zstdCompressSync(input, { params }));
    assert.deepEqual(zstdDecompressSync(frame), input);
  }
  assert.equal(compress.reusesContext, true);
});

test('input the native write would abort on goes through zstdCompressSync instead', () => {
  const compress = createZstdCompressor({ params });
  const text = 'a string, not a Buffer '.repeat(50);
  // Cast: a caller outside TypeScript's checks, whom the guard must keep from aborting the process.
  assert.deepEqual(compress(text as unknown as Buffer), zstdCompressSync(text, { params }));
  const input = source.subarray(0, 4000);
  assert.deepEqual(compress(input), zstdCompressSync(input, { params }));
});
