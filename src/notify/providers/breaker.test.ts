import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createMetrics } from '../../platform/observability/metrics.ts';
import { type OutboundMessage, type Provider, ProviderError, ProviderUnavailable } from '../ports.ts';
import { createChannelSender } from './breaker.ts';

const breaker = {
  timeoutMs: 300,
  errorThresholdPercentage: 50,
  volumeThreshold: 3,
  rollingWindowMs: 10_000,
  resetTimeoutMs: 200,
};

/** A provider whose next answers the test decides: 'ok', 'down' (transient), 'bad' (permanent), 'hang'. */
function scriptedProvider(name: string) {
  let mode: 'ok' | 'down' | 'bad' | 'hang' = 'ok';
  const calls: string[] = [];
  const provider: Provider = {
    name,
    channel: 'sms',
    async send(message) {
      calls.push(message.deliveryId);
      if (mode === 'down') throw new ProviderError('http_503', 'down', { permanent: false });
      if (mode === 'bad') throw new ProviderError('invalid_number', 'bad number', { permanent: true });
      if (mode === 'hang') await sleep(1000);
      return { providerMessageId: `${name}-${message.deliveryId}`, provider: name };
    },
  };
  return { provider, calls, set: (next: typeof mode) => (mode = next) };
}

let n = 0;
const message = (): OutboundMessage => ({
  deliveryId: `n${++n}:sms`,
  notificationId: `n${n}`,
  channel: 'sms',
  type: 'booking_confirmed',
  recipient: { userId: '1', phone: '+15005550006' },
  message: { text: 'hi' },
});

const gauge = async (metrics: ReturnType<typeof createMetrics>) =>
  (await metrics.registry.getSingleMetric('notify_circuit_state')!.get()).values.map((v) => [
    v.labels.provider,
    v.value,
  ]);

test('open → fail fast with ProviderUnavailable → half-open probe → closed', async () => {
  const metrics = createMetrics(
    async () => 0,
    () => ({ total: 0, idle: 0, waiting: 0, acquired: 0, waitSeconds: 0, timeouts: 0 }),
    false,
  );
  const primary = scriptedProvider('http');
  const sender = createChannelSender({ channel: 'sms', primary: primary.provider, breaker, metrics });
  try {
    assert.equal((await sender.send(message())).provider, 'http');
    primary.set('down');
    // 1 success + 2 failures: the volume threshold (3) is reached at 67 % failures (> 50 %).
    for (let i = 0; i < 2; i++)
      await assert.rejects(sender.send(message()), { code: 'http_503', permanent: false });
    assert.deepEqual(sender.states(), [{ provider: 'http', channel: 'sms', state: 'open' }]);
    assert.deepEqual(await gauge(metrics), [['http', 2]]);

    const before = primary.calls.length;
    const error = await sender.send(message()).catch((e) => e);
    assert.ok(error instanceof ProviderUnavailable, String(error));
    assert.ok(
      error.retryAfterMs > 0 && error.retryAfterMs <= breaker.resetTimeoutMs,
      String(error.retryAfterMs),
    );
    assert.equal(primary.calls.length, before, 'an open circuit does not call the provider');

    await sleep(breaker.resetTimeoutMs + 30);
    assert.equal(sender.states()[0].state, 'half_open');
    assert.deepEqual(await gauge(metrics), [['http', 1]]);
    // A failed probe opens it again …
    await assert.rejects(sender.send(message()), { code: 'http_503' });
    assert.equal(sender.states()[0].state, 'open');
    await sleep(breaker.resetTimeoutMs + 30);
    // … a good one closes it.
    primary.set('ok');
    assert.equal((await sender.send(message())).provider, 'http');
    assert.equal(sender.states()[0].state, 'closed');
    assert.deepEqual(await gauge(metrics), [['http', 0]]);
    const calls = await metrics.registry.getSingleMetric('notify_provider_calls_total')!.get();
    assert.deepEqual(Object.fromEntries(calls.values.map((v) => [v.labels.outcome, v.value])), {
      sent: 2,
      failed: 3,
      rejected: 1,
    });
  } finally {
    await sender.close();
  }
});

test('permanent errors do not open the circuit; a timeout is a transient ProviderError', async () => {
  const metrics = createMetrics(
    async () => 0,
    () => ({ total: 0, idle: 0, waiting: 0, acquired: 0, waitSeconds: 0, timeouts: 0 }),
    false,
  );
  const primary = scriptedProvider('http');
  const sender = createChannelSender({ channel: 'sms', primary: primary.provider, breaker, metrics });
  try {
    primary.set('bad');
    for (let i = 0; i < 10; i++) {
      await assert.rejects(sender.send(message()), { code: 'invalid_number', permanent: true });
    }
    assert.equal(sender.states()[0].state, 'closed');
    primary.set('hang');
    const error = await sender.send(message()).catch((e) => e);
    assert.ok(error instanceof ProviderError);
    assert.equal(error.code, 'timeout');
    assert.equal(error.permanent, false);
  } finally {
    await sender.close();
  }
});

test('the fallback takes messages while the primary circuit is open, never after a plain failure', async () => {
  const metrics = createMetrics(
    async () => 0,
    () => ({ total: 0, idle: 0, waiting: 0, acquired: 0, waitSeconds: 0, timeouts: 0 }),
    false,
  );
  const primary = scriptedProvider('http');
  const fallback = scriptedProvider('inbox');
  const sender = createChannelSender({
    channel: 'sms',
    primary: primary.provider,
    fallback: fallback.provider,
    // No probe comes due while the test runs, however slow the machine.
    breaker: { ...breaker, resetTimeoutMs: 60_000 },
    metrics,
  });
  try {
    primary.set('down');
    for (let i = 0; i < 3; i++) await assert.rejects(sender.send(message()), { code: 'http_503' });
    assert.equal(fallback.calls.length, 0, 'a transient failure is retried by the core, not rerouted');
    const routed = await sender.send(message());
    assert.deepEqual(routed, { providerMessageId: `inbox-n${n}:sms`, provider: 'inbox' });
    assert.deepEqual(sender.states(), [
      { provider: 'http', channel: 'sms', state: 'open' },
      { provider: 'inbox', channel: 'sms', state: 'closed' },
    ]);
    // Both open: fail fast.
    fallback.set('down');
    for (let i = 0; i < 2; i++) await assert.rejects(sender.send(message()), { code: 'http_503' });
    await assert.rejects(sender.send(message()), ProviderUnavailable);
  } finally {
    await sender.close();
  }
});
