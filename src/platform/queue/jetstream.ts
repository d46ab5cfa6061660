import { createHash, randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import {
  AckPolicy,
  DeliverPolicy,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
} from '@nats-io/jetstream';
import { type KV, Kvm } from '@nats-io/kv';
import { headers, type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import type { Clock } from '../clock.ts';
import {
  type ConsumeOptions,
  type Consumer,
  type DeadLetter,
  describeError,
  type Handler,
  nextStep,
  type Queue,
  type QueueMessage,
} from './index.ts';

export interface JetStreamQueueOptions {
  /** Prefix of every subject, stream and bucket, so deployments and test runs never meet. */
  namespace: string;
  /** Partitions per topic; a key always maps to the same partition. Fixed once a topic has messages. */
  partitions?: number;
  dedupWindowMs?: number;
  /** Redelivery delay for a message whose worker stopped answering (crash). */
  ackWaitMs?: number;
  /** Lifetime of a partition lease; a dead worker's partitions move after this long. */
  leaseMs?: number;
  deadLetterMaxAgeMs?: number;
}

const NANOS = 1_000_000;

/** FNV-1a: a stable key → partition map, the same in every process and version. */
export function partitionOf(key: string, partitions: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % partitions;
}

/**
 * JetStream queue. Each topic is a work-queue stream split into partitions by key
 * (`<ns>.q.<topic>.<partition>`), deduplicated by message id over the stream's
 * duplicate window. JetStream keeps each partition's order; a worker group shares the
 * partitions through leases in a JetStream KV bucket (rendezvous hashing over the live
 * members, `create` as the arbiter), and the owner of a partition runs each key's messages
 * one after another while different keys proceed in parallel. A message waiting for its
 * retry stays unacknowledged (kept alive with `working()`), so it holds back its key only.
 */
export async function createJetStreamQueue(
  url: string,
  clock: Clock,
  options: JetStreamQueueOptions,
): Promise<Queue> {
  const partitions = options.partitions ?? 16;
  const dedupWindowMs = options.dedupWindowMs ?? 24 * 3600_000;
  const ackWaitMs = options.ackWaitMs ?? 30_000;
  const leaseMs = options.leaseMs ?? 10_000;
  const ns = options.namespace;
  const nc: NatsConnection = await connect({
    servers: url,
    name: `${ns}-queue`,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    // nats.js otherwise captures a stack trace for every request (each publish's ack) to report
    // where a timed-out request came from; that showed in the accept and worker profiles.
    noAsyncTraces: true,
  });
  const jsm: JetStreamManager = await jetstreamManager(nc);
  const js: JetStreamClient = jetstream(nc);
  const kv: KV = await new Kvm(nc).create(`${ns}_queue_leases`, { ttl: leaseMs, history: 1 });
  const memberId = randomUUID();
  const events = new EventEmitter();
  const consumers = new Set<Consumer>();
  const ensured = new Map<string, Promise<void>>();

  const token = (topic: string) => topic.replace(/[^A-Za-z0-9_-]/g, '_');
  const streamName = (topic: string) => `${ns}_Q_${token(topic)}`.toUpperCase();
  const deadStreamName = (topic: string) => `${ns}_DLQ_${token(topic)}`.toUpperCase();
  const subject = (topic: string, partition: number) => `${ns}.q.${topic}.${partition}`;
  const deadSubject = (topic: string) => `${ns}.dlq.${topic}`;

  async function ensureStream(
    name: string,
    config: Omit<Parameters<JetStreamManager['streams']['add']>[0], 'name'>,
  ) {
    try {
      await jsm.streams.info(name);
    } catch {
      await jsm.streams.add({ ...config, name }).catch(async (error) => {
        // Another process created it in between.
        await jsm.streams.info(name).catch(() => {
          throw error;
        });
      });
    }
  }

  function ensureTopic(topic: string): Promise<void> {
    let ready = ensured.get(topic);
    if (!ready) {
      ready = Promise.all([
        ensureStream(streamName(topic), {
          subjects: [`${ns}.q.${topic}.*`],
          retention: RetentionPolicy.Workqueue,
          storage: StorageType.File,
          duplicate_window: dedupWindowMs * NANOS,
        }),
        ensureStream(deadStreamName(topic), {
          subjects: [deadSubject(topic)],
          retention: RetentionPolicy.Limits,
          storage: StorageType.File,
          max_age: (options.deadLetterMaxAgeMs ?? 14 * 24 * 3600_000) * NANOS,
        }),
      ]).then(() => {});
      ready.catch(() => ensured.delete(topic));
      ensured.set(topic, ready);
    }
    return ready;
  }

  /** What a message goes out as, confirmed or not: its partition's subject and its envelope. */
  const outgoing = <T>(topic: string, message: QueueMessage<T>) => ({
    subject: subject(topic, partitionOf(message.key, partitions)),
    data: JSON.stringify({ key: message.key, payload: message.payload }),
  });

  async function publish<T>(topic: string, message: QueueMessage<T>) {
    await ensureTopic(topic);
    const out = outgoing(topic, message);
    try {
      const ack = await js.publish(out.subject, out.data, { msgID: message.id });
      return { duplicate: ack.duplicate };
    } catch (error) {
      // nats.js names a missing stream "jetstream is not enabled" (no responders): say what failed.
      throw new Error(`JetStream publish failed: ${describeError(error)}`, { cause: error });
    }
  }

  async function publishUnconfirmed<T>(topic: string, message: QueueMessage<T>) {
    await ensureTopic(topic);
    const out = outgoing(topic, message);
    nc.publish(out.subject, out.data, { headers: dedupHeaders(message.id) });
  }

  function consume<T>(topic: string, opts: ConsumeOptions, handler: Handler<T>): Consumer {
    const permits = semaphore(opts.concurrency ?? 10);
    const owned = new Map<number, { revision: number; runner: PartitionRunner }>();
    const memberKey = `${opts.group}.m.${memberId}`;
    const partitionKey = (p: number) => `${opts.group}.p.${token(topic)}.${p}`;
    let stopping = false;
    let ticking: Promise<void> = Promise.resolve();

    async function liveMembers(): Promise<string[]> {
      const members: string[] = [];
      for await (const key of await kv.keys(`${opts.group}.m.*`)) members.push(key.split('.').pop()!);
      if (!members.includes(memberId)) members.push(memberId);
      return members;
    }

    async function release(p: number) {
      const entry = owned.get(p);
      if (!entry) return;
      owned.delete(p);
      await entry.runner.stop();
      await kv.delete(partitionKey(p)).catch(() => {});
    }

    async function tick() {
      if (stopping) return;
      await kv.put(memberKey, '1');
      const members = await liveMembers();
      await Promise.all(
        Array.from({ length: partitions }, async (_, p) => {
          const desired = rendezvous(members, `${topic}/${p}`);
          const entry = owned.get(p);
          if (entry && desired !== memberId) return release(p);
          if (entry) {
            try {
              entry.revision = await kv.update(partitionKey(p), memberId, entry.revision);
            } catch {
              // Our lease lapsed and someone else may hold it now: stop at once.
              owned.delete(p);
              await entry.runner.stop();
            }
            return;
          }
          if (desired !== memberId || stopping) return;
          try {
            const revision = await kv.create(partitionKey(p), memberId);
            owned.set(p, { revision, runner: runPartition(p) });
          } catch {
            // Still held by its previous owner; it lets go once it sees the new membership.
          }
        }),
      );
    }

    function runPartition(p: number): PartitionRunner {
      const abort = new AbortController();
      const chains = new Map<string, Promise<void>>();
      const durable = `${token(opts.group)}_${token(topic)}_${p}`;
      let stopIterator: (() => void) | undefined;

      async function process(msg: JsMsg, envelope: Envelope<T> | undefined) {
        if (!envelope) {
          msg.term('not JSON');
          return;
        }
        let attempt = msg.info.deliveryCount;
        const heartbeat = setInterval(() => msg.working(), Math.max(200, ackWaitMs / 3));
        try {
          while (true) {
            if (abort.signal.aborted) return msg.nak();
            await permits.acquire();
            let failure: unknown;
            let ok = false;
            try {
              await handler({
                // Read when asked: decoding the headers per message showed in worker profiles.
                get id() {
                  return messageId(msg);
                },
                key: envelope.key,
                topic,
                payload: envelope.payload,
                attempt,
                signal: abort.signal,
              });
              ok = true;
            } catch (error) {
              failure = error;
            } finally {
              permits.release();
            }
            if (ok) {
              // Not waiting for the server's confirmation (`ackAck`): a lost ack only brings the
              // message back after ack_wait (or to the next owner), and every handler must take a
              // redelivery anyway (at-least-once; notify's worker acks a settled delivery without
              // sending). The key's next message no longer waits a round trip, and the worker no
              // longer pays a request per message. `stop()` flushes, so a clean hand-over has
              // every ack at the server first.
              msg.ack();
              events.emit('outcome', topic, 'acked');
              return;
            }
            const step = nextStep(failure, attempt, opts.retryDelaysMs);
            if (step.kind === 'dead') {
              const dead = {
                messageId: messageId(msg),
                key: envelope.key,
                payload: envelope.payload,
                attempts: attempt,
                error: describeError(failure),
                deadAt: clock.now().toISOString(),
              };
              await js.publish(deadSubject(topic), JSON.stringify(dead));
              await msg.ackAck().catch(() => msg.ack());
              events.emit('outcome', topic, 'dead_lettered');
              return;
            }
            events.emit('outcome', topic, step.kind === 'defer' ? 'deferred' : 'retried');
            try {
              await clock.sleep(step.delayMs, abort.signal);
            } catch {
              return msg.nak(); // stopping: the next owner retries it
            }
            if (step.kind === 'retry') attempt++;
          }
        } finally {
          clearInterval(heartbeat);
        }
      }

      const consumerConfig = {
        durable_name: durable,
        filter_subject: subject(topic, p),
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: ackWaitMs * NANOS,
        max_ack_pending: 1000,
      };

      /**
       * Messages a previous owner pulled but never finished (it was SIGKILLed, or let go while they
       * sat in its pull buffer) would come back when their ack timers run out — in that order, not
       * the stream's: a message kept alive with `working()` runs out after its later neighbours,
       * and this owner would meanwhile take newer ones. Either breaks per-key order (found by
       * src/notify/crash.test.ts). With work-queue retention the stream holds exactly the
       * unacknowledged messages, so a fresh consumer delivers them again from the first, in
       * stream order, at once. (Their delivery count starts again at 1.)
       */
      async function takeOver() {
        const stream = streamName(topic);
        const info = await jsm.consumers.info(stream, durable).catch(() => undefined);
        if (info && info.num_ack_pending === 0) return;
        if (info) await jsm.consumers.delete(stream, durable).catch(() => {});
        // Another process may have added it in between; then it is fresh too.
        await jsm.consumers.add(stream, consumerConfig).catch(() => {});
      }

      const loop = (async () => {
        await ensureTopic(topic);
        await takeOver();
        const jsConsumer = await js.consumers.get(streamName(topic), durable);
        const messages = await jsConsumer.consume({ max_messages: 256 });
        stopIterator = () => messages.stop();
        if (abort.signal.aborted) messages.stop();
        for await (const msg of messages) {
          // Parsed once here (the key picks the chain) and handed on.
          let envelope: Envelope<T> | undefined;
          try {
            envelope = msg.json();
          } catch {
            envelope = undefined;
          }
          const envelopeKey = envelope?.key ?? '';
          const previous = chains.get(envelopeKey) ?? Promise.resolve();
          const next: Promise<void> = previous
            .then(() => process(msg, envelope))
            .catch((error) => {
              events.emit('error', error);
            })
            .then(() => {})
            .finally(() => {
              if (chains.get(envelopeKey) === next) chains.delete(envelopeKey);
            });
          chains.set(envelopeKey, next);
        }
      })().catch((error) => {
        if (!abort.signal.aborted) events.emit('error', error);
      });

      return {
        async stop() {
          abort.abort(new Error('partition released'));
          stopIterator?.();
          await loop;
          await Promise.allSettled([...chains.values()]);
          // The acks of the finished messages reach the server before the lease goes.
          if (!nc.isClosed()) await nc.flush().catch(() => {});
        },
      };
    }

    const reportError = (error: unknown) => {
      events.emit('error', error);
    };
    const timer = setInterval(() => {
      ticking = ticking.then(tick).catch(reportError);
    }, leaseMs / 3);
    ticking = tick().catch(reportError);

    const consumer: Consumer = {
      async stop() {
        stopping = true;
        clearInterval(timer);
        await ticking;
        await Promise.all([...owned.keys()].map(release));
        await kv.delete(memberKey).catch(() => {});
        consumers.delete(consumer);
      },
    };
    consumers.add(consumer);
    return consumer;
  }

  return {
    kind: 'jetstream',
    events,
    publish,
    publishUnconfirmed,
    consume,
    async deadLetters<T>(topic: string, limit = 100) {
      await ensureTopic(topic);
      const info = await jsm.streams.info(deadStreamName(topic));
      const letters: DeadLetter<T>[] = [];
      for (
        let seq = info.state.last_seq;
        seq >= info.state.first_seq && letters.length < limit && seq > 0;
        seq--
      ) {
        const stored = await jsm.streams.getMessage(deadStreamName(topic), { seq }).catch(() => null);
        if (!stored) continue;
        const dead = stored.json<{
          messageId: string;
          key: string;
          payload: T;
          attempts: number;
          error: string;
          deadAt: string;
        }>();
        letters.push({ deadLetterId: String(seq), topic, ...dead, deadAt: new Date(dead.deadAt) });
      }
      return letters;
    },
    async redrive(topic, deadLetterId) {
      if (!/^\d+$/.test(deadLetterId)) return false;
      await ensureTopic(topic);
      const seq = Number(deadLetterId);
      const stored = await jsm.streams.getMessage(deadStreamName(topic), { seq }).catch(() => null);
      if (!stored) return false;
      const dead = stored.json<{ messageId: string; key: string; payload: unknown }>();
      // A fresh msgID: the original id is still inside the dedup window and would be dropped.
      await js.publish(
        subject(topic, partitionOf(dead.key, partitions)),
        JSON.stringify({ key: dead.key, payload: dead.payload }),
        { msgID: `${dead.messageId}#redrive-${seq}`, headers: undefined },
      );
      return jsm.streams.deleteMessage(deadStreamName(topic), seq, false).catch(() => false);
    },
    async depth(topic) {
      await ensureTopic(topic);
      return (await jsm.streams.info(streamName(topic))).state.messages;
    },
    async ping() {
      if (nc.isClosed()) throw new Error('NATS connection closed');
      await nc.flush();
    },
    async close() {
      await Promise.all([...consumers].map((consumer) => consumer.stop()));
      if (!nc.isClosed() && !nc.isDraining()) await nc.drain();
    },
  };
}

interface Envelope<T> {
  key: string;
  payload: T;
}

const messageId = (msg: JsMsg) => msg.headers?.get('Nats-Msg-Id') ?? String(msg.seq);

/** The header JetStream drops a repeat by, inside the stream's duplicate window. */
function dedupHeaders(messageId: string) {
  const h = headers();
  h.set('Nats-Msg-Id', messageId);
  return h;
}

interface PartitionRunner {
  stop(): Promise<void>;
}

function rendezvous(members: string[], item: string): string {
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

function semaphore(size: number) {
  let free = size;
  const waiting: (() => void)[] = [];
  return {
    acquire(): Promise<void> {
      if (free > 0) {
        free--;
        return Promise.resolve();
      }
      return new Promise((resolve) => waiting.push(resolve));
    },
    release() {
      const next = waiting.shift();
      if (next) next();
      else free++;
    },
  };
}
