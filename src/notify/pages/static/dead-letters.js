// After "Send again": the API only queued the delivery. Watch its status (the JSON API with the
// page's admin session) until a worker settled it; a failure is then filed as a dead letter again
// by the queue, a moment after the status says so, so the page waits for that too and reloads,
// and the notice and the list agree.
const outcome = document.querySelector('[data-redrive-outcome][data-notification]');
const POLL_MS = 1000;
const OPEN = ['queued', 'sending', 'scheduled'];
const DEAD = ['failed', 'dead_lettered'];
let polls = 30; // then the Refresh link is the way on (a scheduled send waits for its time)

async function getJson(url) {
  const response = await fetch(url, { headers: { accept: 'application/json' } });
  return response.ok ? response.json() : undefined;
}

/** true once the page would say something new. */
async function settled() {
  const { notification, channel } = outcome.dataset;
  const status = await getJson(`/api/notifications/${encodeURIComponent(notification)}`);
  const delivery = status?.channels.find((c) => c.channel === channel)?.status;
  if (!delivery || OPEN.includes(delivery)) return false;
  if (!DEAD.includes(delivery)) return true;
  const letters = await getJson('/api/notifications/dead-letters');
  return Boolean(
    letters?.dead_letters.some((d) => d.notification_id === notification && d.channel === channel),
  );
}

async function poll() {
  try {
    if (await settled()) {
      location.reload();
      return;
    }
  } catch {
    // The server restarting: try again on the next tick.
  }
  if (--polls > 0) setTimeout(poll, POLL_MS);
}

if (outcome) setTimeout(poll, POLL_MS);
