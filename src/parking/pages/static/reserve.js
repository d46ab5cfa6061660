import { api, identity } from '/static/platform/guest.js';

// The reservation page: the browser's guest identity (platform guest.js: the booking pages' user),
// the form with a live quote and availability, and "My reservations" with cancel buttons.
// Times are typed and shown on the lot's wall clock (its zone), whatever the viewer's zone.
const form = document.querySelector('[data-reserve-form]');
const timeZone = form.dataset.timeZone;
const quote = form.querySelector('[data-quote]');
const list = document.querySelector('[data-mine]');
const empty = document.querySelector('[data-mine-empty]');
const LABELS = Object.fromEntries(
  [...form.spotType.options].map((option) => [option.value, option.textContent.trim().toLowerCase()]),
);
const STATUS = {
  BOOKED: 'Booked',
  HELD: 'Spot held',
  USED: 'Used',
  NO_SHOW: 'Lapsed (no-show)',
  CANCELLED: 'Cancelled',
};

/** This browser's guest (the same user as on the booking pages): its Authorization header. */
async function token() {
  const { token } = await identity();
  return { authorization: `Bearer ${token}` };
}

/** The wall-clock fields of an instant in the lot's zone. */
function wallClock(instant) {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(instant);
  return Object.fromEntries(parts.map((part) => [part.type, part.value]));
}

/** `2026-01-05T09:00` on the lot's clock → the instant (two passes settle a daylight-saving change). */
function lotInstant(value) {
  const [date, time] = value.split('T');
  const [year, month, day] = date.split('-').map(Number);
  const [hour, minute] = time.split(':').map(Number);
  const wanted = Date.UTC(year, month - 1, day, hour, minute);
  const offset = (at) => {
    const p = wallClock(new Date(at));
    return (
      Date.UTC(+p.year, +p.month - 1, +p.day, +p.hour, +p.minute, +p.second) - Math.floor(at / 1000) * 1000
    );
  };
  let instant = wanted - offset(wanted);
  instant = wanted - offset(instant);
  return new Date(instant);
}

