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
  start(partition: number): PartitionRunner;
  onError(error: unknown): void;
}

/** Keys and subjects allow only these characters. */
export const token = (name: string) => name.replace(/[^A-Za-z0-9_-]/g, '_');

/**
 * A member's share of a topic's partitions. Every few seconds it announces itself, reads the
 * live members, and wants each partition its rendezvous hash gives it: it renews the leases it
 * holds, lets go of the ones now meant for another member, and takes the free ones it is meant
 * to have (`create` decides between members that both think so).
 */
export function holdLeases(options: LeaseOptions): { stop(): Promise<void> } {
  const { store, memberId, group, topic, partitions } = options;
  const owned = new Map<number, { revision: number; runner: PartitionRunner }>();
  const memberKey = `${group}.m.${memberId}`;
  const partitionKey = (p: number) => `${group}.p.${token(topic)}.${p}`;
  let stopping = false;

  async function liveMembers(): Promise<string[]> {
    const members: string[] = [];
    for await (const key of await store.keys(`${group}.m.*`)) members.push(key.split('.').pop()!);
    if (!members.includes(memberId)) members.push(memberId);
    return members;
  }

  async function release(p: number) {
    const entry = owned.get(p);
    if (!entry) return;
    owned.delete(p);
    await entry.runner.stop();
    await store.delete(partitionKey(p)).catch(() => {});
  }

  async function renew(p: number, entry: { revision: number; runner: PartitionRunner }) {
    try {
      entry.revision = await store.update(partitionKey(p), memberId, entry.revision);
      return;
    } catch {
      // The lease lapsed: a tick came late (a busy process or server) and the TTL ended it.
    }
    try {
      // Nobody took it meanwhile: take it back and keep the runner. Stopping it here made every
      // late tick restart all the partitions' consumers, and a restart is slower than a tick,
      // so a loaded process kept losing its leases and delivered nothing for long stretches.
      entry.revision = await store.create(partitionKey(p), memberId);
    } catch {
      // Someone else holds it now: stop at once.
      owned.delete(p);
      await entry.runner.stop();
    }
  }

  async function acquire(p: number) {
    try {
      const revision = await store.create(partitionKey(p), memberId);
      owned.set(p, { revision, runner: options.start(p) });
    } catch {
      // Still held by its previous owner; it lets go once it sees the new membership.
    }
  }

  async function settle(p: number, desired: string) {
    const entry = owned.get(p);
    if (entry && desired !== memberId) return release(p);
    if (entry) return renew(p, entry);
    if (desired === memberId && !stopping) await acquire(p);
  }

  async function tick() {
    if (stopping) return;
    await store.put(memberKey, '1');
    const members = await liveMembers();
    await Promise.all(
      Array.from({ length: partitions }, (_, p) => settle(p, rendezvous(members, `${topic}/${p}`))),
    );
  }

  let ticking = tick().catch(options.onError);
  const timer = setInterval(() => {
    ticking = ticking.then(tick).catch(options.onError);
  }, options.leaseMs / 3);

  return {
    async stop() {
      stopping = true;
      clearInterval(timer);
      await ticking;
      await Promise.all([...owned.keys()].map(release));
      await store.delete(memberKey).catch(() => {});
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
