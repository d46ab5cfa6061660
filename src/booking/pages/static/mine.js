import { api, identity, money } from './common.js';

/** My bookings: the bookings of this browser's guest identity, read with its token. */
const list = document.getElementById('my-bookings');
const { user, token } = await identity();
const { ok, data } = await api('GET', `/api/v1/users/${user}/bookings`, undefined, {
  authorization: `Bearer ${token}`,
});
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
      const heading = document.createElement('h2');
      heading.append(link);
      const details = document.createElement('p');
      const when = new Date(booking.show.show_time).toLocaleString('en-GB', {
        timeZone: booking.show.timezone,
        weekday: 'short',
        day: 'numeric',
        month: 'short',
        hour: '2-digit',
        minute: '2-digit',
        hourCycle: 'h23',
      });
      details.textContent = `${booking.show.theater_name}, ${booking.show.city} · ${when} · ${booking.seats.join(', ')} · ${money(booking.total_amount)} ${booking.currency}`;
      const status = document.createElement('p');
      status.className = `badge ${booking.status.toLowerCase()}`;
      status.textContent = booking.status;
      li.append(status, heading, details);
      return li;
    }),
  );
}
