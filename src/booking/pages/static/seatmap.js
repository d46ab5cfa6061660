import { cardForm } from '/static/platform/card-form.js';
import { admissionKey, api, identity, money } from './common.js';

/**
 * The seat map: pick seats, hold them (all or nothing, with a countdown), pay with a card.
 * Hot shows need an admission token from the waiting room first.
 */
const app = document.getElementById('seatmap-app');
const showId = app.dataset.showId;
const maxSeats = Number(app.dataset.maxSeats);
const map = document.getElementById('seatmap');
const selectedText = document.getElementById('selected-seats');
const selectedTotal = document.getElementById('selected-total');
const holdButton = document.getElementById('hold');
const selection = document.getElementById('selection');
const checkout = document.getElementById('checkout');
const countdown = document.getElementById('countdown');
const message = document.getElementById('message');
const payForm = document.getElementById('pay-form');
const payButton = document.getElementById('pay');
const card = cardForm(payForm);
const { token: userToken } = await identity();
// Holds, payments and releases are this browser's user's: the token says who that is.
const auth = { authorization: `Bearer ${userToken}` };

let seats = [];
const picked = new Set();
let hold;
let ticking;
let refreshing;
let paymentKey;

function admission() {
  if (app.dataset.hot !== 'true') return undefined;
  try {
    const stored = JSON.parse(sessionStorage.getItem(admissionKey(showId)) ?? 'null');
    if (stored && new Date(stored.until).getTime() > Date.now()) return stored.token;
  } catch {}
  return undefined;
}

function say(text, tone = '') {
  message.textContent = text;
  message.className = `status ${tone}`;
}

async function load() {
  const { ok, data } = await api('GET', `/api/v1/shows/${showId}/seats`);
  if (!ok) return say(data.detail ?? 'Could not load the seats', 'bad');
  apply(data);
}

/** A seat map (loaded, or pushed live): picks that someone else took meanwhile are dropped, by name. */
function apply(data) {
  seats = data.seats;
  document.querySelectorAll('.currency').forEach((el) => {
    el.textContent = data.currency;
  });
  const lost = [];
  for (const label of [...picked]) {
    if (seats.find((seat) => seat.seat_id === label)?.status !== 'AVAILABLE') {
      picked.delete(label);
      lost.push(label);
    }
  }
  if (lost.length > 0 && !hold) {
    say(`Sorry, ${lost.join(', ')} ${lost.length > 1 ? 'were' : 'was'} just taken by someone else.`, 'bad');
  }
  render();
  legendPrices();
}

/** The price tiers of the show (seat type and price) in the legend, not only in tooltips. */
function legendPrices() {
  const list = document.getElementById('legend-prices');
  const tiers = new Map();
  for (const seat of seats) {
    const key = `${seat.seat_type}:${seat.price}`;
    if (!tiers.has(key)) tiers.set(key, seat);
  }
  const sorted = [...tiers.values()].sort((a, b) => a.price - b.price);
  const title = document.createElement('li');
  title.className = 'legend-title';
  title.setAttribute('aria-hidden', 'true');
  title.textContent = 'Prices:';
  list.replaceChildren(
    title,
    ...sorted.map((seat) => {
      const item = document.createElement('li');
      item.dataset.tier = seat.seat_type;
      item.dataset.price = String(seat.price);
      const sample = document.createElement('span');
      sample.className = `seat sample ${seat.seat_type.toLowerCase()}`;
      const name = TYPE_NAMES[seat.seat_type] ?? seat.seat_type.toLowerCase();
      item.append(sample, ` ${name[0].toUpperCase()}${name.slice(1)} ${money(seat.price)}`);
      return item;
    }),
  );
}

const TYPE_NAMES = {
  REGULAR: 'regular',
  PREMIUM: 'premium',
  RECLINER: 'recliner',
  WHEELCHAIR: 'wheelchair space',
  COMPANION: 'companion seat',
};
// The seat that takes Tab into the map (one tab stop; arrow keys move within it).
let focusLabel;

/**
 * Availability is the seat's fill (available, your pick, taken) and its type is the shape and
 * border (seatmap in booking.css), as the legend shows. Each seat is a button named
 * "Row C, seat 7, premium, available, 280.00" with aria-pressed when it can be picked.
 */
