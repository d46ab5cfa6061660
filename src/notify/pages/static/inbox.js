// Dev inbox: polls for the newest message id and offers a refresh when new mail arrived, like a
// mail catcher. The list itself stays as rendered, so a message being read never jumps away.
const list = document.querySelector('[data-messages]');
const banner = document.querySelector('[data-new-mail]');
const POLL_MS = 2000;

async function poll() {
  try {
    const response = await fetch(list.dataset.poll, { headers: { accept: 'application/json' } });
    if (!response.ok) return; // signed out or server gone: stop quietly
    const { id } = await response.json();
    if (id && id !== list.dataset.newest) {
      banner.hidden = false;
      return;
    }
  } catch {
    // A restart of the dev server: try again on the next tick.
  }
  setTimeout(poll, POLL_MS);
}

setTimeout(poll, POLL_MS);
