// The feed page: the <notification-feed> of this browser's guest identity (platform guest.js).
import { identity } from '/static/platform/guest.js';

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
