// Helpers shared by the entry and exit panels.
export async function postJson(url, body, headers = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const data = await response.json().catch(() => ({}));
  return { status: response.status, ok: response.ok, data };
}

/** Shows a message in the panel's result box; kind is 'ok', 'bad' or ''. */
export function show(box, kind, title, lines = []) {
  box.hidden = false;
  box.className = `result message ${kind}`;
  box.replaceChildren();
  const heading = document.createElement('h2');
  heading.textContent = title;
  box.append(heading);
  for (const line of lines) {
    const p = document.createElement('p');
    if (Array.isArray(line)) {
      const [label, value, attribute] = line;
      p.append(`${label} `);
      const strong = document.createElement('strong');
      strong.textContent = value;
      if (attribute) strong.dataset[attribute] = '';
      p.append(strong);
    } else {
      p.textContent = line;
    }
    box.append(p);
  }
}

/** A time on the lot's clock with its zone, so a panel never shows the viewer's zone by mistake. */
export function localTime(iso, timeZone) {
  const time = new Intl.DateTimeFormat('en-US', { timeZone, dateStyle: 'medium', timeStyle: 'short' });
  return `${time.format(new Date(iso))} (${zoneName(iso, timeZone)})`;
}

function zoneName(iso, timeZone) {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'short' }).formatToParts(
    new Date(iso),
  );
  return parts.find((part) => part.type === 'timeZoneName')?.value ?? timeZone;
}

/** What a field's validation error means to a driver (the API names fields, people name things). */
const FIELD_WORDS = [
  [/ticketId/, 'Type the ticket code as printed on the ticket, for example ABCD-EFGH.'],
  [/licensePlate/, 'A licence plate is 1 to 10 letters and digits (spaces and dashes are fine).'],
  [/card_number/, 'Check the card number: 12 to 19 digits.'],
  [/exp_month|exp_year/, 'Check the card’s expiry date.'],
  [/cvc/, 'Check the security code (CVC): 3 or 4 digits on the back of the card.'],
  [/vehicleType|needs/, 'Choose the vehicle again.'],
  [/idempotency-key/, 'Press Pay again.'],
];

/** The gateway's failure codes (a payment failed on the driver's phone, for instance), in words. */
const DECLINES = {
  card_declined: 'The card was declined.',
  charge_expired: 'The bank did not confirm the payment in time.',
  canceled: 'The payment was withdrawn.',
};

export function declineText(reason) {
  return DECLINES[reason] ?? 'The card was declined.';
}

/** A problem+json answer in words for the panel: never a field path or an error code. */
export function problemText(data) {
  if (data?.errors?.length) {
    const lines = new Set();
    for (const error of data.errors) {
      const words = FIELD_WORDS.find(([field]) => field.test(error.field));
      lines.add(words ? words[1] : 'Check what you typed and try again.');
    }
    return [...lines].join(' ');
  }
  if (data?.status >= 500)
    return 'Something went wrong on our side. Try again in a moment, or call an attendant.';
  return data?.detail ?? data?.title ?? 'Something went wrong. Try again, or call an attendant.';
}
