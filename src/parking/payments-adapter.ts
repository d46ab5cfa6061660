import type { Payment, PaymentsApi } from '../payments/api.ts';
import type { GatewayPayment, ParkingPayments } from './payments-port.ts';

/**
 * Parking's payment port on the shared payments module. Parking payments are created without
 * retries (`allowRetry: false`): a declined payment is final, the next exit makes a new one for
 * the fee due then, so an old payment page can never be paid after a newer one exists.
 */
export function createParkingPayments(api: PaymentsApi): ParkingPayments {
  return {
    create: async (request) =>
      view(
        await api.createPayment({
          purpose: 'parking',
          reference: request.reference,
          amountMinor: request.amountMinor,
          currency: request.currency,
          description: request.description,
          idempotencyKey: request.idempotencyKey,
          allowRetry: false,
        }),
      ),
    pay: async (paymentId, card) => view(await api.pay(paymentId, card)),
    cancel: async (paymentId, reason) => view(await api.cancel(paymentId, reason)),
    refund: async (paymentId, reason) => view(await api.refund(paymentId, { reason })),
    onOutcome(handler) {
      api.onPaymentEvent('parking', ({ payment }) =>
        handler({ paymentId: payment.id, status: payment.status, failureReason: payment.failureCode }),
      );
    },
  };
}

function view(payment: Payment): GatewayPayment {
  return {
    id: payment.id,
    status: payment.status,
    amountMinor: payment.amountMinor,
    currency: payment.currency,
    paymentUrl: payment.paymentUrl,
    failureReason: payment.failureCode,
    chargeOutstanding: payment.chargeOutstanding,
  };
}
