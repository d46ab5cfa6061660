import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { serveStatic } from '../../platform/pages/index.ts';
import type { Payment, PaymentsApi } from '../api.ts';
import { PaymentParams } from '../schemas.ts';
import { formatMinor, toJson } from '../service.ts';

/** The hosted payment page (`paymentUrl`): the payment id is the capability, like the API's. */
export const paymentPageRoutes: FastifyPluginAsyncTypebox<{ api: PaymentsApi }> = async (app, { api }) => {
  serveStatic(app, 'payments', new URL('./static/', import.meta.url));

  app.get(
    '/pay/:paymentId',
    { config: { access: { public: true } }, schema: { hide: true, params: PaymentParams } },
    async (request, reply) => {
      const payment = await api.get(request.params.paymentId);
      if (!payment) {
        return reply.code(404).page('/platform/pages/message', {
          title: 'Payment not found',
          message: 'This payment link is not valid. Ask for a new one where you started.',
          tone: 'bad',
        });
      }
      return reply.page('/payments/pages/pay', {
        title: `Pay ${formatMinor(payment.amountMinor, payment.currency)}`,
        payment: toJson(payment),
        amount: formatMinor(payment.amountMinor, payment.currency),
        payable: payable(payment),
        failed: failedText(payment.failureMessage, payment.allowRetry),
        replaced: REPLACED,
        styles: ['/static/payments/pay.css'],
        scripts: ['/static/payments/pay.js'],
      });
    },
  );
};

function payable(payment: Payment): boolean {
  if (payment.chargeOutstanding) return false;
  return payment.status === 'PENDING' || (payment.status === 'FAILED' && payment.allowRetry);
}

/**
 * A withdrawn payment (`cancel`, failure code `canceled`): its owner replaced it (a parking fee
 * recomputed after the grace period, a lost ticket) or gave up (a booking hold expired).
 */
export const REPLACED =
  'This payment was replaced or withdrawn and can no longer be paid. Nothing was charged: ask for the amount due now where you started.';

/** A declined card in words; the same sentence as pay.js after a live decline. */
export function failedText(message: string | null, retry: boolean): string {
  const why = (message ?? 'The payment failed').replace(/\.$/, '');
  return retry ? `${why}. Nothing was charged: you can try another card.` : `${why}. Nothing was charged.`;
}