function render() {
  const hadFocus = map.contains(document.activeElement);
  const rows = new Map();
  for (const seat of seats) {
    if (!rows.has(seat.row)) rows.set(seat.row, []);
    rows.get(seat.row).push(seat);
  }
  // A seat's column is its number plus the aisles before it; rows are centred on the widest.
  const span = (list) => Math.max(...list.map((seat) => seat.column ?? seat.number));
  const widest = Math.max(...[...rows.values()].map(span));
  const pickable = (seat) => seat.status === 'AVAILABLE' && !hold;
  if (!seats.some((seat) => seat.seat_id === focusLabel && pickable(seat))) {
    focusLabel = seats.find(pickable)?.seat_id;
  }
  const lines = [...rows.entries()].map(([row, list]) => {
    const line = document.createElement('div');
    line.className = 'seat-row';
    line.setAttribute('role', 'group');
    line.setAttribute('aria-label', `Row ${row}`);
    line.style.gridTemplateColumns = `var(--row-label) repeat(${widest}, var(--seat-size)) var(--row-label)`;
    const offset = Math.floor((widest - span(list)) / 2);
    const label = document.createElement('span');
    label.className = 'row-label';
    label.setAttribute('aria-hidden', 'true');
    label.textContent = row;
    line.append(label);
    for (const seat of list) {
      const button = document.createElement('button');
      // The user's own held seats read BOOKED on the public map: they are theirs, not taken.
      const mine = hold?.seats.includes(seat.seat_id);
      const state =
        mine || picked.has(seat.seat_id) ? 'selected' : seat.status !== 'AVAILABLE' ? 'taken' : 'available';
      const type = TYPE_NAMES[seat.seat_type] ?? seat.seat_type.toLowerCase();
      button.type = 'button';
      button.className = `seat ${seat.seat_type.toLowerCase()} ${state}`;
      button.dataset.seat = seat.seat_id;
      button.dataset.row = row;
      button.textContent = String(seat.number);
      button.title = `${seat.seat_id} · ${type} · ${money(seat.price)}`;
      const said = { available: 'available', selected: hold ? 'held for you' : 'your pick', taken: 'taken' }[
        state
      ];
      button.setAttribute(
        'aria-label',
        `Row ${row}, seat ${seat.number}, ${type}, ${said}, ${money(seat.price)}`,
      );
      button.style.gridColumnStart = String((seat.column ?? seat.number) + offset + 1);
      if (state === 'taken') button.disabled = true;
      else button.setAttribute('aria-pressed', String(state === 'selected'));
      if (hold) button.disabled = true;
      button.tabIndex = seat.seat_id === focusLabel ? 0 : -1;
      line.append(button);
    }
    const end = label.cloneNode(true);
    end.classList.add('end');
    end.style.gridColumnStart = String(widest + 2);
    line.append(end);
    return line;
  });
  map.replaceChildren(...lines);
  map.setAttribute('aria-busy', 'false');
  const types = new Set(seats.map((seat) => seat.seat_type));
  document.querySelectorAll('.legend [data-type]').forEach((item) => {
    item.hidden = !types.has(item.dataset.type);
  });
  // A refresh replaces the buttons: keep the keyboard where it was.
  if (hadFocus) map.querySelector(`button.seat[tabindex="0"]`)?.focus();
  const chosen = seats.filter((seat) => picked.has(seat.seat_id));
  selectedText.textContent = chosen.length ? chosen.map((seat) => seat.seat_id).join(', ') : 'none';
  selectedTotal.textContent = money(chosen.reduce((sum, seat) => sum + seat.price, 0));
  holdButton.disabled = chosen.length === 0 || !!hold || app.dataset.status === 'CANCELLED';
}

function toggle(button) {
  if (!button || button.disabled || hold) return;
  const label = button.dataset.seat;
  focusLabel = label;
  if (picked.has(label)) picked.delete(label);
  else if (picked.size >= maxSeats) return say(`At most ${maxSeats} seats per booking`, 'bad');
  else picked.add(label);
  say('');
  render();
}

map.addEventListener('click', (event) => toggle(event.target.closest('button.seat')));

/** Arrow keys move between pickable seats (left/right in a row, up/down to the nearest seat). */
map.addEventListener('keydown', (event) => {
  const current = event.target.closest('button.seat');
  if (!current) return;
  const open = [...map.querySelectorAll('button.seat:not([disabled])')];
  const rowOf = (button) => button.dataset.row;
  const column = (button) => Number(button.style.gridColumnStart);
  const inRow = open.filter((button) => rowOf(button) === rowOf(current));
  let next;
  if (event.key === 'ArrowLeft') next = inRow[inRow.indexOf(current) - 1];
  else if (event.key === 'ArrowRight') next = inRow[inRow.indexOf(current) + 1];
  else if (event.key === 'Home') next = inRow[0];
  else if (event.key === 'End') next = inRow.at(-1);
  else if (event.key === 'ArrowUp' || event.key === 'ArrowDown') {
    const rows = [...new Set(open.map(rowOf))];
    const target = rows[rows.indexOf(rowOf(current)) + (event.key === 'ArrowUp' ? -1 : 1)];
    const candidates = open.filter((button) => rowOf(button) === target);
    next = candidates.sort(
      (a, b) => Math.abs(column(a) - column(current)) - Math.abs(column(b) - column(current)),
    )[0];
  } else return;
  event.preventDefault();
  if (!next) return;
  current.tabIndex = -1;
  next.tabIndex = 0;
  focusLabel = next.dataset.seat;
  next.focus();
  next.scrollIntoView({ block: 'nearest', inline: 'nearest' });
});

