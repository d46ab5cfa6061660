import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import {
  type JetStreamClient,
  type JetStreamManager,
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
  type Queue,
  type QueueMessage,
} from './index.ts';
import { holdLeases, token } from './jetstream/lease.ts';
import { runPartition } from './jetstream/partition-runner.ts';
import { createMessageProcessor, type DeadLetterRecord } from './jetstream/processor.ts';

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
 * The parts: `jetstream/lease.ts` (which member runs which partition), `jetstream/partition-runner.ts`
 * (one partition's consumer and per-key chains), `jetstream/processor.ts` (one message's
 * attempts, retries and dead letter).
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
    const reportError = (error: unknown) => {
      events.emit('error', error);
    };
    const process = createMessageProcessor<T>({
      topic,
      handler,
      concurrency: opts.concurrency ?? 10,
      retryDelaysMs: opts.retryDelaysMs,
      ackWaitMs,
      clock,
      events,
      publishDeadLetter: (record) => js.publish(deadSubject(topic), JSON.stringify(record)),
    });
    const leases = holdLeases({
      store: kv,
      memberId,
      group: opts.group,
      topic,
      partitions,
      leaseMs,
      onError: reportError,
      start: (p) =>
        runPartition({
          nc,
          js,
          jsm,
          stream: streamName(topic),
          subject: subject(topic, p),
          durable: `${token(opts.group)}_${token(topic)}_${p}`,
          ackWaitMs,
          ready: () => ensureTopic(topic),
          process,
          onError: reportError,
        }),
    });
    const consumer: Consumer = {
      async stop() {
        await leases.stop();
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
        const dead = stored.json<DeadLetterRecord<T>>();
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
      const dead = stored.json<DeadLetterRecord<unknown>>();
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

/** The header JetStream drops a repeat by, inside the stream's duplicate window. */
function dedupHeaders(messageId: string) {
  const h = headers();
  h.set('Nats-Msg-Id', messageId);
  return h;
}
