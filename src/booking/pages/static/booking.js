import { api, identity, money } from './common.js';

/**
 * Booking page: reads the booking with this browser's user token (only its user sees it and its
 * ticket), follows a PENDING payment until it settles, cancels a confirmed booking.
 */
const app = document.getElementById('booking-app');
const bookingId = app.dataset.bookingId;
const message = document.getElementById('message');
const badge = document.getElementById('booking-status');
const note = document.getElementById('booking-note');
const cancelButton = document.getElementById('cancel');
const { token } = await identity();
const auth = { authorization: `Bearer ${token}` };

function say(text, tone = '') {
  message.textContent = text;
  message.className = `status ${tone}`;
}

function link(href, text) {
  const a = document.createElement('a');
  a.href = href;
  a.textContent = text;
  return a;
}

/** A moment as the venue's clock says it: "Sunday 29 November at 19:30". */
function venueTime(iso, timeZone) {
  return new Date(iso).toLocaleString('en-GB', {
    timeZone,
    weekday: 'long',
    day: 'numeric',
    month: 'long',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  });
}

function showLine(show) {
  const when = venueTime(show.show_time, show.timezone);
  const time = document.createElement('time');
  time.dateTime = show.show_time;
  time.textContent = when;
  const line = document.getElementById('booking-show');
  line.replaceChildren(
    `${show.theater_name}, ${show.city} · Screen ${show.screen_number} (${show.screen_type})`,
    document.createElement('br'),
    time,
  );
}

function statusNote(booking) {
  if (booking.status === 'CONFIRMED') {
    return [`Free cancellation until ${app.dataset.cutoffHours} h before the show.`];
  }
  if (booking.status === 'PENDING') {
    const parts = ['Waiting for the payment to go through… this page updates by itself.'];
    // Only the payment module's own pages: never follow a link of another shape.
    if (booking.payment_url?.startsWith('/')) {
      parts.push(' Or finish it on the ', link(booking.payment_url, 'payment page'), '.');
    }
    return parts;
  }
  if (booking.status === 'FAILED') {
    return [
      `The booking failed (${booking.failure_reason ?? 'payment failed'}); the seats were released. `,
      link(`/shows/${booking.show.show_id}`, 'Pick seats again'),
      '.',
    ];
  }
  const refund = booking.refund
    ? ` · refund of ${money(booking.refund.amount)} ${booking.currency}: ${booking.refund.status}`
    : '';
  return [`Cancelled${refund}.`];
}

function render(booking) {
  app.dataset.status = booking.status;
  badge.textContent = booking.status;
  badge.className = `badge ${booking.status.toLowerCase()}`;
  badge.hidden = false;
  document.getElementById('booking-title').textContent = booking.show.movie_title;
  document.title = `Booking ${booking.seats.join(' ')} · Four Services`;
  showLine(booking.show);
  const seats = document.createElement('strong');
  seats.textContent = booking.seats.join(', ');
  document
    .getElementById('booking-seats')
    .replaceChildren('Seats ', seats, ` · ${money(booking.total_amount)} ${booking.currency}`);
  const confirmed = booking.status === 'CONFIRMED' && booking.qr_code;
  document.getElementById('ticket').hidden = !confirmed;
  if (confirmed) document.getElementById('qr').src = booking.qr_code;
  cancelButton.hidden = booking.status !== 'CONFIRMED';
  note.replaceChildren(...statusNote(booking));
  app.setAttribute('aria-busy', 'false');
}

async function load() {
  const { ok, status, data } = await api('GET', `/api/v1/bookings/${bookingId}`, undefined, auth);
  if (!ok) {
    say(
      status === 404
        ? 'No such booking among the bookings of this browser.'
        : (data.detail ?? 'Could not load the booking'),
      'bad',
    );
    app.setAttribute('aria-busy', 'false');
    return undefined;
  }
  say('');
  render(data);
  return data;
}

const booking = await load();
if (booking?.status === 'PENDING') {
  const started = Date.now();
  const timer = setInterval(async () => {
    const current = await load();
    if ((current && current.status !== 'PENDING') || Date.now() - started > 15 * 60_000) clearInterval(timer);
  }, 2000);
}

const cancelDialog = document.getElementById('cancel-dialog');
let current = booking;

/** The terms of cancelling now, in words: the refund and until when it is due, in the show's zone. */
function cancelTerms(found) {
  const terms = found.cancellation;
  const until = venueTime(terms.refund_until, found.show.timezone);
  return terms.refund_amount > 0
    ? `You get ${money(terms.refund_amount)} ${found.currency} back, the whole amount (refunds end ${until}). The seats go back on sale.`
    : `Refunds ended ${until}: cancelling now gives nothing back. The seats go back on sale.`;
}

/** Opens the dialog; resolves true when the user chose to cancel. */
function askToCancel(found) {
  document.getElementById('cancel-terms').textContent = cancelTerms(found);
  cancelDialog.returnValue = '';
  cancelDialog.showModal();
  return new Promise((resolve) =>
    cancelDialog.addEventListener('close', () => resolve(cancelDialog.returnValue === 'cancel'), {
      once: true,
    }),
  );
}

cancelButton.addEventListener('click', async () => {
  // The terms as of now (the cutoff may have passed since the page loaded).
  current = (await load()) ?? current;
  if (current?.status !== 'CONFIRMED' || !current.cancellation?.allowed) return;
  if (!(await askToCancel(current))) return cancelButton.focus();
  cancelButton.disabled = true;
  const result = await api(
    'POST',
    `/api/v1/bookings/${bookingId}/cancel`,
    current.cancellation.refund_amount > 0 ? {} : { accept_no_refund: true },
    auth,
  );
  cancelButton.disabled = false;
  if (result.ok) {
    render(result.data);
    return say('The booking is cancelled.', 'ok');
  }
  say(result.data.detail ?? 'Could not cancel the booking', 'bad');
});
