import type { EventEmitter } from 'node:events';

/**
 * A durable work queue. Each topic is consumed by one group of workers; every message is
 * handled by one member of the group at a time. Messages with the same `key` are handled in
 * publish order, one after the other, while other keys go on in parallel.
 */
export interface QueueMessage<T = unknown> {
  /** Deduplication id: a second publish with the same id inside the dedup window is dropped. */
  id: string;
  /** Ordering key (e.g. a user id). */
  key: string;
  payload: T;
  /**
   * W3C trace context (`traceparent`, `tracestate`) of the span that published it, set by the
   * tracing wrapper (observability/tracing-adapters.ts) when tracing is on, absent otherwise. It
   * travels in the NATS headers or the row's `trace_context` and comes back on the delivery.
   */
  traceContext?: Record<string, string>;
}

export interface Delivery<T = unknown> extends QueueMessage<T> {
  topic: string;
  /** 1 for the first attempt. */
  attempt: number;
  /** Aborted when the consumer is being stopped; long handlers may give up early. */
  signal: AbortSignal;
}

export interface ConsumeOptions {
  /** Worker group name; members of one group share the topic's work. */
  group: string;
  /** Delays before attempts 2..N; the message gets `retryDelaysMs.length + 1` attempts in all. */
  retryDelaysMs: number[];
  /** Messages handled at once by this member (always at most one per key). */
  concurrency?: number;
}

export type Handler<T> = (delivery: Delivery<T>) => Promise<void>;

export interface Consumer {
  /** Stops taking messages and waits for the ones in progress; unfinished work goes back to the queue. */
  stop(): Promise<void>;
}

export interface DeadLetter<T = unknown> {
  /** Id of the dead letter itself (what `redrive` takes). */
  deadLetterId: string;
  topic: string;
  messageId: string;
  key: string;
  payload: T;
  attempts: number;
  error: string;
  deadAt: Date;
}

export type Outcome = 'acked' | 'retried' | 'deferred' | 'dead_lettered';

/** How long dead letters are kept for an operator to look at and redrive (both adapters). */
export const DEAD_LETTER_KEEP_MS = 14 * 24 * 3600_000;

export interface Queue {
  readonly kind: 'postgres' | 'jetstream';
  /** Resolves when the message is durably stored; `duplicate` when its id was seen inside the window. */
  publish<T>(topic: string, message: QueueMessage<T>): Promise<{ duplicate: boolean }>;
  /**
   * Hands the message over without waiting for the queue to confirm it stored it (JetStream asks
   * for no ack, so the server sends none: half the messages per publish). Resolves once the message
   * is on its way; a message lost after that is not reported. Only for callers that find lost
   * messages themselves, like notify's outbox sweep. The PostgreSQL queue stores it as `publish` does.
   */
  publishUnconfirmed<T>(topic: string, message: QueueMessage<T>): Promise<void>;
  consume<T>(topic: string, options: ConsumeOptions, handler: Handler<T>): Consumer;
  deadLetters<T>(topic: string, limit?: number): Promise<DeadLetter<T>[]>;
  /** Puts a dead letter back on its topic with a fresh set of attempts; false when unknown. */
  redrive(topic: string, deadLetterId: string): Promise<boolean>;
  /** Messages waiting or in progress. */
  depth(topic: string): Promise<number>;
  /** Emits `outcome` (topic, Outcome) for metrics. */
  readonly events: EventEmitter;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Thrown by a handler when retrying cannot help (bad address, rejected content): dead-letter at once. */
export class PermanentError extends Error {
  override name = 'PermanentError';
}

/**
 * Thrown by a handler that could not even try (e.g. an open circuit breaker): the message
 * comes back after `delayMs` without spending an attempt.
 */
export class RetryLater extends Error {
  override name = 'RetryLater';
  readonly delayMs: number;
  constructor(delayMs: number, message = 'retry later') {
    super(message);
    this.delayMs = delayMs;
  }
}

export function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`.slice(0, 1000);
  return String(error).slice(0, 1000);
}

/** What to do after a handler threw, shared by both adapters so they decide alike. */
export function nextStep(
  error: unknown,
  attempt: number,
  retryDelaysMs: number[],
): { kind: 'defer'; delayMs: number } | { kind: 'retry'; delayMs: number } | { kind: 'dead' } {
  if (error instanceof RetryLater) return { kind: 'defer', delayMs: error.delayMs };
  if (error instanceof PermanentError || attempt > retryDelaysMs.length) return { kind: 'dead' };
  return { kind: 'retry', delayMs: retryDelaysMs[attempt - 1] };
}
