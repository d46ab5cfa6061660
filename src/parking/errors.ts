import { defineErrors } from '../platform/errors.ts';

/** The parking service's error codes (problem+json `code`), documented in README.md. */
export const err = defineErrors({
  parking_full: { status: 409, title: 'The lot is full for this vehicle type' },
  vehicle_already_parked: { status: 409, title: 'A vehicle with this licence plate is already parked' },
  ticket_not_found: { status: 404, title: 'No such ticket' },
  vehicle_not_found: { status: 404, title: 'No vehicle with this licence plate is parked here' },
  unknown_panel: { status: 422, title: 'No such entry or exit panel in this lot' },
  needs_not_possible: { status: 422, title: 'This vehicle type does not fit the spots it asks for' },
  payment_declined: { status: 402, title: 'The payment failed; the gate stays closed' },
  payment_pending: { status: 409, title: 'An exit payment for this ticket is already waiting' },
  ticket_already_paid: { status: 409, title: 'This ticket is already paid' },
  no_payment_due: { status: 409, title: 'Nothing is waiting to be paid for this ticket' },
  receipt_not_ready: {
    status: 409,
    title: 'This ticket is not paid yet: its receipt comes with the payment',
  },
  payment_not_refundable: { status: 409, title: 'This ticket has no completed payment to refund' },
  reservations_closed: { status: 409, title: 'This lot takes no reservations' },
  invalid_reservation_window: { status: 422, title: 'The reservation window cannot be booked' },
  no_reservable_spot: { status: 409, title: 'No spot of this type can be reserved for this window' },
  too_many_reservations: { status: 409, title: 'You have as many live reservations as one person may' },
  reservation_overlaps: {
    status: 409,
    title: 'This licence plate already has a reservation overlapping this window',
  },
  reservation_not_found: { status: 404, title: 'No such reservation' },
  reservation_not_cancellable: {
    status: 409,
    title: 'This reservation was used or has ended; it can no longer be cancelled',
  },
  payment_unavailable: { status: 503, title: 'Payments are unavailable, try again shortly' },
});
