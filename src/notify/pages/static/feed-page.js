// The feed page: the <notification-feed> of this browser's guest identity, the one the booking
// pages use (localStorage; made by POST /api/v1/guests when there is none yet).
async function identity() {
  let user = localStorage.getItem('booking.user_id');
  let token = localStorage.getItem('booking.user_token');
  if (!user || !token) {
    const response = await fetch('/api/v1/guests', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: '{}',
    });
    if (!response.ok) throw new Error(`guests: ${response.status}`);
    const guest = await response.json();
    user = guest.user_id;
    token = guest.token;
    localStorage.setItem('booking.user_id', user);
    localStorage.setItem('booking.user_token', token);
  }
  return { user, token };
}

const feed = document.querySelector('notification-feed');
const who = document.querySelector('[data-who]');
identity().then(
  ({ user, token }) => {
    who.textContent = user;
    feed.setAttribute('user-id', user);
    feed.token = token;
  },
  () => {
    who.textContent = 'nobody (no guest identity could be made)';
  },
);
