import { retentionJob } from '../platform/jobs/retention.ts';
import type { ServiceModule } from '../platform/module.ts';
import { createPaymentsMetrics } from './metrics.ts';
import { paymentsMigrations } from './migrations/index.ts';
import { paymentPageRoutes } from './pages/routes.ts';
import { createPaymentsRepository } from './repository.ts';
import { paymentsRoutes } from './routes.ts';
import { createSandboxGateway } from './sandbox.ts';
import {
  createPaymentsService,
  inProcessTransport,
  type PaymentsService,
  webhookEventRetention,
} from './service.ts';
import { loadPaymentsSettings } from './settings.ts';

/**
 * Payments: not a --services entry; booking and parking list it in `needs` and reach it through
 * `deps.modules.get('payments') as PaymentsApi` (see api.ts and README.md).
 */
export const paymentsModule: ServiceModule = {
  name: 'payments',
  migrations: paymentsMigrations,
  create(deps) {
    const log = deps.log.child({ module: 'payments' });
    const settings = loadPaymentsSettings(deps.config.env);
    const repository = createPaymentsRepository(deps.database.db);
    let service: PaymentsService | undefined;
    const sandbox = createSandboxGateway({
      db: deps.database.db,
      clock: deps.clock,
      secret: deps.config.paymentWebhookSecret,
      transport: inProcessTransport(() => service!),
      onDeliveryError: (error, event) =>
        log.warn({ err: error, eventId: event.id, type: event.type }, 'sandbox webhook delivery gave up'),
    });
    const metrics = createPaymentsMetrics(deps.metrics.registry);
    service = createPaymentsService({
      repository,
      gateway: metrics.timedGateway(sandbox),
      sandbox,
      clock: deps.clock,
      log,
      baseUrl: deps.config.baseUrl,
      webhookSecret: deps.config.paymentWebhookSecret,
      defaultTimeoutMs: deps.config.paymentTimeoutMs,
      metrics,
    });
    const payments = service;
    return {
      api: payments.api,
      routes: async (app) => {
        await app.register(paymentsRoutes, { service: payments });
        await app.register(paymentPageRoutes, { api: payments.api });
      },
      jobs: [
        {
          name: 'payments.reconcile',
          schedule: '* * * * *',
          run: ({ tickAt }) => payments.reconcile(tickAt),
        },
        retentionJob(
          'payments.retention',
          '23 * * * *',
          [webhookEventRetention(repository, settings.eventRetentionMs)],
          { clock: deps.clock, metrics: deps.metrics },
        ),
      ],
      close: () => sandbox.drain(),
    };
  },
};
