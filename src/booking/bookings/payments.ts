/**
 * Booking pays through the payments module's public API (src/payments/api.ts): create a payment
 * per attempt, pay it with the card, react to outcomes with `onPaymentEvent`, refund.
 */
export type {
  CardDetails,
  Payment as PaymentView,
  PaymentsApi as BookingPayments,
} from '../../payments/api.ts';
