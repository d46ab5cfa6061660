import type { SpanExporter } from '@opentelemetry/sdk-trace';
import type { FastifyInstance } from 'fastify';
import type { LogEvent } from 'kysely';
import { ConfigError } from '../config-error.ts';
import type { Env } from '../env.ts';
import type { Queue } from '../queue/index.ts';

/**
 * OpenTelemetry tracing, off unless `TRACING=otlp`. This file is all that is loaded when it is off:
 * it imports nothing from OpenTelemetry (the imports above are types, erased), so a process
 * without tracing loads no SDK, subscribes to no diagnostics channel and adds no hook; the
 * SDK and the span-making parts (tracing-sdk.ts, tracing-http.ts, tracing-adapters.ts) are
 * imported by `startTracing` only when tracing is on.
 */
export type TracingSettings =
  | { exporter: 'off' }
  | {
      exporter: 'otlp';
      /** Where spans are sent (OTLP over HTTP, protobuf). */
      url: string;
      /** `service.name` of every span (`OTEL_SERVICE_NAME`, else `four-services-<role>`). */
      serviceName: string;
      /** Which traces are kept (`OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG`). */
      sampler: TraceSampler;
    };

/**
 * OpenTelemetry's standard samplers: a root span is kept always, never, or for a share of trace
 * ids (`ratio`); the `parentbased_` ones follow an incoming `traceparent`'s decision instead, so a
 * trace that started elsewhere is kept or dropped whole.
 */
export interface TraceSampler {
  root: 'always_on' | 'always_off' | 'traceidratio';
  parentBased: boolean;
  /** For `traceidratio`: the share of root spans kept, 0 to 1. */
  ratio: number;
}

const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

/**
 * `OTEL_TRACES_SAMPLER` (default `parentbased_always_on`, the specification's) and, for the ratio
 * ones, `OTEL_TRACES_SAMPLER_ARG` (0 to 1, default 1). A busy deployment keeps a share of its
 * traces, e.g. `parentbased_traceidratio` with `0.05`.
 */
function readSampler(raw: (name: string) => string | undefined): TraceSampler {
  const name = raw('OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on';
  if (!(SAMPLERS as readonly string[]).includes(name)) {
    throw new ConfigError(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join('|')}, got "${name}"`);
  }
  const parentBased = name.startsWith('parentbased_');
  const root = name.replace('parentbased_', '') as TraceSampler['root'];
  const arg = raw('OTEL_TRACES_SAMPLER_ARG');
  const ratio = arg === undefined ? 1 : Number(arg);
  if (root === 'traceidratio' && !(arg === undefined || (/^[\d.]+$/.test(arg) && ratio >= 0 && ratio <= 1))) {
    throw new ConfigError(`OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1, got "${arg}"`);
  }
  return { root, parentBased, ratio };
}

const DEFAULT_TRACES_URL = 'http://localhost:4318/v1/traces';

/**
 * `TRACING` (off | otlp) and the standard OTel variables for the collector's address:
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the full URL) or `OTEL_EXPORTER_OTLP_ENDPOINT` (its base:
 * `/v1/traces` is appended), default http://localhost:4318/v1/traces. An endpoint set while
 * `TRACING` is not says which was meant instead of exporting nothing in silence.
 */
export function readTracingSettings(env: Env, role: string): TracingSettings {
  const raw = (name: string) => env[name]?.trim() || undefined;
  const mode = raw('TRACING');
  const endpointVar = raw('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT')
    ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'
    : raw('OTEL_EXPORTER_OTLP_ENDPOINT')
      ? 'OTEL_EXPORTER_OTLP_ENDPOINT'
      : undefined;
  if (mode === undefined && endpointVar) {
    throw new ConfigError(
      `${endpointVar} is set but TRACING is not: set TRACING=otlp to export traces there, or TRACING=off`,
    );
  }
  if (mode === undefined || mode === 'off') return { exporter: 'off' };
  if (mode !== 'otlp') throw new ConfigError(`TRACING must be one of off|otlp, got "${mode}"`);
  let url = DEFAULT_TRACES_URL;
  if (endpointVar) {
    const given = raw(endpointVar) as string;
    let parsed: URL | undefined;
    try {
      parsed = new URL(given);
    } catch {}
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol)) {
      throw new ConfigError(`${endpointVar} must be an http(s) URL of an OTLP collector, got "${given}"`);
    }
    url =
      endpointVar === 'OTEL_EXPORTER_OTLP_ENDPOINT'
        ? `${parsed.href.replace(/\/$/, '')}/v1/traces`
        : parsed.href;
  }
  return {
    exporter: 'otlp',
    url,
    serviceName: raw('OTEL_SERVICE_NAME') ?? `four-services-${role}`,
    sampler: readSampler(raw),
  };
}

/** What the adapters and the app use while tracing is on (tracing-sdk.ts makes it). */
export interface Tracing {
  /** Kysely's `log` option: a client span per statement, PostgreSQL and PGlite alike. */
  queryLog(event: LogEvent): void;
  /** The queue with a producer span per publish and a consumer span per delivery, context in the message. */
  queue(queue: Queue): Queue;
  /** A server span per request, named by its route pattern, continuing an incoming `traceparent`. */
  registerHttp(app: FastifyInstance): void;
  /** pino's `mixin`: `trace_id` and `span_id` of the active span on every log line written inside one. */
  logFields(): Record<string, string>;
  /** Exports what has ended so far (tests). */
  forceFlush(): Promise<void>;
  /** Exports what is left and takes the SDK's global registrations back. */
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  /** Replaces the OTLP exporter (tests: an InMemorySpanExporter). */
  exporter?: SpanExporter;
  /** Resource attributes: `service.version` and the process's role. */
  version: string;
  role: string;
}

/** Undefined when tracing is off, without importing anything. */
export async function startTracing(
  settings: TracingSettings,
  options: TracingOptions,
): Promise<Tracing | undefined> {
  if (settings.exporter === 'off') return undefined;
  const { startTracingSdk } = await import('./tracing-sdk.ts');
  return startTracingSdk(settings, options);
}
