import { api } from './common.js';

/** Booking page: follows a PENDING payment until it settles; cancels a confirmed booking. */
const app = document.getElementById('booking-app');
const bookingId = app.dataset.bookingId;
const message = document.getElementById('message');

if (app.dataset.status === 'PENDING') {
  const started = Date.now();
  const timer = setInterval(async () => {
    const { ok, data } = await api('GET', `/api/v1/bookings/${bookingId}`);
    if ((ok && data.status !== 'PENDING') || Date.now() - started > 15 * 60_000) {
      clearInterval(timer);
      location.reload();
    }
  }, 2000);
}

document.getElementById('cancel')?.addEventListener('click', async (event) => {
  const button = event.currentTarget;
  if (!confirm('Cancel this booking?')) return;
  button.disabled = true;
  // The booking's page is its capability: whoever holds its link may cancel it.
  const user = app.dataset.userId;
  let result = await api('POST', `/api/v1/bookings/${bookingId}/cancel`, { user_id: user });
  if (result.status === 409 && result.data.code === 'refund_cutoff_passed') {
    if (confirm(`${result.data.detail}\n\nCancel without a refund?`)) {
      result = await api('POST', `/api/v1/bookings/${bookingId}/cancel`, {
        user_id: user,
        accept_no_refund: true,
      });
    }
  }
  if (result.ok) return location.reload();
  message.textContent = result.data.detail ?? 'Could not cancel the booking';
  button.disabled = false;
});
