import { api, identity, money } from './common.js';

/**
 * My bookings: the live holds (with their countdown, to go on paying) and the bookings of this
 * browser's guest identity, read with its token.
 */
const list = document.getElementById('my-bookings');
const holdList = document.getElementById('my-holds');
const { user, token } = await identity();
const auth = { authorization: `Bearer ${token}` };
const [bookings, holds] = await Promise.all([
  api('GET', `/api/v1/users/${user}/bookings`, undefined, auth),
  api('GET', '/api/v1/holds', undefined, auth),
]);

function when(show) {
  return new Date(show.show_time).toLocaleString('en-GB', {
    timeZone: show.timezone,
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  });
}

function left(expiresAt) {
  const ms = Math.max(0, new Date(expiresAt).getTime() - Date.now());
  return `${String(Math.floor(ms / 60_000)).padStart(2, '0')}:${String(Math.floor((ms % 60_000) / 1000)).padStart(2, '0')}`;
}

const live = holds.ok ? holds.data.holds : [];
if (live.length > 0) {
  const shows = await Promise.all(live.map((held) => api('GET', `/api/v1/shows/${held.show_id}`)));
  const clocks = [];
  holdList.replaceChildren(
    ...live.map((held, i) => {
      const show = shows[i].ok ? shows[i].data : undefined;
      const li = document.createElement('li');
      li.className = 'card hold';
      li.dataset.holdId = held.hold_id;
      const link = document.createElement('a');
      link.href = `/shows/${held.show_id}`;
      link.textContent = show ? `${show.movie_title}: pay for your seats` : 'Pay for your seats';
      const heading = document.createElement('h3');
      heading.append(link);
      const details = document.createElement('p');
      details.textContent = `${show ? `${show.theater_name} · ${when(show)} · ` : ''}${held.seats.join(', ')} · ${money(held.total_amount)} ${held.currency}`;
      const status = document.createElement('p');
      status.className = 'badge pending';
      status.textContent = 'HELD';
      const countdown = document.createElement('p');
      countdown.append('Held for you: ');
      const clock = document.createElement('strong');
      clock.className = 'countdown';
      clock.textContent = left(held.expires_at);
      countdown.append(clock);
      clocks.push([clock, held.expires_at]);
      li.append(status, heading, details, countdown);
      return li;
    }),
  );
  document.getElementById('holds-section').hidden = false;
  setInterval(() => {
    for (const [clock, expiresAt] of clocks) {
      clock.textContent = left(expiresAt);
      clock.classList.toggle('urgent', new Date(expiresAt).getTime() - Date.now() < 60_000);
    }
  }, 1000);
}

const { ok, data } = bookings;
if (!ok || data.bookings.length === 0) {
  const li = document.createElement('li');
  li.className = 'muted';
  li.textContent = ok ? 'No bookings yet.' : 'Could not load your bookings.';
  list.replaceChildren(li);
} else {
  list.replaceChildren(
    ...data.bookings.map((booking) => {
      const li = document.createElement('li');
      li.className = 'card';
      const link = document.createElement('a');
      link.href = `/bookings/${booking.booking_id}`;
      link.textContent = booking.show.movie_title;
      const heading = document.createElement('h3');
      heading.append(link);
      const details = document.createElement('p');
      details.textContent = `${booking.show.theater_name}, ${booking.show.city} · ${when(booking.show)} · ${booking.seats.join(', ')} · ${money(booking.total_amount)} ${booking.currency}`;
      const status = document.createElement('p');
      status.className = `badge ${booking.status.toLowerCase()}`;
      status.textContent = booking.status;
      li.append(status, heading, details);
      return li;
    }),
  );
}
