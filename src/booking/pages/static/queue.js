import { admissionKey, api, identity, readEvents } from './common.js';

/**
 * Waiting room: live position over SSE (polling as a fallback); on admission, on to the seat map.
 * The token says who waits, so the stream is read with fetch (EventSource cannot send it).
 */
const app = document.getElementById('queue-app');
const showId = app.dataset.showId;
const position = document.getElementById('position');
const wait = document.getElementById('wait');
const status = document.getElementById('queue-status');
const go = document.getElementById('go');
const { token } = await identity();
const auth = { authorization: `Bearer ${token}` };
const live = new AbortController();
let done = false;

function show(data) {
  if (data.status === 'ADMITTED' || data.status === 'NOT_REQUIRED') return admitted(data);
  position.textContent = `#${data.position}`;
  wait.textContent = `about ${data.estimated_wait} · ${data.waiting} waiting`;
  status.textContent = data.position === 1 ? 'You are next.' : '';
}

function admitted(data) {
  if (done) return;
  done = true;
  live.abort();
  if (data.admission_token) {
    sessionStorage.setItem(
      admissionKey(showId),
      JSON.stringify({ token: data.admission_token, until: data.admitted_until }),
    );
  }
  position.textContent = "It's your turn";
  wait.textContent = data.admitted_until
    ? `choose seats before ${new Date(data.admitted_until).toLocaleTimeString()}`
    : '';
  status.textContent = 'Admitted: taking you to the seat map…';
  go.hidden = false;
  setTimeout(() => {
    location.href = `/shows/${showId}`;
  }, 1200);
}

const POLL_SECONDS = 10;
let polling = false;
// Polling is the fallback for when the event stream cannot be had (or is cut by a proxy). A poll
// that fails says so, keeping the last place shown, and the next one asks again.
async function poll() {
  if (done) return;
  try {
    const { ok, data } = await api('GET', `/api/v1/shows/${showId}/queue`, undefined, auth);
    if (ok) show(data);
    else
      status.textContent = `${data.detail ?? 'The waiting room did not answer'}: asking again in ${POLL_SECONDS} seconds.`;
  } catch {
    // No answer at all (the server restarting, the network gone).
    status.textContent = `Lost touch with the server: asking again in ${POLL_SECONDS} seconds.`;
  }
  setTimeout(poll, POLL_SECONDS * 1000);
}
function startPolling() {
  if (polling) return;
  polling = true;
  poll();
}
readEvents(`/api/v1/shows/${showId}/queue/events`, auth, live.signal, (event, data) => {
  if (event === 'position' || event === 'admitted') show(data);
}).then(
  // The stream ended (a proxy cut it, the server restarted) or never started: poll instead.
  () => startPolling(),
  () => startPolling(),
);