holdButton.addEventListener('click', async () => {
  holdButton.disabled = true;
  const token = admission();
  const { status, data } = await api(
    'POST',
    `/api/v1/shows/${showId}/hold`,
    { seat_ids: [...picked], ...(token ? { admission_token: token } : {}) },
    auth,
  );
  if (status === 201) return resume(data);
  // This browser already holds seats of this show (e.g. from before a reload): carry on with them.
  if (status === 409 && data.code === 'hold_limit' && data.limit === 'per_show') {
    const earlier = await api('GET', `/api/v1/holds/${data.hold_ids[0]}`, undefined, auth);
    if (earlier.ok && earlier.data.status === 'HELD') return resume(earlier.data);
  }
  if (status === 403 && data.code === 'admission_required') {
    location.href = `/shows/${showId}/queue`;
    return;
  }
  if (status === 409 && data.code === 'seats_unavailable') {
    say(
      `Sorry, ${data.seats.join(', ')} ${data.seats.length > 1 ? 'were' : 'was'} just taken. Pick again.`,
      'bad',
    );
    for (const label of data.seats) picked.delete(label);
  } else {
    say(data.detail ?? 'Could not hold the seats', 'bad');
  }
  await load();
});

function resume(held) {
  hold = held;
  paymentKey = crypto.randomUUID();
  startCheckout();
}

function startCheckout() {
  selection.hidden = true;
  checkout.hidden = false;
  document.getElementById('held-seats').textContent = hold.seats.join(', ');
  document.getElementById('held-total').textContent = `${money(hold.total_amount)} ${hold.currency}`;
  say(`Seats ${hold.seats.join(', ')} are held for you.`, 'ok');
  render();
  tick();
  ticking = setInterval(tick, 1000);
  document.getElementById('card').focus();
}

function tick() {
  const left = Math.max(0, new Date(hold.expires_at).getTime() - Date.now());
  const minutes = Math.floor(left / 60_000);
  const seconds = Math.floor((left % 60_000) / 1000);
  countdown.textContent = `${String(minutes).padStart(2, '0')}:${String(seconds).padStart(2, '0')}`;
  countdown.classList.toggle('urgent', left < 60_000);
  if (left === 0) endCheckout('Your hold expired and the seats were released. Pick again.', 'bad');
}

function endCheckout(text, tone) {
  clearInterval(ticking);
  hold = undefined;
  picked.clear();
  checkout.hidden = true;
  selection.hidden = false;
  say(text, tone);
  load();
}

payForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const details = card.read();
  if (!details) return say('Check the card details.', 'bad');
  payButton.disabled = true;
  say('Paying…');
  const form = new FormData(payForm);
  const email = String(form.get('email') ?? '').trim();
  const { status, data } = await api(
    'POST',
    '/api/v1/bookings',
    {
      hold_id: hold.hold_id,
      payment_method: 'CARD',
      payment_details: details,
      ...(email ? { contact: { email } } : {}),
    },
    { ...auth, 'idempotency-key': paymentKey },
  );
  payButton.disabled = false;
  if (status === 201 || status === 202) {
    clearInterval(ticking);
    location.href = `/bookings/${data.booking_id}`;
    return;
  }
  if (status === 402 && data.hold_status === 'HELD') {
    // Declined: the seats stay held until the hold's own end; another card is a new attempt.
    hold = { ...hold, expires_at: data.hold_expires_at };
    paymentKey = crypto.randomUUID();
    tick();
    say(data.detail, 'bad');
    document.getElementById('card').focus();
    return;
  }
  if (status === 402) return endCheckout(data.detail, 'bad');
  if (status === 410) return endCheckout(data.detail ?? 'The hold expired.', 'bad');
  // Bad card details and the like: nothing changed, fix and pay again (a new attempt gets a new key).
  paymentKey = crypto.randomUUID();
  say(
    card.showApiErrors(data.errors)
      ? 'Check the card details.'
      : (data.detail ?? 'The payment did not go through'),
    'bad',
  );
});

document.getElementById('release').addEventListener('click', async () => {
  await api('DELETE', `/api/v1/holds/${hold.hold_id}`, undefined, auth);
  endCheckout('Seats released.', '');
});

/** The user's live hold of this show, if any: a reload or Back carries on with it. */
async function liveHold() {
  const { ok, data } = await api('GET', `/api/v1/holds?show_id=${showId}`, undefined, auth);
  return ok ? data.holds[0] : undefined;
}

const resumed = await liveHold();
if (!resumed && app.dataset.hot === 'true' && !admission() && app.dataset.status !== 'CANCELLED') {
  location.href = `/shows/${showId}/queue`;
} else {
  await load();
  if (resumed) resume(resumed);
  // Live seat status: the server pushes the map after every hold, booking and release of the show
  // (whoever made it), so seats others take turn taken while you look.
  const live = new EventSource(`/api/v1/shows/${showId}/seats/events`);
  live.addEventListener('seats', (event) => {
    apply(JSON.parse(event.data));
    map.dataset.live = 'true';
  });
  // Should the stream be refused (too many open from one address), read the map now and then.
  live.addEventListener('error', () => {
    if (live.readyState !== EventSource.CLOSED || refreshing) return;
    refreshing = setInterval(() => {
      if (!hold && document.visibilityState === 'visible') load();
    }, 10_000);
  });
  addEventListener('pagehide', () => {
    live.close();
    clearInterval(refreshing);
  });
}
