import CircuitBreaker from 'opossum';
import { Counter, Gauge, Histogram } from 'prom-client';
import type { Metrics } from '../../platform/observability/metrics.ts';
import type { Channel } from '../api.ts';
import {
  type ChannelSender,
  type Provider,
  ProviderError,
  ProviderUnavailable,
  type SendResult,
} from '../ports.ts';
import type { BreakerSettings } from '../settings.ts';

type State = 'closed' | 'open' | 'half_open';
const STATE_VALUE: Record<State, number> = { closed: 0, half_open: 1, open: 2 };

/** One metric per registry, shared by every sender on it (tests build several). */
function shared<T>(metrics: Metrics, name: string, create: (name: string) => T): T {
  return (metrics.registry.getSingleMetric(name) as T | undefined) ?? create(name);
}

function providerMetrics(metrics: Metrics) {
  const registers = [metrics.registry];
  return {
    state: shared(
      metrics,
      'notify_circuit_state',
      (name) =>
        new Gauge({
          name,
          help: 'Circuit breaker state per notification provider: 0 closed, 1 half-open, 2 open',
          labelNames: ['provider', 'channel'] as const,
          registers,
        }),
    ),
    calls: shared(
      metrics,
      'notify_provider_calls_total',
      (name) =>
        new Counter({
          name,
          help: 'Provider calls by outcome: sent, failed (transient), permanent, rejected (circuit open)',
          labelNames: ['provider', 'channel', 'outcome'] as const,
          registers,
        }),
    ),
    duration: shared(
      metrics,
      'notify_provider_duration_seconds',
      (name) =>
        new Histogram({
          name,
          help: 'Provider call duration (calls the circuit let through)',
          labelNames: ['provider', 'channel'] as const,
          buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
          registers,
        }),
    ),
  };
}

/** What the breaker runs: a provider's send, or a local provider's batch (`sendLocal`). */
type Call = () => Promise<unknown>;

interface GuardedProvider {
  provider: Provider;
  breaker: CircuitBreaker<[Call], unknown>;
  state(): State;
  /** How long until the breaker lets a probe through. */
  retryAfterMs(): number;
}

function guard(
  provider: Provider,
  settings: BreakerSettings,
  metrics: Metrics,
  onChange: (state: State) => void,
) {
  const breaker = new CircuitBreaker((call: Call) => call(), {
    name: `${provider.channel}:${provider.name}`,
    timeout: settings.timeoutMs,
    errorThresholdPercentage: settings.errorThresholdPercentage,
    volumeThreshold: settings.volumeThreshold,
    rollingCountTimeout: settings.rollingWindowMs,
    resetTimeout: settings.resetTimeoutMs,
    // A permanent error (bad address, unsubscribed) says nothing about the provider's health.
    errorFilter: (error: unknown) => error instanceof ProviderError && error.permanent,
  });
  let openedAt = 0;
  const gauge = providerMetrics(metrics).state.labels({ provider: provider.name, channel: provider.channel });
  gauge.set(0);
  const state = (): State => (breaker.opened ? 'open' : breaker.halfOpen ? 'half_open' : 'closed');
  const changed = () => {
    gauge.set(STATE_VALUE[state()]);
    onChange(state());
  };
  breaker.on('open', () => {
    openedAt = Date.now();
    changed();
  });
  breaker.on('halfOpen', changed);
  breaker.on('close', changed);
  return {
    provider,
    breaker,
    state,
    // While half-open a probe is in flight; the others wait about one probe's time, at most the reset time.
    retryAfterMs: () =>
      breaker.opened
        ? Math.max(1, openedAt + settings.resetTimeoutMs - Date.now())
        : Math.min(settings.resetTimeoutMs, 1000),
  } satisfies GuardedProvider;
}

const isOpenRejection = (error: unknown) => (error as { code?: string })?.code === 'EOPENBREAKER';

/** opossum's own timeout error is a transient provider failure as far as the core is concerned. */
function asProviderError(error: unknown, provider: Provider): unknown {
  if ((error as { code?: string })?.code === 'ETIMEDOUT' && !(error instanceof ProviderError)) {
    return new ProviderError('timeout', `${provider.name} did not answer in time`, { permanent: false });
  }
  return error;
}

/**
 * The core's view of a channel: the primary provider behind a circuit breaker, and while that
 * circuit is open, the fallback (behind its own breaker). With both open (or no fallback) the call
 * fails fast with ProviderUnavailable, so the core re-schedules without spending an attempt.
 * Only an open circuit reroutes: after a transient failure the primary may have sent the message,
 * and the core's retry (same delivery id, idempotent at the provider) is the safe path.
 */
export function createChannelSender(options: {
  channel: Channel;
  primary: Provider;
  fallback?: Provider;
  breaker: BreakerSettings;
  metrics: Metrics;
  onStateChange?: (provider: string, channel: Channel, state: State) => void;
}): ChannelSender {
  const onChange = (provider: Provider) => (state: State) =>
    options.onStateChange?.(provider.name, options.channel, state);
  const chain = [options.primary, options.fallback]
    .filter((provider): provider is Provider => provider !== undefined)
    .map((provider) => guard(provider, options.breaker, options.metrics, onChange(provider)));
  const { calls, duration } = providerMetrics(options.metrics);
  const [primary] = chain;
  const local = primary.provider.local;

  return {
    async send(message) {
      for (const guarded of chain) {
        const labels = { provider: guarded.provider.name, channel: options.channel };
        const started = performance.now();
        try {
          const result = (await guarded.breaker.fire(() => guarded.provider.send(message))) as SendResult;
          calls.inc({ ...labels, outcome: 'sent' });
          duration.observe(labels, (performance.now() - started) / 1000);
          return result;
        } catch (caught) {
          if (isOpenRejection(caught)) {
            calls.inc({ ...labels, outcome: 'rejected' });
            continue;
          }
          const error = asProviderError(caught, guarded.provider);
          const permanent = error instanceof ProviderError && error.permanent;
          calls.inc({ ...labels, outcome: permanent ? 'permanent' : 'failed' });
          duration.observe(labels, (performance.now() - started) / 1000);
          throw error;
        }
      }
      const wait = Math.min(...chain.map((guarded) => guarded.retryAfterMs()));
      throw new ProviderUnavailable(chain.map((g) => g.provider.name).join('+'), wait);
    },
    sendLocal:
      local &&
      (async (messages, at, commit) => {
        if (primary.state() !== 'closed') return undefined;
        const labels = { provider: primary.provider.name, channel: options.channel };
        const rows = messages.map((message) => local.row(message, at));
        const started = performance.now();
        try {
          const stored = (await primary.breaker.fire(() =>
            commit(rows, primary.provider.name),
          )) as Set<string>;
          calls.inc({ ...labels, outcome: 'sent' }, messages.length);
          duration.observe(labels, (performance.now() - started) / 1000);
          return stored;
        } catch (caught) {
          // Opened since the check: nothing was written, and `send` takes the fallback or fails fast.
          if (isOpenRejection(caught)) return undefined;
          calls.inc({ ...labels, outcome: 'failed' }, messages.length);
          duration.observe(labels, (performance.now() - started) / 1000);
          throw asProviderError(caught, primary.provider);
        }
      }),
    states: () =>
      chain.map((guarded) => ({
        provider: guarded.provider.name,
        channel: options.channel,
        state: guarded.state(),
      })),
    async close() {
      for (const guarded of chain) {
        guarded.breaker.shutdown();
        await guarded.provider.close?.();
      }
    },
  };
}
