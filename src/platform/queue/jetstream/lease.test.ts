import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  holdLeases,
  type LeaseGuard,
  type LeaseOptions,
  type LeaseStore,
  type PartitionRunner,
  rendezvous,
} from './lease.ts';

/**
 * A KV bucket in memory: revisions and `create`/`update` as JetStream KV decides them, and with
 * `ttlMs` an entry ends that long after it was last written, as the bucket's max age ends it.
 */
function memoryStore(ttlMs = Number.POSITIVE_INFINITY) {
  const entries = new Map<string, { value: string; revision: number; at: number }>();
  let revision = 0;
  const live = (key: string) => {
    const entry = entries.get(key);
    if (entry && Date.now() - entry.at >= ttlMs) entries.delete(key);
    return entries.get(key);
  };
  const store: LeaseStore = {
    async keys(filter) {
      const prefix = filter.replace(/\*$/, '');
      const found = [...entries.keys()].filter((key) => key.startsWith(prefix) && live(key));
      return (async function* () {
        yield* found;
      })();
    },
    async put(key, value) {
      entries.set(key, { value, revision: ++revision, at: Date.now() });
      return revision;
    },
    async create(key, value) {
      if (live(key)) throw new Error('wrong last sequence');
      return store.put(key, value);
    },
    async update(key, value, expected) {
      if (live(key)?.revision !== expected) throw new Error('wrong last sequence');
      return store.put(key, value);
    },
    async delete(key) {
      entries.delete(key);
    },
  };
  return { store, entries };
}

/** Runners that record which member runs which partition. */
function runners() {
  const running = new Map<number, string[]>();
  const start =
    (member: string) =>
    (p: number): PartitionRunner => {
      running.set(p, [...(running.get(p) ?? []), member]);
      return {
        async stop() {
          running.set(
            p,
            (running.get(p) ?? []).filter((m) => m !== member),
          );
        },
      };
    };
  const owners = (p: number) => running.get(p) ?? [];
  return { start, owners };
}

const PARTITIONS = 8;
const options = (store: LeaseStore, memberId: string, start: LeaseOptions['start']) => ({
  store,
  memberId,
  group: 'g',
  topic: 'a.topic',
  partitions: PARTITIONS,
  leaseMs: 60,
  start,
  onError: (error: unknown) => assert.fail(String(error)),
});

