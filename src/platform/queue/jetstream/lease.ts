import { createHash } from 'node:crypto';

/** The part of a JetStream KV bucket (`@nats-io/kv`'s `KV`) that leases use; its TTL ends a lease. */
export interface LeaseStore {
  keys(filter: string): Promise<AsyncIterable<string>>;
  put(key: string, value: string): Promise<number>;
  /** Fails when the key exists: the arbiter between members that want one partition. */
  create(key: string, value: string): Promise<number>;
  /** Fails unless the key is still at `revision`: a lapsed lease is not renewed. */
  update(key: string, value: string, revision: number): Promise<number>;
  delete(key: string): Promise<void>;
}

/** What a partition's runner asks before it starts a message. */
export interface LeaseGuard {
  /**
   * Resolves at once while the lease is surely held; otherwise (a renewal is late, the lease may
   * have lapsed and another member may run the partition) once it is renewed, or `signal` aborts.
   */
  held(signal: AbortSignal): Promise<void>;
  /** Whether the lease is surely held now (what `held` resolves at once for). */
  valid(): boolean;
}

export interface PartitionRunner {
  /** Stops taking messages and waits for the ones in progress. */
  stop(): Promise<void>;
}

export interface LeaseOptions {
  store: LeaseStore;
  memberId: string;
  group: string;
  topic: string;
  partitions: number;
  /** Lifetime of a lease (the store's TTL); renewed three times within it. */
  leaseMs: number;
  /** Starts processing a partition this member just leased. */
  start(partition: number, lease: LeaseGuard): PartitionRunner;
  onError(error: unknown): void;
}

/** Keys and subjects allow only these characters. */
export const token = (name: string) => name.replace(/[^A-Za-z0-9_-]/g, '_');

/** A lease as its guard sees it. */
interface Validity {
  /**
   * Until then (this process's clock) the lease is surely held: the store wrote it after we sent
   * the write, and ends it `leaseMs` after it wrote it.
   */
  validUntil: number;
  /** Runners' messages waiting for a renewal. */
  waiters: Set<() => void>;
}

/** A partition this member holds: its lease's revision, its runner, and its stop and release once begun. */
interface Held extends Validity {
  revision: number;
  runner: PartitionRunner;
  stopped?: Promise<void>;
  released?: Promise<void>;
}

/**
 * A member's share of a topic's partitions. Every few seconds it announces itself, reads the
 * live members, and wants each partition its rendezvous hash gives it: it renews the leases it
 * holds, lets go of the ones now meant for another member, and takes the free ones it is meant
 * to have (`create` decides between members that both think so).
 *
 * Letting go waits for the runner's messages in progress, which can take as long as a provider
 * call. Meanwhile the lease is still renewed (the next owner must not start before they end),
 * and the tick does not wait for it: a tick held up by one slow hand-over renewed none of the
 * other leases, they lapsed, and another member ran those partitions beside this one.
 */
