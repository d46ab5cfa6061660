import type { EventEmitter } from 'node:events';
import type { Clock } from '../../clock.ts';
import { describeError, type Handler, nextStep } from '../index.ts';

/** What a message carries on the stream: its ordering key and the caller's payload. */
export interface Envelope<T> {
  key: string;
  payload: T;
}

/** The part of a JetStream message (`JsMsg`) that processing uses. */
export interface InFlightMessage {
  readonly info: { readonly deliveryCount: number };
  readonly headers?: { get(name: string): string };
  readonly seq: number;
  ack(): void;
  nak(): void;
  term(reason?: string): void;
  working(): void;
  ackAck(): Promise<boolean>;
}

/** A dead letter as it is stored on the topic's dead-letter stream. */
export interface DeadLetterRecord<T> {
  messageId: string;
  key: string;
  payload: T;
  attempts: number;
  error: string;
  deadAt: string;
}

export interface ProcessorOptions<T> {
  topic: string;
  handler: Handler<T>;
  /** Messages handled at once, over all of the consumer's partitions. */
  concurrency: number;
  retryDelaysMs: number[];
  /** The stream's ack wait: a message is kept alive well within it while it is in progress. */
  ackWaitMs: number;
  clock: Clock;
  /** Receives `outcome` (topic, Outcome). */
  events: EventEmitter;
  publishDeadLetter(record: DeadLetterRecord<T>): Promise<unknown>;
}

/** Processes one message: `signal` aborts when its partition is being released. */
export type MessageProcessor<T> = (
  msg: InFlightMessage,
  envelope: Envelope<T> | undefined,
  signal: AbortSignal,
) => Promise<void>;

export const messageId = (msg: InFlightMessage) => msg.headers?.get('Nats-Msg-Id') ?? String(msg.seq);

/** The W3C trace context the publisher put in the headers (tracing on), else undefined. */
export function traceContextOf(msg: InFlightMessage): Record<string, string> | undefined {
  const traceparent = msg.headers?.get('traceparent');
  if (!traceparent) return undefined;
  const tracestate = msg.headers?.get('tracestate');
  return tracestate ? { traceparent, tracestate } : { traceparent };
}

/**
 * Runs a message's handler until it is settled: acked, dead-lettered, or handed back (`nak`)
 * when its partition is released. A retry waits here, unacknowledged and kept alive with
 * `working()`, so it holds back its own key only.
 */
export function createMessageProcessor<T>(options: ProcessorOptions<T>): MessageProcessor<T> {
  const { topic, retryDelaysMs, clock, events } = options;
  const permits = semaphore(options.concurrency);

  async function settle(msg: InFlightMessage, envelope: Envelope<T>, signal: AbortSignal) {
    let attemptNo = msg.info.deliveryCount;
    while (true) {
      if (signal.aborted) return msg.nak();
      const failure = await attempt(options, permits, { msg, envelope, attemptNo, signal });
      if (!failure) {
        // Not waiting for the server's confirmation (`ackAck`): a lost ack only brings the
        // message back after ack_wait (or to the next owner), and every handler must take a
        // redelivery anyway (at-least-once; notify's worker acks a settled delivery without
        // sending). The key's next message does not wait a round trip, and the worker does not
        // pay a request per message. The partition runner flushes on stop, so a clean hand-over
        // has every ack at the server first.
        msg.ack();
        events.emit('outcome', topic, 'acked');
        return;
      }
      const step = nextStep(failure.error, attemptNo, retryDelaysMs);
      if (step.kind === 'dead') return deadLetter(options, msg, envelope, attemptNo, failure.error);
      events.emit('outcome', topic, step.kind === 'defer' ? 'deferred' : 'retried');
      try {
        await clock.sleep(step.delayMs, signal);
      } catch {
        return msg.nak(); // released: the next owner retries it
      }
      if (step.kind === 'retry') attemptNo++;
    }
  }

  return async (msg, envelope, signal) => {
    if (!envelope) {
      msg.term('not JSON');
      return;
    }
    const heartbeat = setInterval(() => msg.working(), Math.max(200, options.ackWaitMs / 3));
    try {
      await settle(msg, envelope, signal);
    } finally {
      clearInterval(heartbeat);
    }
  };
}

interface Attempt<T> {
  msg: InFlightMessage;
  envelope: Envelope<T>;
  attemptNo: number;
  signal: AbortSignal;
}

/** Runs the handler once, holding a permit: undefined when it succeeded, else what it threw. */
async function attempt<T>(
  { handler, topic }: ProcessorOptions<T>,
  permits: ReturnType<typeof semaphore>,
  { msg, envelope, attemptNo, signal }: Attempt<T>,
): Promise<{ error: unknown } | undefined> {
  await permits.acquire();
  try {
    await handler({
      // Read when asked: decoding the headers per message showed in worker profiles.
      get id() {
        return messageId(msg);
      },
      get traceContext() {
        return traceContextOf(msg);
      },
      key: envelope.key,
      topic,
      payload: envelope.payload,
      attempt: attemptNo,
      signal,
    });
    return undefined;
  } catch (error) {
    return { error };
  } finally {
    permits.release();
  }
}

async function deadLetter<T>(
  options: ProcessorOptions<T>,
  msg: InFlightMessage,
  envelope: Envelope<T>,
  attempts: number,
  failure: unknown,
) {
  await options.publishDeadLetter({
    messageId: messageId(msg),
    key: envelope.key,
    payload: envelope.payload,
    attempts,
    error: describeError(failure),
    deadAt: options.clock.now().toISOString(),
  });
  await msg.ackAck().catch(() => msg.ack());
  options.events.emit('outcome', options.topic, 'dead_lettered');
}

/** At most `size` holders at once; the others wait in arrival order. */
export function semaphore(size: number) {
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
