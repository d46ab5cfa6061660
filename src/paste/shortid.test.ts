import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createPermutation, createShortIdCodec, decodeBase62, encodeBase62 } from './shortid.ts';

const SECRET = 'test-secret-0123456789';

describe('keyed permutation (cycle-walking Feistel)', () => {
  for (const size of [62 ** 2, 62 ** 3, 1000, 4097]) {
    test(`is a bijection of [0, ${size})`, () => {
      const permutation = createPermutation(SECRET, size);
      const seen = new Uint8Array(size);
      for (let x = 0; x < size; x++) {
        const y = permutation.forward(x);
        assert.ok(y >= 0 && y < size, `${x} → ${y} is outside the domain`);
        assert.equal(seen[y], 0, `${y} is hit twice`);
        seen[y] = 1;
        assert.equal(permutation.inverse(y), x);
      }
    });
  }

  test('depends on the key', () => {
    const a = createPermutation(SECRET, 62 ** 3);
    const b = createPermutation(`${SECRET}!`, 62 ** 3);
    let same = 0;
    for (let x = 0; x < 1000; x++) if (a.forward(x) === b.forward(x)) same++;
    assert.ok(same < 5, `${same} of 1000 values agree under different keys`);
  });

  test('is not the identity nor monotonic', () => {
    const permutation = createPermutation(SECRET, 62 ** 3);
    let increasing = 0;
    for (let x = 0; x < 1000; x++) if (permutation.forward(x + 1) > permutation.forward(x)) increasing++;
    assert.ok(increasing > 400 && increasing < 600, `${increasing} of 1000 steps go up`);
  });
});

describe('short_url codec', () => {
  test('base62 round-trips and pads', () => {
    assert.equal(encodeBase62(0, 6), '000000');
    assert.equal(encodeBase62(62 ** 6 - 1, 6), 'zzzzzz');
    assert.equal(decodeBase62(encodeBase62(123_456_789, 6)), 123_456_789);
    assert.throws(() => encodeBase62(62 ** 6, 6), RangeError);
  });

  test('1,000,000 consecutive sequence values give unique ids of 6 characters of [a-zA-Z0-9]', () => {
    const codec = createShortIdCodec(SECRET);
    const seen = new Set<string>();
    for (let value = 1; value <= 1_000_000; value++) {
      const id = codec.encode(value);
      if (id.length !== 6 || !/^[a-zA-Z0-9]+$/.test(id)) assert.fail(`bad id ${id} for ${value}`);
      seen.add(id);
    }
    assert.equal(seen.size, 1_000_000);
  });

  test('ids of consecutive pastes differ in most positions', () => {
    const codec = createShortIdCodec(SECRET);
    const pairs = 100_000;
    let differing = 0;
    let similar = 0;
    let previous = codec.encode(1);
    for (let value = 2; value <= pairs + 1; value++) {
      const id = codec.encode(value);
      let diff = 0;
      for (let i = 0; i < 6; i++) if (id[i] !== previous[i]) diff++;
      differing += diff;
      if (diff <= 3) similar++;
      previous = id;
    }
    // Random 6-character ids differ in 6 × 61/62 ≈ 5.9 positions; a counter would differ in ~1.
    assert.ok(differing / pairs > 5.8, `consecutive ids differ in ${differing / pairs} positions on average`);
    assert.ok(similar / pairs < 0.001, `${similar} of ${pairs} consecutive pairs share 3 or more positions`);
  });

  test('6 characters until 62^6 ids are used, then 7, then 8, never more', () => {
    const codec = createShortIdCodec(SECRET);
    assert.equal(codec.encode(62 ** 6).length, 6);
    assert.equal(codec.encode(62 ** 6 + 1).length, 7);
    assert.equal(codec.encode(62 ** 6 + 62 ** 7).length, 7);
    assert.equal(codec.encode(62 ** 6 + 62 ** 7 + 1).length, 8);
    assert.equal(codec.encode(62 ** 6 + 62 ** 7 + 62 ** 8).length, 8);
    assert.throws(() => codec.encode(62 ** 6 + 62 ** 7 + 62 ** 8 + 1), /exhausted/);
  });

  test('decode inverts encode in every tier and rejects what was never issued', () => {
    const codec = createShortIdCodec(SECRET);
    for (const value of [1, 2, 999_999, 62 ** 6, 62 ** 6 + 1, 62 ** 6 + 62 ** 7 + 5]) {
      assert.equal(codec.decode(codec.encode(value)), value);
    }
    assert.equal(codec.decode('abc'), undefined);
    assert.equal(codec.decode('abc-de'), undefined);
  });
});
