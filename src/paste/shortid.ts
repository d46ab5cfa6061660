import { createHmac } from 'node:crypto';

/**
 * short_url = base62(permute(sequence value)). The sequence makes ids collision-free by
 * construction; the keyed permutation hides their order, so a neighbour's id cannot be
 * guessed from one's own. It is obfuscation, not encryption: with 62^6 ids and a million
 * pastes a day, a random 6-character guess eventually hits *some* paste, which is why private
 * and password-protected pastes are protected by their flags, not by their ids.
 *
 * Tiers: the first 62^6 sequence values map onto 6-character ids, the next 62^7 onto 7, the
 * next 62^8 onto 8. Ids of different lengths never collide, so uniqueness per tier is enough.
 */
export const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const MIN_LENGTH = 6;
export const MAX_LENGTH = 8;
const ROUNDS = 8;

export interface Permutation {
  readonly size: number;
  forward(x: number): number;
  inverse(y: number): number;
}

/**
 * A keyed bijection of [0, size) for size up to 2^48: a balanced Feistel network on the
 * smallest even number of bits that covers `size`, made to stay inside [0, size) by cycle
 * walking (apply it again while the result is out of range; since it permutes the larger
 * domain, following a cycle from an in-range value always comes back in range, and the
 * restriction is a permutation). The covering domain is at most 4x larger than `size`, and
 * for 62^6..62^8 it is 1.2-1.3x, so a walk takes ~1.3 steps on average.
 *
 * The round function is a keyed 32-bit integer mixer (murmur3's finaliser with key words
 * folded in): fast enough for a million ids in well under a second, and every output bit
 * depends on every input and key bit. Round keys come from HMAC-SHA256 of the secret.
 */
export function createPermutation(secret: string, size: number, label = ''): Permutation {
  if (!Number.isSafeInteger(size) || size < 2 || size > 2 ** 48) throw new Error(`bad domain size ${size}`);
  let bits = Math.ceil(Math.log2(size));
  if (2 ** bits < size) bits++;
  if (bits % 2 === 1) bits++;
  const half = bits / 2;
  const halfSize = 2 ** half;
  const mask = halfSize - 1;
  const keys = roundKeys(secret, `${label}:${size}`);

  const round = (i: number, value: number): number => {
    let h = Math.imul(value ^ keys[2 * i], 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h ^ keys[2 * i + 1], 0xc2b2ae35);
    h ^= h >>> 16;
    h = Math.imul(h, 0x27d4eb2f);
    h ^= h >>> 15;
    return (h >>> 0) & mask;
  };
  const encrypt = (x: number): number => {
    let left = Math.floor(x / halfSize);
    let right = x % halfSize;
    for (let i = 0; i < ROUNDS; i++) {
      const next = (left ^ round(i, right)) >>> 0;
      left = right;
      right = next;
    }
    return left * halfSize + right;
  };
  const decrypt = (y: number): number => {
    let left = Math.floor(y / halfSize);
    let right = y % halfSize;
    for (let i = ROUNDS - 1; i >= 0; i--) {
      const previous = (right ^ round(i, left)) >>> 0;
      right = left;
      left = previous;
    }
    return left * halfSize + right;
  };
  const inDomain = (x: number) => {
    if (!Number.isSafeInteger(x) || x < 0 || x >= size) throw new RangeError(`${x} is outside [0, ${size})`);
  };
  return {
    size,
    forward(x) {
      inDomain(x);
      let y = encrypt(x);
      while (y >= size) y = encrypt(y);
      return y;
    },
    inverse(y) {
      inDomain(y);
      let x = decrypt(y);
      while (x >= size) x = decrypt(x);
      return x;
    },
  };
}

function roundKeys(secret: string, label: string): Uint32Array {
  const bytes = Buffer.concat(
    [0, 1].map((block) =>
      createHmac('sha256', secret).update(`paste.short_url.v1:${label}:${block}`).digest(),
    ),
  );
  const keys = new Uint32Array(2 * ROUNDS);
  for (let i = 0; i < keys.length; i++) keys[i] = bytes.readUInt32BE(i * 4);
  return keys;
}

export function encodeBase62(value: number, length: number): string {
  let out = '';
  let rest = value;
  for (let i = 0; i < length; i++) {
    out = ALPHABET[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  if (rest !== 0) throw new RangeError(`${value} does not fit in ${length} base-62 digits`);
  return out;
}

export function decodeBase62(text: string): number {
  let value = 0;
  for (const char of text) {
    const digit = ALPHABET.indexOf(char);
    if (digit < 0) throw new RangeError(`"${char}" is not a base-62 digit`);
    value = value * 62 + digit;
  }
  return value;
}

export interface ShortIdCodec {
  /** The short_url of a sequence value (1, 2, 3, … as PostgreSQL hands them out). */
  encode(sequenceValue: number | bigint): string;
  /** The sequence value behind a short_url, or undefined when it is not one we could have issued. */
  decode(shortUrl: string): number | undefined;
}

export function createShortIdCodec(secret: string): ShortIdCodec {
  const tiers: { length: number; offset: number; permutation: Permutation }[] = [];
  let offset = 0;
  for (let length = MIN_LENGTH; length <= MAX_LENGTH; length++) {
    const size = 62 ** length;
    tiers.push({ length, offset, permutation: createPermutation(secret, size, `len${length}`) });
    offset += size;
  }
  return {
    encode(sequenceValue) {
      const index = Number(sequenceValue) - 1;
      if (!Number.isSafeInteger(index) || index < 0)
        throw new RangeError(`bad sequence value ${sequenceValue}`);
      for (const tier of tiers) {
        if (index < tier.offset + tier.permutation.size) {
          return encodeBase62(tier.permutation.forward(index - tier.offset), tier.length);
        }
      }
      throw new RangeError('the short_url space (62^6 + 62^7 + 62^8 ids) is exhausted');
    },
    decode(shortUrl) {
      const tier = tiers.find((candidate) => candidate.length === shortUrl.length);
      if (!tier || !/^[0-9A-Za-z]+$/.test(shortUrl)) return undefined;
      return tier.permutation.inverse(decodeBase62(shortUrl)) + tier.offset + 1;
    },
  };
}