function lotValue(instant) {
  const p = wallClock(instant);
  return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}`;
}

function fields() {
  if (!form.startsAt.value || !form.endsAt.value) return undefined;
  return {
    licensePlate: form.licensePlate.value,
    vehicleType: form.vehicleType.value,
    spotType: form.spotType.value,
    startsAt: lotInstant(form.startsAt.value).toISOString(),
    endsAt: lotInstant(form.endsAt.value).toISOString(),
  };
}

function clearErrors() {
  for (const element of form.querySelectorAll('[data-error-for]')) {
    element.hidden = true;
    element.textContent = '';
  }
  for (const element of form.querySelectorAll('[aria-invalid]')) element.removeAttribute('aria-invalid');
}

/** Where a problem belongs: the field its `errors` name, or the field its code is about. */
const FIELD_OF_CODE = {
  no_reservable_spot: 'spotType',
  needs_not_possible: 'spotType',
  reservation_overlaps: 'licensePlate',
};

function showProblem(problem) {
  const named = (problem.errors ?? []).map((error) => ({
    field: String(error.field ?? '').replace(/^(body|querystring)\./, ''),
    message: error.field === 'body.licensePlate' ? 'Enter 1 to 10 letters and digits' : error.message,
  }));
  const field = named[0]?.field || FIELD_OF_CODE[problem.code] || 'form';
  const target =
    form.querySelector(`[data-error-for="${field}"]`) ?? form.querySelector('[data-error-for="form"]');
  target.textContent = problem.code === 'validation_failed' && named[0] ? named[0].message : problem.detail;
  target.hidden = false;
  form.elements[field]?.setAttribute?.('aria-invalid', 'true');
}

/** Only the spot types that fit the chosen vehicle. */
function limitSpotTypes() {
  const vehicle = form.vehicleType.value;
  for (const option of form.spotType.options) {
    const fits = option.dataset.vehicles.split(' ').includes(vehicle);
    option.disabled = !fits;
    option.hidden = !fits;
  }
  if (form.spotType.selectedOptions[0]?.disabled) {
    const first = [...form.spotType.options].find((option) => !option.disabled);
    if (first) form.spotType.value = first.value;
  }
}

let asked = 0;
async function refreshQuote() {
  const wanted = fields();
  if (!wanted) return;
  const mine = ++asked;
  const query = new URLSearchParams({
    spotType: wanted.spotType,
    startsAt: wanted.startsAt,
    endsAt: wanted.endsAt,
    vehicleType: wanted.vehicleType,
  });
  const { ok, data } = await api('GET', `/api/v1/parking/reservations/availability?${query}`);
  if (mine !== asked) return; // a newer question is on its way
  clearErrors();
  if (!ok) {
    quote.textContent = '';
    showProblem(data);
    return;
  }
  const label = LABELS[data.spotType];
  const left =
    data.available === 0
      ? `No ${label} spot can be reserved for this whole window.`
      : `${data.available} of ${data.limit} reservable ${label} spots left for this window.`;
  quote.textContent = `${left} Price: ${data.quote.amount.toFixed(2)} ${data.quote.currency} (${data.quote.rule}), paid at the exit.`;
}

function describe(reservation) {
  const item = document.createElement('li');
  item.className = 'reservation';
  item.dataset.reservation = reservation.reservationId;
  item.dataset.status = reservation.status;
  const title = document.createElement('h3');
  title.id = `reservation-${reservation.reservationId}`;
  const status = document.createElement('span');
  status.className = `status ${reservation.status}`;
  status.textContent = STATUS[reservation.status];
  const type = LABELS[reservation.spotType] ?? reservation.spotType.toLowerCase();
  title.append(`${type.charAt(0).toUpperCase()}${type.slice(1)} spot `, status);
  const plate = document.createElement('p');
  const plateText = document.createElement('span');
  plateText.className = 'plate';
  plateText.textContent = reservation.licensePlate;
  plate.append('Plate ', plateText, ' — drive in with it, the entry recognises it.');
  const when = document.createElement('p');
  when.id = `reservation-${reservation.reservationId}-window`;
  when.textContent = `${reservation.local.startsAt} – ${reservation.local.endsAt}`;
  const detail = document.createElement('p');
  detail.className = 'muted';
  const price = `${reservation.quote.amount.toFixed(2)} ${reservation.quote.currency}`;
  detail.textContent = {
    BOOKED: `A spot is held for you shortly before the start. Come by ${reservation.local.holdUntil}. Price ${price}, paid at the exit.`,
    HELD: `Spot ${reservation.spotId} on floor ${reservation.floor} is kept for you until ${reservation.local.holdUntil}. Price ${price}, paid at the exit.`,
    USED: `Parked on spot ${reservation.spotId}.`,
    NO_SHOW: 'The vehicle did not come in time; nothing was charged.',
    CANCELLED: 'Cancelled; nothing was charged.',
  }[reservation.status];
  item.append(title, plate, when, detail);
  if (reservation.status === 'BOOKED' || reservation.status === 'HELD') {
    const cancel = document.createElement('button');
    cancel.type = 'button';
    cancel.className = 'secondary';
    cancel.textContent = 'Cancel reservation';
    // Which reservation it cancels: its title and window, read after the button's own words.
    cancel.setAttribute('aria-describedby', `${title.id} ${when.id}`);
    cancel.addEventListener('click', () => cancelReservation(reservation.reservationId, item));
    item.append(cancel);
  }
  return item;
}

async function loadMine() {
  const { ok, data } = await api('GET', '/api/v1/parking/reservations', undefined, await token());
  if (!ok) return;
  list.replaceChildren(...data.reservations.map(describe));
  empty.hidden = data.reservations.length > 0;
  document.body.dataset.reservations = String(data.reservations.length);
}

async function cancelReservation(id, item) {
  const { ok, data } = await api('DELETE', `/api/v1/parking/reservations/${id}`, undefined, await token());
  if (!ok) {
    const message = document.createElement('p');
    message.className = 'field-error';
    message.textContent = data.detail ?? 'Could not cancel; try again.';
    item.append(message);
    return;
  }
  await loadMine();
  void refreshQuote();
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  clearErrors();
  const wanted = fields();
  if (!wanted) {
    showProblem({
      errors: [{ field: form.startsAt.value ? 'endsAt' : 'startsAt', message: 'Pick a date and time' }],
      code: 'validation_failed',
    });
    return;
  }
  const button = form.querySelector('button[type="submit"]');
  button.disabled = true;
  try {
    const { ok, data } = await api('POST', '/api/v1/parking/reservations', wanted, await token());
    if (!ok) return showProblem(data);
    form.licensePlate.value = '';
    await loadMine();
    document
      .querySelector(`[data-reservation="${data.reservationId}"]`)
      ?.scrollIntoView({ block: 'nearest' });
    void refreshQuote();
  } finally {
    button.disabled = false;
  }
});

let timer;
form.addEventListener('change', (event) => {
  if (event.target.name === 'vehicleType') limitSpotTypes();
  if (event.target.name === 'startsAt' && form.startsAt.value) {
    // Keep the window's length when the start moves past the end.
    const start = lotInstant(form.startsAt.value);
    if (!form.endsAt.value || lotInstant(form.endsAt.value) <= start) {
      form.endsAt.value = lotValue(new Date(start.getTime() + 2 * 3_600_000));
    }
  }
  clearTimeout(timer);
  timer = setTimeout(refreshQuote, 150);
});

// Default window: from the next full hour after the next one, for two hours.
const start = new Date(Math.ceil(Date.now() / 3_600_000) * 3_600_000 + 3_600_000);
form.startsAt.value = lotValue(start);
form.endsAt.value = lotValue(new Date(start.getTime() + 2 * 3_600_000));
limitSpotTypes();
void refreshQuote();
void loadMine().then(() => {
  document.body.dataset.ready = 'true';
});
