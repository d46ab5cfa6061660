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
  seats = data.seats;
  document.querySelectorAll('.currency').forEach((el) => {
    el.textContent = data.currency;
  });
  for (const label of [...picked]) {
    if (seats.find((seat) => seat.seat_id === label)?.status !== 'AVAILABLE') picked.delete(label);
  }
  render();
}

function render() {
  const rows = new Map();
  for (const seat of seats) {
    if (!rows.has(seat.row)) rows.set(seat.row, []);
    rows.get(seat.row).push(seat);
  }
  const widest = Math.max(...[...rows.values()].map((row) => row.length));
  const lines = [...rows.entries()].map(([row, list]) => {
    const line = document.createElement('div');
    line.className = 'seat-row';
    line.style.gridTemplateColumns = `2rem repeat(${widest}, minmax(1.6rem, 2.2rem))`;
    const label = document.createElement('span');
    label.className = 'row-label';
    label.textContent = row;
    line.append(label);
    const offset = Math.floor((widest - list.length) / 2);
    list.forEach((seat, index) => {
      const button = document.createElement('button');
      button.type = 'button';
      button.className = `seat ${seat.seat_type.toLowerCase()}`;
      button.dataset.seat = seat.seat_id;
      button.textContent = String(seat.number);
      button.title = `${seat.seat_id} · ${seat.seat_type.toLowerCase()} · ${money(seat.price)}`;
      button.setAttribute(
        'aria-label',
        `Seat ${seat.seat_id}, ${seat.status === 'AVAILABLE' ? 'available' : 'taken'}, ${money(seat.price)}`,
      );
      if (index === 0 && offset > 0) button.style.gridColumnStart = String(offset + 2);
      if (seat.status !== 'AVAILABLE') {
        button.classList.add('taken');
        button.disabled = true;
      } else if (picked.has(seat.seat_id)) {
        button.classList.add('selected');
        button.setAttribute('aria-pressed', 'true');
      } else {
        button.setAttribute('aria-pressed', 'false');
      }
      if (hold) button.disabled = true;
      line.append(button);
    });
    return line;
  });
  map.replaceChildren(...lines);
  map.setAttribute('aria-busy', 'false');
  const chosen = seats.filter((seat) => picked.has(seat.seat_id));
  selectedText.textContent = chosen.length ? chosen.map((seat) => seat.seat_id).join(', ') : 'none';
  selectedTotal.textContent = money(chosen.reduce((sum, seat) => sum + seat.price, 0));
  holdButton.disabled = chosen.length === 0 || !!hold || app.dataset.status === 'CANCELLED';
}

map.addEventListener('click', (event) => {
  const button = event.target.closest('button.seat');
  if (!button || button.disabled || hold) return;
  const label = button.dataset.seat;
  if (picked.has(label)) picked.delete(label);
  else if (picked.size >= maxSeats) return say(`At most ${maxSeats} seats per booking`, 'bad');
  else picked.add(label);
  say('');
  render();
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
      payment_details: {
        card_number: String(form.get('card_number')).replace(/[\s-]/g, ''),
        exp_month: Number(form.get('exp_month')),
        exp_year: Number(form.get('exp_year')),
        cvc: String(form.get('cvc')),
      },
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
  if (status === 402) return endCheckout(`${data.detail} The seats were released.`, 'bad');
  if (status === 410) return endCheckout(data.detail ?? 'The hold expired.', 'bad');
  // Bad card details and the like: nothing changed, fix and pay again (a new attempt gets a new key).
  paymentKey = crypto.randomUUID();
  say(data.detail ?? 'The payment did not go through', 'bad');
});

document.getElementById('release').addEventListener('click', async () => {
  await api('DELETE', `/api/v1/holds/${hold.hold_id}`, undefined, auth);
  endCheckout('Seats released.', '');
});

if (app.dataset.hot === 'true' && !admission() && app.dataset.status !== 'CANCELLED') {
  location.href = `/shows/${showId}/queue`;
} else {
  await load();
  // Keep the map fresh while choosing (the seat cache lives 30 s and is dropped on every change).
  refreshing = setInterval(() => {
    if (!hold && document.visibilityState === 'visible') load();
  }, 10_000);
  addEventListener('pagehide', () => clearInterval(refreshing));
}
