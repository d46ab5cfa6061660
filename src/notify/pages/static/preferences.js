// Preferences form: saves through the JSON API (PATCH) and shows the answer in place; without
// JavaScript the same form posts to the page route instead. A refusal is shown at the fields it
// names, in the words the page carries (pages/words.ts: the server says the same without JavaScript).
const form = document.querySelector('[data-preferences]');
const result = document.querySelector('[data-result]');
const formError = document.querySelector('[data-form-error]');
const words = JSON.parse(document.querySelector('[data-field-words]').textContent);
const zone = form.elements.timezone;

// A user who never chose has UTC: suggest the browser's zone (saved only with the form).
const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
if (zone.dataset.suggestZone === 'yes' && browserZone && browserZone !== zone.value) {
  let option = [...zone.options].find((o) => o.value === browserZone);
  if (!option) {
    // The list may name it otherwise (Asia/Calcutta for Asia/Kolkata): the browser's name is added.
    option = new Option(browserZone);
    zone.add(option, 0);
  }
  option.selected = true;
  const hint = document.querySelector('[data-zone-hint]');
  hint.textContent = `This browser's zone (the user had UTC, the default); saved when you press Save.`;
  hint.hidden = false;
}

function show(tone, text) {
  result.className = `message ${tone}`;
  result.textContent = text;
  result.hidden = !text;
}

function clearErrors() {
  for (const element of form.querySelectorAll('[aria-invalid]')) element.removeAttribute('aria-invalid');
  for (const element of form.querySelectorAll('[data-error-for]')) element.textContent = '';
  formError.textContent = '';
  formError.hidden = true;
}

/** The API's {field, message} list as sentences at their fields; anything else above the form. */
function showErrors(errors, values) {
  const shown = new Map();
  for (const error of errors) {
    let field = String(error.field).replace(/^body\./, '');
    let message = words.messages[field];
    if (/go together/.test(error.message)) {
      field = values.quiet_hours_start ? 'quiet_hours_end' : 'quiet_hours_start';
      message = words.quietPair;
    }
    if (!words.labels[field] || !form.elements[field]) {
      formError.textContent = `${error.field} ${error.message}.`;
      formError.hidden = false;
      continue;
    }
    if (!shown.has(field)) shown.set(field, message ?? `${words.labels[field]} ${error.message}.`);
  }
  let first;
  for (const element of form.elements) {
    if (!shown.has(element.name)) continue;
    element.setAttribute('aria-invalid', 'true');
    form.querySelector(`[data-error-for="${element.name}"]`).textContent = shown.get(element.name);
    first ??= element;
  }
  first?.focus();
  return shown.size > 0 || !formError.hidden;
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const data = new FormData(form);
  const text = (name) => String(data.get(name) ?? '').trim() || null;
  const body = {
    push_enabled: data.has('push_enabled'),
    sms_enabled: data.has('sms_enabled'),
    email_enabled: data.has('email_enabled'),
    in_app_enabled: data.has('in_app_enabled'),
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
  clearErrors();
  show('ok', '');
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
    if (Array.isArray(answer.errors) && showErrors(answer.errors, body)) return;
    formError.textContent = answer.title ?? `Could not save (${response.status}).`;
    formError.hidden = false;
  } catch {
    formError.textContent = 'Could not reach the server; try again.';
    formError.hidden = false;
  } finally {
    button.disabled = false;
  }
});
