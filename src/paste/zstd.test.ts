import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { constants, zstdCompressSync, zstdDecompressSync } from 'node:zlib';
import { createZstdCompressor } from './zstd.ts';

const params = { [constants.ZSTD_c_compressionLevel]: 3, [constants.ZSTD_c_windowLog]: 14 };
const source = readFileSync(new URL('./content.ts', import.meta.url));

test('one context, many calls: each a complete frame, byte for byte what zstdCompressSync gives', () => {
  const compress = createZstdCompressor({ params });
  const inputs = [
    source.subarray(0, 10_000),
    Buffer.from('x'.repeat(5000)),
    Buffer.from(''),
    source.subarray(100, 9_000),
    // Larger than the 64 KB output chunk even compressed: the frame comes out in several pieces.
    Buffer.from(
      Array.from({ length: 200_000 }, (_, i) => String.fromCharCode(33 + ((i * 7919) % 94))).join(''),
    ),
    source.subarray(0, 10_000),
  ];
  for (const input of inputs) {
    const frame = compress(input);
    assert.deepEqual(frame, zstdCompressSync(input, { params }));
    assert.deepEqual(zstdDecompressSync(frame), input);
  }
});

test('input the native write would abort on goes through zstdCompressSync instead', () => {
  const compress = createZstdCompressor({ params });
  const text = 'a string, not a Buffer '.repeat(50);
  assert.deepEqual(compress(text as unknown as Buffer), zstdCompressSync(text, { params }));
  const input = source.subarray(0, 4000);
  assert.deepEqual(compress(input), zstdCompressSync(input, { params }));
});
