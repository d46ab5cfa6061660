import {
  AckPolicy,
  type ConsumerConfig,
  DeliverPolicy,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import type { LeaseGuard, PartitionRunner } from './lease.ts';
import type { Envelope, MessageProcessor } from './processor.ts';

const NANOS = 1_000_000;

export interface PartitionRunnerOptions<T> {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  /** The topic's work-queue stream, and the partition's subject in it. */
  stream: string;
  subject: string;
  /** The durable consumer's name: one per group, topic and partition. */
  durable: string;
  ackWaitMs: number;
  /** Resolves once the topic's streams exist. */
  ready(): Promise<void>;
  /** The partition's lease: no message starts while it may have lapsed. */
  lease: LeaseGuard;
  process: MessageProcessor<T>;
  onError(error: unknown): void;
}

/**
 * Consumes one leased partition through its durable consumer, running each key's messages one
 * after another (in stream order) while different keys go on in parallel.
 */
export function runPartition<T>(options: PartitionRunnerOptions<T>): PartitionRunner {
  const abort = new AbortController();
  const chains = keyedChains(options.onError);
  let stopIterator: (() => void) | undefined;
  // Messages pulled but not started (behind their key's earlier ones, or waiting for the lease)
  // are kept alive like those in progress: past the ack wait the server would deliver them again
  // into the same chains, and a backlog of one key would multiply itself. Not while the lease
  // may have lapsed: then another member may own the partition, and they are its to have.
  const waiting = new Set<JsMsg>();
  const keepAlive = setInterval(
    () => {
      if (!options.lease.valid()) return;
      for (const msg of waiting) msg.working();
    },
    Math.max(200, options.ackWaitMs / 3),
  );

  const loop = (async () => {
    await options.ready();
    await takeOver(options);
    const consumer = await options.js.consumers.get(options.stream, options.durable);
    const messages = await consumer.consume({ max_messages: 256 });
    stopIterator = () => messages.stop();
    if (abort.signal.aborted) messages.stop();
    for await (const msg of messages) {
      // Parsed once here (the key picks the chain) and handed on.
      const envelope = parse<T>(msg);
      waiting.add(msg);
      chains.run(envelope?.key ?? '', async () => {
        try {
          // Another member may run the partition once the lease lapsed: wait for the renewal (or
          // the stop, and the message is handed back).
          await options.lease.held(abort.signal);
        } finally {
          waiting.delete(msg);
        }
        await options.process(msg, envelope, abort.signal);
      });
    }
  })().catch((error) => {
    if (!abort.signal.aborted) options.onError(error);
  });

  return {
    async stop() {
      abort.abort(new Error('partition released'));
      stopIterator?.();
      await loop;
      await chains.settled();
      clearInterval(keepAlive);
      // The acks of the finished messages reach the server before the lease goes.
      if (!options.nc.isClosed()) await options.nc.flush().catch(() => {});
    },
  };
}

function parse<T>(msg: JsMsg): Envelope<T> | undefined {
  try {
    return msg.json<Envelope<T>>();
  } catch {
    return undefined;
  }
}

/**
 * Messages a previous owner pulled but never finished (it was SIGKILLed, or let go while they
 * sat in its pull buffer) would come back when their ack timers run out — in that order, not
 * the stream's: a message kept alive with `working()` runs out after its later neighbours,
 * and this owner would meanwhile take newer ones. Either breaks per-key order (found by
 * src/notify/crash.test.ts). With work-queue retention the stream holds exactly the
 * unacknowledged messages, so a fresh consumer delivers them again from the first, in
 * stream order, at once. (Their delivery count starts again at 1.)
 */
async function takeOver<T>({ jsm, stream, durable, subject, ackWaitMs }: PartitionRunnerOptions<T>) {
  const info = await jsm.consumers.info(stream, durable).catch(() => undefined);
  if (info && info.num_ack_pending === 0) return;
  if (info) await jsm.consumers.delete(stream, durable).catch(() => {});
  const config: Partial<ConsumerConfig> = {
    durable_name: durable,
    filter_subject: subject,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: ackWaitMs * NANOS,
    max_ack_pending: 1000,
  };
  // Another process may have added it in between; then it is fresh too.
  await jsm.consumers.add(stream, config).catch(() => {});
}

/** Tasks of one key run one after another, in the order given; tasks of different keys at once. */
export function keyedChains(onError: (error: unknown) => void) {
  const chains = new Map<string, Promise<void>>();
  return {
    run(key: string, task: () => Promise<void>) {
      const previous = chains.get(key) ?? Promise.resolve();
      const next: Promise<void> = previous
        .then(task)
        .catch(onError)
        .finally(() => {
          if (chains.get(key) === next) chains.delete(key);
        });
      chains.set(key, next);
    },
    /** Resolves when every task given so far has finished. */
    async settled() {
      await Promise.allSettled([...chains.values()]);
    },
  };
}
