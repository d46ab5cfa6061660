import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sharedReads } from './service.ts';

/** A read whose answers are released by hand, numbered in the order the reads started. */
function manualRead() {
  const pending: ((value: number) => void)[] = [];
  let started = 0;
  return {
    read: () => {
      started++;
      const n = started;
      return new Promise<number>((resolve) => pending.push(() => resolve(n)));
    },
    started: () => started,
    finish: () => pending.shift()!(0),
  };
}

test('callers during a read share the next one, never the running one', async () => {
  const source = manualRead();
  const counts = sharedReads(source.read);
  const first = counts();
  assert.equal(source.started(), 1);
  const during = [counts(), counts(), counts()];
  assert.equal(source.started(), 1, 'the next read waits for the running one');
  source.finish();
  assert.equal(await first, 1);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(source.started(), 2, 'one read for all three');
  source.finish();
  assert.deepEqual(await Promise.all(during), [2, 2, 2], 'asked during read 1: answered by read 2');
  const later = counts();
  assert.equal(source.started(), 3, 'nothing running: a new read at once');
  source.finish();
  assert.equal(await later, 3);
});

test('a failed read fails its callers only; the callers waiting for the next read get it', async () => {
  let calls = 0;
  const counts = sharedReads(async () => {
    calls++;
    if (calls === 1) throw new Error('connection lost');
    return calls;
  });
  const failing = counts();
  const waiting = counts();
  await assert.rejects(failing, /connection lost/);
  assert.equal(await waiting, 2);
});
