import { admissionKey, api, identity } from './common.js';

/** Waiting room: live position over SSE (polling as a fallback); on admission, on to the seat map. */
const app = document.getElementById('queue-app');
const showId = app.dataset.showId;
const position = document.getElementById('position');
const wait = document.getElementById('wait');
const status = document.getElementById('queue-status');
const go = document.getElementById('go');
const { user } = await identity();
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
  source?.close();
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

let source;
let polling = false;
// Polling is the fallback for when the event stream cannot be had (or is cut by a proxy).
async function poll() {
  if (done) return;
  const { ok, data } = await api('GET', `/api/v1/shows/${showId}/queue?user_id=${user}`);
  if (ok) show(data);
  setTimeout(poll, 10_000);
}
function startPolling() {
  if (polling) return;
  polling = true;
  poll();
}
if ('EventSource' in window) {
  source = new EventSource(`/api/v1/shows/${showId}/queue/events?user_id=${user}`);
  source.addEventListener('position', (event) => show(JSON.parse(event.data)));
  source.addEventListener('admitted', (event) => show(JSON.parse(event.data)));
  source.addEventListener('error', startPolling);
} else {
  startPolling();
}
