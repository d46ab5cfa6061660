import { buildApp } from '../app.ts';
import { createAdapters } from '../platform/adapters.ts';
import { systemClock } from '../platform/clock.ts';
import { loadConfig } from '../platform/config.ts';
import { providerLogSenders } from './fake-provider.ts';
import { notifyTestDoubles } from './module.ts';
import { fakeTemplates } from './testing.ts';

/** A notify worker process (worker role only) for ordering.test.ts and crash.test.ts. */
const config = loadConfig([], { ...process.env, SERVICES: 'notify', LOG_LEVEL: 'silent', ROLE: 'worker' });
const adapters = await createAdapters(config, systemClock, { queue: { ackWaitMs: 3000, leaseMs: 1500 } });
notifyTestDoubles.set(config.namespace, {
  templates: fakeTemplates(),
  senders: providerLogSenders(() => adapters.database.db, {
    failFirstCallFor: process.env.FAIL_USER || undefined,
    delayMs: Number(process.env.PROVIDER_DELAY_MS ?? 0),
  }),
});
const app = await buildApp(config, adapters, { logger: false, routes: false });
await app.ready();
await app.platform.startWorkers();
process.stdout.write('worker ready\n');
process.on('SIGTERM', async () => {
  await app.close();
  await adapters.close();
  process.exit(0);
});
