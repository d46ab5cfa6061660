import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { TraceSampler, Tracing, TracingOptions, TracingSettings } from './tracing.ts';
import { queryLog, subscribeRedis, tracedQueue } from './tracing-adapters.ts';
import { registerHttpSpans } from './tracing-http.ts';

/**
 * The SDK, loaded only when `TRACING=otlp` (tracing.ts): a tracer provider with a batch span
 * processor in front of the OTLP/HTTP (protobuf) exporter, the AsyncLocalStorage context manager
 * (a request's span is the parent of what its handler does, across awaits) and the W3C
 * `traceparent` propagator, registered as OpenTelemetry's globals so any library using
 * @opentelemetry/api joins the same traces. `shutdown` exports what is left and takes the
 * globals back (so a test process can start tracing again).
 *
 * No auto-instrumentation (no `--import` hook): the spans are made where our own ports are (HTTP
 * hooks, Kysely's `log`, ioredis's diagnostics channel, the queue), see tracing-adapters.ts.
 */
export function startTracingSdk(
  settings: Extract<TracingSettings, { exporter: 'otlp' }>,
  options: TracingOptions,
): Tracing {
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: settings.serviceName,
      [ATTR_SERVICE_VERSION]: options.version,
      // Not in the semantic conventions: which part this process plays (api, worker, scheduler, all).
      'app.role': options.role,
    }),
    sampler: samplerOf(settings.sampler),
    spanProcessors: [
      new BatchSpanProcessor({ exporter: options.exporter ?? new OTLPTraceExporter({ url: settings.url }) }),
    ],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  const tracer = trace.getTracer('four-services', options.version);
  const unsubscribeRedis = subscribeRedis(tracer);

  return {
    queryLog: queryLog(tracer),
    queue: (queue) => tracedQueue(queue, tracer),
    registerHttp: (app) => registerHttpSpans(app, tracer),
    logFields(): Record<string, string> {
      const span = trace.getActiveSpan();
      if (!span) return {};
      const { traceId, spanId } = span.spanContext();
      return { trace_id: traceId, span_id: spanId };
    },
    forceFlush: () => provider.forceFlush(),
    async shutdown() {
      unsubscribeRedis();
      await provider.shutdown().catch(() => {});
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

function samplerOf(settings: TraceSampler): Sampler {
  const root =
    settings.root === 'always_on'
      ? new AlwaysOnSampler()
      : settings.root === 'always_off'
        ? new AlwaysOffSampler()
        : new TraceIdRatioBasedSampler(settings.ratio);
  return settings.parentBased ? new ParentBasedSampler({ root }) : root;
}
