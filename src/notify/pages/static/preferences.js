// Preferences form: saves through the JSON API (PATCH) and shows the answer in place; without
// JavaScript the same form posts to the page route instead.
const form = document.querySelector('[data-preferences]');
const result = document.querySelector('[data-result]');

function show(tone, text) {
  result.className = `message ${tone}`;
  result.textContent = text;
  result.hidden = false;
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const data = new FormData(form);
  const text = (name) => String(data.get(name) ?? '').trim() || null;
  const body = {
    push_enabled: data.has('push_enabled'),
    sms_enabled: data.has('sms_enabled'),
    email_enabled: data.has('email_enabled'),
    quiet_hours_start: text('quiet_hours_start'),
    quiet_hours_end: text('quiet_hours_end'),
    email: text('email'),
    phone: text('phone'),
    locale: text('locale'),
  };
  // The API requires a time zone; an emptied field leaves the stored one as it is.
  if (text('timezone')) body.timezone = text('timezone');
  const button = form.querySelector('button[type=submit]');
  button.disabled = true;
  try {
    const response = await fetch(
      `/api/users/${encodeURIComponent(form.dataset.user)}/notification-preferences`,
      {
        method: 'PATCH',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
      },
    );
    const answer = await response.json().catch(() => ({}));
    if (response.ok) return show('ok', 'Saved.');
    const fields = (answer.errors ?? []).map((e) => `${e.field} ${e.message}`).join('; ');
    show('bad', fields || answer.detail || `Could not save (${response.status})`);
  } catch {
    show('bad', 'Could not reach the server; try again.');
  } finally {
    button.disabled = false;
  }
});
