import { tracingChannel } from 'node:diagnostics_channel';
import {
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import {
  ATTR_DB_NAMESPACE,
  ATTR_DB_OPERATION_NAME,
  ATTR_DB_QUERY_TEXT,
  ATTR_DB_SYSTEM_NAME,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
} from '@opentelemetry/semantic-conventions';
import type { CommandTraceContext } from 'ioredis';
import type { LogEvent } from 'kysely';
import type { ConsumeOptions, Handler, Queue, QueueMessage } from '../queue/index.ts';

/**
 * Spans where our own ports are, rather than OpenTelemetry's auto-instrumentations of pg and
 * ioredis: those patch the modules as they load, which under ESM needs an `--import` loader hook
 * registered before anything else (so installed whether tracing is on or not, unless the
 * command line changes with the setting), and they would see PostgreSQL only, not PGlite.
 * Here one place covers each port for both its adapters:
 * - SQL: Kysely's public `log` option (every statement of every connection, transactions
 *   included; PostgreSQL and PGlite), a client span per statement ended as Kysely reports it.
 * - Redis: ioredis's own diagnostics channel `ioredis:command` (a TracingChannel, free while
 *   nobody subscribes), a client span per command.
 * - The queue (JetStream or the PostgreSQL table): a producer span per publish whose context
 *   travels with the message (NATS headers, or the row's `trace_context`), and a consumer span
 *   per delivery attempt that is its child, so a delivery joins the trace of the request that
 *   published it.
 * SQL and Redis spans are made only inside a traced operation: a statement of a background
 * poll (the queue's claim loop, the outbox sweep) would otherwise be a trace of its own, on
 * every poll.
 */

const MAX_QUERY_TEXT = 2048;

/** Kysely's `log`: reports each statement once it has finished, with its duration. */
export function queryLog(tracer: Tracer) {
  return (event: LogEvent): void => {
    if (!trace.getSpan(context.active())) return;
    const now = performance.timeOrigin + performance.now();
    const text = event.query.sql;
    const operation = /^\s*([a-z]+)/i.exec(text)?.[1]?.toUpperCase();
    const span = tracer.startSpan(operation ?? 'postgresql', {
      kind: SpanKind.CLIENT,
      startTime: now - event.queryDurationMillis,
      attributes: {
        [ATTR_DB_SYSTEM_NAME]: 'postgresql',
        ...(operation && { [ATTR_DB_OPERATION_NAME]: operation }),
        // Statement texts only: values travel as parameters and are never recorded.
        [ATTR_DB_QUERY_TEXT]: text.length > MAX_QUERY_TEXT ? `${text.slice(0, MAX_QUERY_TEXT)}…` : text,
      },
    });
    if (event.level === 'error') failed(span, event.error);
    span.end(now);
  };
}

/** Subscribes to ioredis's command channel; returns the unsubscribe. */
export function subscribeRedis(tracer: Tracer): () => void {
  const spans = new WeakMap<object, Span>();
  const finish = (message: CommandTraceContext) => {
    spans.get(message)?.end();
    spans.delete(message);
  };
  const channel = tracingChannel<unknown, CommandTraceContext>('ioredis:command');
  const subscribers = {
    start(message: CommandTraceContext) {
      if (!trace.getSpan(context.active())) return;
      spans.set(
        message,
        tracer.startSpan(message.command.toUpperCase(), {
          kind: SpanKind.CLIENT,
          attributes: {
            [ATTR_DB_SYSTEM_NAME]: 'redis',
            [ATTR_DB_OPERATION_NAME]: message.command.toUpperCase(),
            [ATTR_DB_NAMESPACE]: String(message.database),
            [ATTR_SERVER_ADDRESS]: message.serverAddress,
            ...(message.serverPort !== undefined && { [ATTR_SERVER_PORT]: message.serverPort }),
          },
        }),
      );
    },
    // A command that throws at once ends here; one that settles later, at `asyncEnd`.
    end(message: CommandTraceContext & { error?: unknown }) {
      if ('error' in message) finish(message);
    },
    asyncStart() {},
    asyncEnd: finish,
    error(message: CommandTraceContext & { error?: unknown }) {
      const span = spans.get(message);
      if (span) failed(span, message.error);
    },
  };
  channel.subscribe(subscribers);
  return () => channel.unsubscribe(subscribers);
}

/** The queue with a span per publish and per delivery attempt, the publisher's context in each message. */
export function tracedQueue(queue: Queue, tracer: Tracer): Queue {
  const system = queue.kind === 'jetstream' ? 'nats' : 'postgresql_table';
  const attributes = (topic: string, operation: 'send' | 'process', id: string) => ({
    'messaging.system': system,
    'messaging.destination.name': topic,
    'messaging.operation.type': operation,
    'messaging.message.id': id,
  });

  function published<R>(topic: string, message: QueueMessage, send: (message: QueueMessage) => Promise<R>) {
    return tracer.startActiveSpan(
      `send ${topic}`,
      { kind: SpanKind.PRODUCER, attributes: attributes(topic, 'send', message.id) },
      async (span) => {
        const traceContext: Record<string, string> = {};
        propagation.inject(context.active(), traceContext);
        try {
          return await send({ ...message, traceContext });
        } catch (error) {
          failed(span, error);
          throw error;
        } finally {
          span.end();
        }
      },
    );
  }

  return {
    kind: queue.kind,
    events: queue.events,
    publish: <T>(topic: string, message: QueueMessage<T>) =>
      published(topic, message, (traced) => queue.publish(topic, traced)),
    publishUnconfirmed: <T>(topic: string, message: QueueMessage<T>) =>
      published(topic, message, (traced) => queue.publishUnconfirmed(topic, traced)),
    consume: <T>(topic: string, options: ConsumeOptions, handler: Handler<T>) =>
      queue.consume<T>(topic, options, (delivery) => {
        const carried = delivery.traceContext;
        const parent = carried ? propagation.extract(ROOT_CONTEXT, carried) : ROOT_CONTEXT;
        return tracer.startActiveSpan(
          `process ${topic}`,
          {
            kind: SpanKind.CONSUMER,
            attributes: {
              ...attributes(topic, 'process', delivery.id),
              'messaging.consumer.group.name': options.group,
              'app.queue.attempt': delivery.attempt,
            },
          },
          parent,
          async (span) => {
            try {
              await handler(delivery);
            } catch (error) {
              failed(span, error);
              throw error;
            } finally {
              span.end();
            }
          },
        );
      }),
    deadLetters: (topic, limit) => queue.deadLetters(topic, limit),
    redrive: (topic, deadLetterId) => queue.redrive(topic, deadLetterId),
    depth: (topic) => queue.depth(topic),
    ping: () => queue.ping(),
    close: () => queue.close(),
  };
}

function failed(span: Span, error: unknown) {
  if (error instanceof Error) span.recordException(error);
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : String(error),
  });
}
