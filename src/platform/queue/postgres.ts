import { randomUUID } from 'node:crypto';
import { EventEmitter, setMaxListeners } from 'node:events';
import { sql } from 'kysely';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/index.ts';
import type { PubSub } from '../pubsub/index.ts';
import type { ConsumeOptions, Consumer, DeadLetter, Handler, Queue, QueueMessage } from './index.ts';
import { type ClaimedRow, createMessageLeases } from './postgres/lease.ts';
import { createRowProcessor } from './postgres/processor.ts';
import { runClaimLoop } from './postgres/runner.ts';

export interface PostgresQueueOptions {
  dedupWindowMs?: number;
  /** How long a claimed message stays invisible to others before it counts as abandoned. */
  leaseMs?: number;
  /**
   * How often an idle consumer looks for work nothing told it about: a lease run out (its
   * consumer died), a publish by a process that shares no pub/sub with this one. A publish in
   * this process, a retry coming due and, through `pubsub`, a publish in another process wake
   * the consumers at once.
   */
  pollMs?: number;
  /** Pub/sub shared by the processes on this database (Redis): their publishes wake this one's consumers. */
  pubsub?: PubSub;
}

/** The pub/sub channel on which processes announce topics that have new messages. */
const READY_CHANNEL = 'queue.ready';

/**
 * The embedded queue: one Postgres table claimed with `FOR UPDATE SKIP LOCKED`. Only the
 * oldest ready message of each key can be claimed, so a key's messages run one at a time and
 * in order (a message waiting for its retry holds its key back, and only its key).
 * The parts: `postgres/lease.ts` (claiming and keeping messages), `postgres/runner.ts` (the claim
 * loop), `postgres/processor.ts` (one message's handler and its outcome).
 */
