// After "Send again": the API only queued the delivery. Watch its status (the JSON API with the
// page's admin session) and reload once a worker settled it, so the page says what happened and
// lists it again if it failed again.
const outcome = document.querySelector('[data-redrive-outcome][data-notification]');
const POLL_MS = 1000;
const OPEN = ['queued', 'sending', 'scheduled'];
let polls = 30; // then the Refresh link is the way on (a scheduled send may wait for hours)

async function poll() {
  try {
    const response = await fetch(`/api/notifications/${encodeURIComponent(outcome.dataset.notification)}`, {
      headers: { accept: 'application/json' },
    });
    if (!response.ok) return;
    const { channels } = await response.json();
    const status = channels.find((c) => c.channel === outcome.dataset.channel)?.status;
    if (status && !OPEN.includes(status)) {
      location.reload();
      return;
    }
  } catch {
    // The server restarting: try again on the next tick.
  }
  if (--polls > 0) setTimeout(poll, POLL_MS);
}

if (outcome) setTimeout(poll, POLL_MS);
