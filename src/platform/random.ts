import { randomFillSync } from 'node:crypto';

/**
 * Random bytes drawn from the system's generator a block at a time: each `randomBytes` or
 * `getRandomValues` call pays for locking and bookkeeping around OpenSSL's generator (a
 * `getpid` system call among them), more than the bytes themselves cost. Each byte is handed out
 * once; the block is refilled when used up. `take` returns a view into the block, valid until the
 * call that refills it: use the bytes at once (encode or copy them), never keep the view.
 */
export function createRandomPool(blockSize: number): (count: number) => Buffer {
  const block = Buffer.alloc(blockSize);
  let offset = blockSize;
  return (count) => {
    if (count > blockSize) throw new RangeError(`at most ${blockSize} bytes at a time`);
    if (offset + count > blockSize) {
      randomFillSync(block);
      offset = 0;
    }
    offset += count;
    return block.subarray(offset - count, offset);
  };
}