export function holdLeases(options: LeaseOptions): { stop(): Promise<void> } {
  const { store, memberId, group, topic, partitions } = options;
  const owned = new Map<number, Held>();
  /** Runners stopping, by partition: a partition is not taken again until its old runner has stopped. */
  const draining = new Map<number, Promise<void>>();
  const memberKey = `${group}.m.${memberId}`;
  const partitionKey = (p: number) => `${group}.p.${token(topic)}.${p}`;
  let stopping = false;
  // A tenth kept back for the two clocks' drift and the store's own timing of the TTL.
  const validity = options.leaseMs * 0.9;

  /** The lease was written (created or renewed) by a request sent at `sentAt`. */
  function written(lease: Validity, sentAt: number) {
    lease.validUntil = Math.max(lease.validUntil, sentAt + validity);
    // A write that took longer than that proves nothing for now: the waiters wait for the next.
    if (Date.now() >= lease.validUntil) return;
    for (const wake of [...lease.waiters]) wake();
  }

  function guard(lease: Validity): LeaseGuard {
    const valid = () => Date.now() < lease.validUntil;
    return {
      valid,
      held(signal) {
        if (valid() || signal.aborted) return Promise.resolve();
        return new Promise((resolve) => {
          const done = () => {
            lease.waiters.delete(done);
            signal.removeEventListener('abort', done);
            resolve();
          };
          lease.waiters.add(done);
          signal.addEventListener('abort', done, { once: true });
        });
      },
    };
  }

  async function liveMembers(): Promise<string[]> {
    const members: string[] = [];
    for await (const key of await store.keys(`${group}.m.*`)) members.push(key.split('.').pop()!);
    if (!members.includes(memberId)) members.push(memberId);
    return members;
  }

  /** Stops a runner once, in the background; `stop()` waits for every one still draining. */
  function stopRunner(p: number, held: Held): Promise<void> {
    if (held.stopped) return held.stopped;
    const stopped = held.runner
      .stop()
      .catch(options.onError)
      .finally(() => {
        if (draining.get(p) === stopped) draining.delete(p);
      });
    draining.set(p, stopped);
    held.stopped = stopped;
    return stopped;
  }

  /** Lets go of a partition: its lease goes once its runner has stopped, renewed until then. */
  function release(p: number): Promise<void> {
    const held = owned.get(p);
    if (!held) return Promise.resolve();
    held.released ??= stopRunner(p, held).then(async () => {
      if (owned.get(p) !== held) return; // lost meanwhile: the lease is someone else's
      owned.delete(p);
      await store.delete(partitionKey(p)).catch(() => {});
    });
    return held.released;
  }

  async function renew(p: number, held: Held) {
    try {
      const sentAt = Date.now();
      held.revision = await store.update(partitionKey(p), memberId, held.revision);
      written(held, sentAt);
      return;
    } catch {
      // The lease lapsed: a tick came late (a busy process or server) and the TTL ended it.
    }
    if (owned.get(p) !== held) return; // released meanwhile
    try {
      // Nobody took it meanwhile: take it back and keep the runner. Stopping it here made every
      // late tick restart all the partitions' consumers, and a restart is slower than a tick,
      // so a loaded process kept losing its leases and delivered nothing for long stretches.
      const sentAt = Date.now();
      held.revision = await store.create(partitionKey(p), memberId);
      written(held, sentAt);
    } catch {
      // Someone else holds it now: stop at once.
      if (owned.get(p) === held) owned.delete(p);
      void stopRunner(p, held);
    }
  }

  async function acquire(p: number) {
    try {
      const sentAt = Date.now();
      const revision = await store.create(partitionKey(p), memberId);
      const lease: Validity = { validUntil: sentAt + validity, waiters: new Set() };
      // One object: the guard reads the validity that renewals write.
      owned.set(p, Object.assign(lease, { revision, runner: options.start(p, guard(lease)) }));
    } catch {
      // Still held by its previous owner; it lets go once it sees the new membership.
    }
  }

  async function settle(p: number, desired: string) {
    const held = owned.get(p);
    if (held && desired !== memberId) void release(p);
    if (held) return renew(p, held);
    if (desired === memberId && !stopping && !draining.has(p)) await acquire(p);
  }

  async function tick() {
    if (stopping) {
      // Only the leases of the runners still draining are kept.
      await Promise.all([...owned].map(([p, held]) => renew(p, held)));
      return;
    }
    await store.put(memberKey, '1');
    const members = await liveMembers();
    await Promise.all(
      Array.from({ length: partitions }, (_, p) => settle(p, rendezvous(members, `${topic}/${p}`))),
    );
  }

  let busy = true;
  const run = () =>
    tick()
      .catch(options.onError)
      .finally(() => {
        busy = false;
      });
  let ticking = run();
  const timer = setInterval(() => {
    // A tick still running (a slow store) is not queued behind: the next interval takes its turn,
    // so a store that answers again gets one tick, not one for every interval it was slow.
    if (busy) return;
    busy = true;
    ticking = run();
  }, options.leaseMs / 3);

  return {
    async stop() {
      stopping = true;
      await ticking;
      // Gone from the members first, so the others want these partitions and take each one as
      // soon as its runner here has stopped and its lease is deleted.
      await store.delete(memberKey).catch(() => {});
      await Promise.all([...owned.keys()].map(release));
      await Promise.all([...draining.values()]);
      clearInterval(timer);
      await ticking;
    },
  };
}

/** The member with the highest hash of (member, item): stable, and moves few items when members change. */
export function rendezvous(members: string[], item: string): string {
  let best = '';
  let bestScore = '';
  for (const member of members) {
    const score = createHash('sha1').update(`${member}|${item}`).digest('hex');
    if (score > bestScore) {
      bestScore = score;
      best = member;
    }
  }
  return best;
}