async function until(check: () => boolean, what: string) {
  const deadline = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

const everyPartition = (check: (p: number) => boolean) =>
  Array.from({ length: PARTITIONS }, (_, p) => p).every(check);

test('two members share the partitions by rendezvous hash, each run by exactly one member', async () => {
  const { store } = memoryStore();
  const { start, owners } = runners();
  const one = holdLeases(options(store, 'one', start('one')));
  const two = holdLeases(options(store, 'two', start('two')));
  try {
    await until(
      () => everyPartition((p) => owners(p).join() === rendezvous(['one', 'two'], `a.topic/${p}`)),
      'the hashed split',
    );
    await sleep(100); // a few more renewals change nothing
    assert.ok(everyPartition((p) => owners(p).length === 1));
  } finally {
    await one.stop();
    await two.stop();
  }
});

test('a member that stops lets go, and the other takes its partitions', async () => {
  const { store, entries } = memoryStore();
  const { start, owners } = runners();
  const one = holdLeases(options(store, 'one', start('one')));
  const two = holdLeases(options(store, 'two', start('two')));
  await until(() => everyPartition((p) => owners(p).length === 1), 'every partition run');
  await two.stop();
  assert.equal(entries.has('g.m.two'), false, 'its membership is gone');
  await until(() => everyPartition((p) => owners(p).join() === 'one'), 'one runs everything');
  await one.stop();
  assert.ok(everyPartition((p) => owners(p).length === 0));
  assert.deepEqual([...entries.keys()], [], 'every lease released');
});

test('a lease taken by someone else stops its runner at the next renewal', async () => {
  const { store, entries } = memoryStore();
  const { start, owners } = runners();
  const one = holdLeases(options(store, 'one', start('one')));
  try {
    await until(() => everyPartition((p) => owners(p).join() === 'one'), 'one runs everything');
    const key = 'g.p.a_topic.3';
    assert.ok(entries.has(key));
    entries.set(key, { value: 'intruder', revision: 10_000, at: Date.now() });
    await until(() => owners(3).length === 0, 'the runner of partition 3 stopped');
  } finally {
    await one.stop();
  }
});

test('a lease that lapsed while nobody took it is taken back; its runner goes on', async () => {
  const { store, entries } = memoryStore();
  const { start, owners } = runners();
  let starts = 0;
  const one = holdLeases(
    options(store, 'one', (p) => {
      starts++;
      return start('one')(p);
    }),
  );
  try {
    await until(() => everyPartition((p) => owners(p).join() === 'one'), 'one runs everything');
    const started = starts;
    const key = 'g.p.a_topic.3';
    const before = entries.get(key)?.revision ?? 0;
    entries.delete(key); // the TTL ended it: the renewal came late
    await until(() => (entries.get(key)?.revision ?? 0) > before, 'the lease held again');
    assert.equal(entries.get(key)?.value, 'one');
    assert.deepEqual(owners(3), ['one'], 'the same runner, never stopped');
    assert.equal(starts, started, 'no runner restarted');
  } finally {
    await one.stop();
  }
});

test('a runner slow to stop keeps its lease until it has stopped, and the other leases are renewed meanwhile', async () => {
  // Long enough that a busy test machine's event-loop stalls do not end a lease by themselves.
  const leaseMs = 1000;
  const { store, entries } = memoryStore(leaseMs);
  const { start, owners } = runners();
  let finishInProgress = () => {};
  const inProgress = new Promise<void>((resolve) => {
    finishInProgress = resolve;
  });
  // One's runners stop only when their messages in progress end (a provider call that hangs).
  const slowStart = (p: number): PartitionRunner => {
    const runner = start('one')(p);
    return {
      async stop() {
        await inProgress;
        await runner.stop();
      },
    };
  };
  const one = holdLeases({ ...options(store, 'one', slowStart), leaseMs });
  let two: ReturnType<typeof holdLeases> | undefined;
  const doubled = new Set<number>();
  const watch = setInterval(() => {
    for (let p = 0; p < PARTITIONS; p++) if (owners(p).length > 1) doubled.add(p);
  }, 5);
  try {
    await until(() => everyPartition((p) => owners(p).join() === 'one'), 'one runs everything');
    two = holdLeases({ ...options(store, 'two', start('two')), leaseMs });
    const twos = Array.from({ length: PARTITIONS }, (_, p) => p).filter(
      (p) => rendezvous(['one', 'two'], `a.topic/${p}`) === 'two',
    );
    assert.ok(twos.length > 0 && twos.length < PARTITIONS, 'the hash gives each member some');
    await sleep(leaseMs * 3); // one's hand-over hangs for several lease lifetimes
    assert.deepEqual([...doubled], [], 'no partition ran in two members at once');
    for (let p = 0; p < PARTITIONS; p++) {
      assert.equal(entries.get(`g.p.a_topic.${p}`)?.value, 'one', `partition ${p} still one's lease`);
      assert.deepEqual(owners(p), ['one'], `partition ${p} still run by one alone`);
    }
    finishInProgress();
    await until(() => twos.every((p) => owners(p).join() === 'two'), "two runs its share once one's stopped");
    assert.deepEqual([...doubled], [], 'no partition ran in two members at once');
  } finally {
    finishInProgress();
    clearInterval(watch);
    await one.stop();
    await two?.stop();
  }
});

test('a partition whose lease was lost is not taken again until its old runner has stopped', async () => {
  const { store, entries } = memoryStore();
  const { start, owners } = runners();
  let finishInProgress = () => {};
  const inProgress = new Promise<void>((resolve) => {
    finishInProgress = resolve;
  });
  let stopsAsked = 0;
  const one = holdLeases(
    options(store, 'one', (p) => {
      const runner = start('one')(p);
      if (p !== 3) return runner;
      return {
        async stop() {
          stopsAsked++;
          await inProgress; // partition 3's messages in progress end only when the test says so
          await runner.stop();
        },
      };
    }),
  );
  try {
    await until(() => everyPartition((p) => owners(p).join() === 'one'), 'one runs everything');
    const key = 'g.p.a_topic.3';
    entries.set(key, { value: 'intruder', revision: 10_000, at: Date.now() });
    await until(() => stopsAsked > 0, 'the lost lease noticed');
    entries.delete(key); // the intruder lets go while one's old runner still drains
    await sleep(200); // ten ticks
    assert.deepEqual(owners(3), ['one'], 'only the old runner, still draining');
    assert.equal(entries.has(key), false, 'not taken again yet');
    finishInProgress();
    await until(() => owners(3).join() === 'one' && entries.get(key)?.value === 'one', 'taken again');
  } finally {
    finishInProgress();
    await one.stop();
  }
});

test("a runner's guard holds back its messages while a renewal is late, until the lease is written again", async () => {
  const { store } = memoryStore();
  let resumeUpdates: (() => void) | undefined;
  const stalling: LeaseStore = {
    ...store,
    async update(key, value, revision) {
      // While stalled, renewals hang (a busy server), then go through as sent.
      if (resumeUpdates) await new Promise<void>((resolve) => stalled.push(resolve));
      return store.update(key, value, revision);
    },
  };
  const stalled: (() => void)[] = [];
  const guards = new Map<number, LeaseGuard>();
  const one = holdLeases({
    ...options(stalling, 'one', (p, lease) => {
      guards.set(p, lease);
      return { stop: async () => {} };
    }),
    leaseMs: 1000,
  });
  const within = (promise: Promise<void>, ms: number) =>
    Promise.race([promise.then(() => true), sleep(ms).then(() => false)]);
  try {
    await until(() => guards.size === PARTITIONS, 'every partition run');
    const running = new AbortController().signal;
    assert.equal(await within(guards.get(0)!.held(running), 20), true, 'a fresh lease lets messages start');
    assert.equal(guards.get(0)!.valid(), true);
    resumeUpdates = () => {
      resumeUpdates = undefined;
      for (const resume of stalled.splice(0)) resume();
    };
    await sleep(1200); // past the lease's lifetime without a renewal
    const waiting = guards.get(0)!.held(running);
    assert.equal(await within(waiting, 100), false, 'no message starts while the lease may have lapsed');
    assert.equal(guards.get(0)!.valid(), false, 'nor are the pulled ones kept alive');
    const stopping = new AbortController();
    const stopped = guards.get(1)!.held(stopping.signal);
    stopping.abort();
    assert.equal(await within(stopped, 20), true, 'a stop ends the wait');
    resumeUpdates();
    assert.equal(await within(waiting, 1000), true, 'the renewal lets it start');
    assert.equal(guards.get(0)!.valid(), true);
  } finally {
    resumeUpdates?.();
    await one.stop();
  }
});

test('a store slow to answer gets one tick when it answers, not one for every interval it was slow', async () => {
  const { store } = memoryStore();
  let stalled: Promise<void> | undefined;
  let answer = () => {};
  const puts: number[] = [];
  const slow: LeaseStore = {
    ...store,
    async put(key, value) {
      if (key.includes('.m.')) puts.push(Date.now());
      await stalled;
      return store.put(key, value);
    },
  };
  const { start } = runners();
  const one = holdLeases(options(slow, 'one', start('one')));
  try {
    await sleep(50);
    stalled = new Promise((resolve) => {
      answer = resolve;
    });
    await sleep(200); // ten intervals of 20 ms
    const before = puts.length;
    const answeredAt = Date.now();
    stalled = undefined;
    answer();
    await sleep(15); // less than an interval
    const burst = puts.filter((at) => at >= answeredAt).length;
    // One, and one more for each interval a loaded machine let pass meanwhile.
    const allowed = 1 + Math.floor((Date.now() - answeredAt) / 20);
    assert.ok(burst <= allowed, `${burst} ticks ran at once after the store answered (${before} before)`);
  } finally {
    stalled = undefined;
    answer();
    await one.stop();
  }
});
