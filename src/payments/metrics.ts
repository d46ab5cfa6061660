import { Counter, Histogram, type Registry } from 'prom-client';
import type { PaymentPurpose } from './api.ts';
import { GatewayTimeout, type PaymentGateway } from './gateway.ts';
import type { PaymentRow } from './repository.ts';

/**
 * The payments module's metrics: every gateway call timed by operation and outcome, and payments
 * counted at the transitions the repository makes once (a conditional update that returned a row),
 * so a webhook and the synchronous answer for the same charge count one outcome.
 *
 * The gateway has no circuit breaker (a charge that times out stays outstanding and is reconciled;
 * a gateway error answers 503 with Retry-After), so there is no breaker state to export.
 */
export function createPaymentsMetrics(registry: Registry) {
  const registers = [registry];
  const gatewayDuration = new Histogram({
    name: 'payments_gateway_duration_seconds',
    help: 'Payment gateway calls by operation (create_charge, find_charge, refund) and outcome (ok, declined, pending, not_found, timeout, error)',
    labelNames: ['operation', 'outcome'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  const payments = new Counter({
    name: 'payments_total',
    help: 'Payment outcomes by purpose: completed, declined, canceled, refunded, partially_refunded',
    labelNames: ['purpose', 'outcome'] as const,
    registers,
  });

  async function timed<T>(operation: string, call: () => Promise<T>, outcomeOf: (result: T) => string) {
    const started = performance.now();
    let outcome = 'error';
    try {
      const result = await call();
      outcome = outcomeOf(result);
      return result;
    } catch (error) {
      if (error instanceof GatewayTimeout) outcome = 'timeout';
      throw error;
    } finally {
      gatewayDuration.observe({ operation, outcome }, (performance.now() - started) / 1000);
    }
  }

  return {
    /** The gateway with each call timed (`payments_gateway_duration_seconds`). */
    timedGateway(gateway: PaymentGateway): PaymentGateway {
      return {
        get name() {
          return gateway.name;
        },
        createCharge: (request) =>
          timed(
            'create_charge',
            () => gateway.createCharge(request),
            (charge) =>
              charge.status === 'succeeded' ? 'ok' : charge.status === 'failed' ? 'declined' : 'pending',
          ),
        findCharge: (key) =>
          timed(
            'find_charge',
            () => gateway.findCharge(key),
            (charge) => (charge ? 'ok' : 'not_found'),
          ),
        refund: (request) =>
          timed(
            'refund',
            () => gateway.refund(request),
            () => 'ok',
          ),
      };
    },

    /** A payment row a transition returned: its new state is the outcome. */
    transitioned(row: PaymentRow) {
      const outcome =
        row.last_event === 'payment.refunded'
          ? row.status === 'REFUNDED'
            ? 'refunded'
            : 'partially_refunded'
          : row.status === 'COMPLETED'
            ? 'completed'
            : row.failure_code === 'canceled'
              ? 'canceled'
              : 'declined';
      payments.inc({ purpose: row.purpose satisfies PaymentPurpose, outcome });
    },
  };
}

export type PaymentsMetrics = ReturnType<typeof createPaymentsMetrics>;
