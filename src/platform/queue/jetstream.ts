import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { type JetStreamClient, type JetStreamManager, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { type KV, Kvm } from '@nats-io/kv';
import { headers, type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import type { Clock } from '../clock.ts';
import {
  type ConsumeOptions,
  type Consumer,
  DEAD_LETTER_KEEP_MS,
  describeError,
  type Handler,
  type Queue,
  type QueueMessage,
} from './index.ts';
import { holdLeases, token } from './jetstream/lease.ts';
import { runPartition } from './jetstream/partition-runner.ts';
import { createMessageProcessor, type DeadLetterRecord } from './jetstream/processor.ts';
import { topicStreams } from './jetstream/streams.ts';

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
 * retry stays unacknowledged (kept alive with `working()`), so it holds back its key only; so
 * do the messages pulled behind it, which a redelivery would otherwise run twice and count as
 * spent attempts.
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
  const streams = topicStreams(jsm, {
    namespace: ns,
    dedupWindowMs,
    deadLetterMaxAgeMs: options.deadLetterMaxAgeMs ?? DEAD_LETTER_KEEP_MS,
  });
  const { subject, deadSubject } = streams;
  const ensureTopic = streams.ensure;

  /** What a message goes out as, confirmed or not: its partition's subject and its envelope. */
  const outgoing = <T>(topic: string, message: QueueMessage<T>) => ({
    subject: subject(topic, partitionOf(message.key, partitions)),
    data: JSON.stringify({ key: message.key, payload: message.payload }),
  });

  async function publish<T>(topic: string, message: QueueMessage<T>) {
    await ensureTopic(topic);
    const out = outgoing(topic, message);
    try {
      const ack = await js.publish(
        out.subject,
        out.data,
        message.traceContext
          ? { msgID: message.id, headers: contextHeaders(message.traceContext) }
          : { msgID: message.id },
      );
      return { duplicate: ack.duplicate };
    } catch (error) {
      // nats.js names a missing stream "jetstream is not enabled" (no responders): say what failed.
      throw new Error(`JetStream publish failed: ${describeError(error)}`, { cause: error });
    }
  }

  async function publishUnconfirmed<T>(topic: string, message: QueueMessage<T>) {
    await ensureTopic(topic);
    const out = outgoing(topic, message);
    const h = dedupHeaders(message.id);
    if (message.traceContext) contextHeaders(message.traceContext, h);
    nc.publish(out.subject, out.data, { headers: h });
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
      start: (p, lease) =>
        runPartition({
          lease,
          nc,
          js,
          jsm,
          stream: streams.stream(topic),
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
      return streams.deadLetters<T>(topic, limit);
    },
    async redrive(topic, deadLetterId) {
      if (!/^\d+$/.test(deadLetterId)) return false;
      await ensureTopic(topic);
      const seq = Number(deadLetterId);
      const stored = await jsm.streams.getMessage(streams.deadStream(topic), { seq }).catch(() => null);
      if (!stored) return false;
      const dead = stored.json<DeadLetterRecord<unknown>>();
      // A fresh msgID: the original id is still inside the dedup window and would be dropped.
      await js.publish(
        subject(topic, partitionOf(dead.key, partitions)),
        JSON.stringify({ key: dead.key, payload: dead.payload }),
        { msgID: `${dead.messageId}#redrive-${seq}`, headers: undefined },
      );
      return jsm.streams.deleteMessage(streams.deadStream(topic), seq, false).catch(() => false);
    },
    async depth(topic) {
      await ensureTopic(topic);
      return (await jsm.streams.info(streams.stream(topic))).state.messages;
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

/** The trace context (`traceparent`, `tracestate`) as NATS headers, added to `h` when given. */
function contextHeaders(traceContext: Record<string, string>, h = headers()) {
  for (const [name, value] of Object.entries(traceContext)) h.set(name, value);
  return h;
}

/** The header JetStream drops a repeat by, inside the stream's duplicate window. */
function dedupHeaders(messageId: string) {
  const h = headers();
  h.set('Nats-Msg-Id', messageId);
  return h;
}