export function createPostgresQueue(db: Db, clock: Clock, options: PostgresQueueOptions = {}): Queue {
  const dedupWindowMs = options.dedupWindowMs ?? 24 * 3600_000;
  const leaseMs = options.leaseMs ?? 30_000;
  // An idle consumer costs a claim statement per poll: a short interval kept an idle embedded
  // server busy, and every wake that matters comes as an event.
  const pollMs = options.pollMs ?? 2000;
  const events = new EventEmitter();
  const wake = new EventEmitter();
  wake.setMaxListeners(0);
  const consumers = new Set<Consumer>();
  let lastDedupPurge = 0;
  const announcer = createAnnouncer(options.pubsub, wake, (error) => events.emit('error', error));

  const at = (offsetMs = 0) => new Date(clock.now().getTime() + offsetMs);

  async function purgeDedup() {
    const now = clock.now().getTime();
    if (now - lastDedupPurge < 60_000) return;
    lastDedupPurge = now;
    await sql`delete from queue_dedup where (topic, dedup_id) in (
      select topic, dedup_id from queue_dedup where expires_at <= ${at()} limit 5000)`.execute(db);
  }

  const leases = createMessageLeases(db, at, leaseMs);

  function consume<T>(topic: string, opts: ConsumeOptions, handler: Handler<T>): Consumer {
    const abort = new AbortController();
    // Every retry waiting to come due listens for the stop: one per message put back, not a leak.
    setMaxListeners(0, abort.signal);
    const reportError = (error: unknown) => {
      events.emit('error', error);
    };
    const process = createRowProcessor<T>({
      db,
      at,
      leases,
      topic,
      handler,
      retryDelaysMs: opts.retryDelaysMs,
      signal: abort.signal,
      events,
      retryDue: (delayMs) => {
        clock.sleep(delayMs, abort.signal).then(
          () => wake.emit(topic),
          () => {},
        );
      },
    });
    announcer.listen();
    const loop = runClaimLoop({
      topic,
      concurrency: opts.concurrency ?? 10,
      pollMs,
      wake,
      claim: (limit) => leases.claim(topic, limit),
      afterClaim: purgeDedup,
      process,
      onError: reportError,
      signal: abort.signal,
    });
    const consumer: Consumer = {
      async stop() {
        abort.abort(new Error('consumer stopping'));
        await loop.stop();
        consumers.delete(consumer);
      },
    };
    consumers.add(consumer);
    return consumer;
  }

  async function publish<T>(topic: string, message: QueueMessage<T>) {
    const now = at();
    const { rows } = await sql<{ id: bigint }>`
      with fresh as (
        insert into queue_dedup (topic, dedup_id, expires_at)
        values (${topic}, ${message.id}, ${at(dedupWindowMs)})
        on conflict (topic, dedup_id) do update set expires_at = excluded.expires_at
          where queue_dedup.expires_at <= ${now}
        returning 1
      )
      insert into queue_messages (topic, key, dedup_id, payload, trace_context, visible_at, created_at)
      select ${topic}, ${message.key}, ${message.id}, ${JSON.stringify(message.payload)}::jsonb,
        ${message.traceContext ? JSON.stringify(message.traceContext) : null}::jsonb, ${now}, ${now}
      from fresh
      returning id`.execute(db);
    if (rows.length > 0) announcer.ready(topic);
    return { duplicate: rows.length === 0 };
  }

  return {
    kind: 'postgres',
    events,
    publish,
    // Stored before it resolves, like `publish`: this queue has no cheaper way to hand a message over.
    publishUnconfirmed: async <T>(topic: string, message: QueueMessage<T>) => {
      await publish(topic, message);
    },
    consume,
    async deadLetters<T>(topic: string, limit = 100) {
      const { rows } = await sql<ClaimedRow & { last_error: string; dead_at: Date }>`
        select id, topic, key, dedup_id, payload, attempt, last_error, dead_at from queue_messages
        where topic = ${topic} and status = 'dead' order by dead_at desc, id desc limit ${limit}`.execute(db);
      return rows.map(
        (row): DeadLetter<T> => ({
          deadLetterId: String(row.id),
          topic: row.topic,
          messageId: row.dedup_id,
          key: row.key,
          payload: row.payload as T,
          attempts: row.attempt,
          error: row.last_error ?? '',
          deadAt: row.dead_at,
        }),
      );
    },
    async redrive(topic, deadLetterId) {
      if (!/^\d+$/.test(deadLetterId)) return false;
      const result = await sql`update queue_messages
        set status = 'ready', attempt = 0, visible_at = ${at()}, dead_at = null, lease_until = null
        where id = ${BigInt(deadLetterId)} and topic = ${topic} and status = 'dead'`.execute(db);
      const changed = Number(result.numAffectedRows ?? 0n) > 0;
      if (changed) announcer.ready(topic);
      return changed;
    },
    async depth(topic) {
      const { rows } = await sql<{ n: bigint }>`
        select count(*) as n from queue_messages where topic = ${topic} and status = 'ready'`.execute(db);
      return Number(rows[0].n);
    },
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      await Promise.all([...consumers].map((consumer) => consumer.stop()));
      await announcer.close();
    },
  };
}

/**
 * Tells consumers that a topic has new messages: this process's at once; with a shared pub/sub,
 * the other processes' too, in one message per tick for all the topics published meanwhile (a
 * batch of a thousand sends one). A process ignores its own announcements, which it has acted on.
 */
function createAnnouncer(pubsub: PubSub | undefined, wake: EventEmitter, onError: (error: unknown) => void) {
  const shared = pubsub?.kind === 'memory' ? undefined : pubsub;
  const self = randomUUID();
  const pending = new Set<string>();
  let unsubscribe: Promise<() => Promise<void>> | undefined;

  const flush = () => {
    const topics = [...pending];
    pending.clear();
    shared?.publish(READY_CHANNEL, { from: self, topics }).catch(onError);
  };

  return {
    ready(topic: string) {
      wake.emit(topic);
      if (!shared) return;
      if (pending.size === 0) setImmediate(flush);
      pending.add(topic);
    },
    /** Starts hearing other processes' announcements (once, with the first consumer). */
    listen() {
      if (!shared || unsubscribe) return;
      unsubscribe = shared.subscribe(READY_CHANNEL, (message) => {
        const { from, topics } = message as { from: string; topics: string[] };
        if (from === self) return;
        for (const topic of topics) wake.emit(topic);
      });
      unsubscribe.catch(onError);
    },
    async close() {
      const stop = await unsubscribe?.catch(() => undefined);
      await stop?.();
    },
  };
}
