import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ClaimedRow } from './lease.ts';
import { type ClaimLoopOptions, runClaimLoop } from './runner.ts';

const row = (id: number): ClaimedRow => ({
  id: BigInt(id),
  topic: 't',
  key: `k${id}`,
  dedup_id: `m${id}`,
  payload: {},
  attempt: 1,
});

/** A claim loop over a list of waiting rows, with everything it did recorded. */
function loopOver(waiting: ClaimedRow[], overrides: Partial<ClaimLoopOptions> = {}) {
  const abort = new AbortController();
  const wake = new EventEmitter();
  const limits: number[] = [];
  const errors: unknown[] = [];
  const loop = runClaimLoop({
    topic: 't',
    concurrency: 2,
    pollMs: 10_000,
    wake,
    claim: async (limit) => {
      limits.push(limit);
      return waiting.splice(0, limit);
    },
    afterClaim: async () => {},
    process: async () => {},
    onError: (error) => errors.push(error),
    signal: abort.signal,
    ...overrides,
  });
  const stop = async () => {
    abort.abort(new Error('stop'));
    await loop.stop();
  };
  return { wake, limits, errors, stop };
}

test('claims no more than the free slots, and claims again as rows finish', async () => {
  let running = 0;
  let most = 0;
  const handled: bigint[] = [];
  const { limits, stop } = loopOver([1, 2, 3, 4, 5].map(row), {
    process: async (r) => {
      running++;
      most = Math.max(most, running);
      await sleep(10);
      handled.push(r.id);
      running--;
    },
  });
  const deadline = Date.now() + 5000;
  while (handled.length < 5 && Date.now() < deadline) await sleep(5);
  await stop();
  assert.deepEqual(handled.sort(), [1n, 2n, 3n, 4n, 5n]);
  assert.equal(most, 2);
  assert.ok(
    limits.every((limit) => limit >= 1 && limit <= 2),
    limits.join(),
  );
});

test('an idle loop claims again at once when a publish in this process wakes it', async () => {
  const waiting: ClaimedRow[] = [];
  const handled: bigint[] = [];
  const { wake, stop } = loopOver(waiting, { process: async (r) => void handled.push(r.id) });
  await sleep(20); // idle now, with a long poll interval
  waiting.push(row(9));
  wake.emit('t');
  const deadline = Date.now() + 2000;
  while (handled.length === 0 && Date.now() < deadline) await sleep(5);
  await stop();
  assert.deepEqual(handled, [9n]);
});

test('a failed claim or after-claim step is reported and the loop goes on', async () => {
  let claims = 0;
  const handled: bigint[] = [];
  const { errors, stop } = loopOver([], {
    pollMs: 5,
    claim: async () => {
      claims++;
      if (claims === 1) throw new Error('connection reset');
      return claims === 2 ? [row(1)] : [];
    },
    afterClaim: async () => {
      if (claims === 2) throw new Error('purge failed');
    },
    process: async (r) => void handled.push(r.id),
  });
  const deadline = Date.now() + 2000;
  while (claims < 3 && Date.now() < deadline) await sleep(5);
  await stop();
  assert.deepEqual(
    errors.map((e) => (e as Error).message),
    ['connection reset', 'purge failed'],
  );
  assert.deepEqual(handled, [1n], 'the rows claimed before the purge failed still run');
});

test('stop waits for the rows in progress', async () => {
  let finished = false;
  const { stop } = loopOver([row(1)], {
    process: async () => {
      await sleep(50);
      finished = true;
    },
  });
  await sleep(10);
  await stop();
  assert.equal(finished, true);
});
