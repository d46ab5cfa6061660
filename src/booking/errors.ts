import { defineErrors } from '../platform/errors.ts';

/** The booking service's error catalogue: stable codes, their status and title. */
export const err = defineErrors({
  city_not_found: { status: 404, title: 'No such city' },
  movie_not_found: { status: 404, title: 'No such movie' },
  theater_not_found: { status: 404, title: 'No such theater' },
  screen_not_found: { status: 404, title: 'No such screen' },
  show_not_found: { status: 404, title: 'No such show' },
  hold_not_found: { status: 404, title: 'No such hold' },
  booking_not_found: { status: 404, title: 'No such booking' },
  city_exists: { status: 409, title: 'A city with this name exists' },
  screen_exists: { status: 409, title: 'The theater already has a screen with this number' },
  show_overlaps: { status: 409, title: 'The screen is busy with another show at that time' },
  unknown_seats: { status: 422, title: 'Some seats do not exist on this screen' },
  seats_unavailable: { status: 409, title: 'Some of the seats are not available' },
  show_started: { status: 409, title: 'The show has started' },
  show_cancelled: { status: 410, title: 'The show was cancelled' },
  show_inventory_removed: { status: 410, title: "The show's seat inventory was removed after the show" },
  hold_limit: {
    status: 409,
    title: 'You already hold as many seats as you may; book or release a hold first',
  },
  admission_required: { status: 403, title: 'This show has a waiting room; join the queue first' },
  hold_expired: { status: 410, title: 'The hold has expired or was released' },
  hold_already_booked: { status: 409, title: 'The hold is already booked' },
  payment_declined: { status: 402, title: 'The payment was declined' },
  payments_unavailable: { status: 503, title: 'Payments are unavailable, try again shortly' },
  booking_not_cancellable: { status: 409, title: 'The booking cannot be cancelled' },
  refund_cutoff_passed: { status: 409, title: 'Too close to the show for a refund' },
});
