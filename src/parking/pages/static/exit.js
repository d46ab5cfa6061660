// Exit panel: ticket code (or lost ticket by plate) → amount → pay by card here or on the phone
// (QR of the payment page) → gate opens; a failed payment shows the error and the gate stays
// closed. The panel serves one driver after another: it clears itself a while after the gate
// opened, and when left untouched (the next driver never sees the last one's ticket or card).
import { cardForm } from '/static/platform/card-form.js';
import { declineText, localTime, postJson, problemText, show } from './panel.js';

const root = document.querySelector('[data-exit]');
const { panel, timeZone } = root.dataset;
const idleReset = Number(root.dataset.idleReset);
const doneReset = Number(root.dataset.doneReset);
const due = document.querySelector('[data-due]');
const result = document.querySelector('[data-result]');
const gate = document.querySelector('[data-gate]');
const payForm = document.querySelector('[data-pay-form]');
const ticketForm = document.querySelector('[data-ticket-form]');
const lostForm = document.querySelector('[data-lost-form]');
const paymentQr = document.querySelector('[data-payment-qr]');
let current; // {ticketId, licensePlate, paymentId}
let events;
let resetTimer;

function field(name, value) {
  due.querySelector(`[data-${name}]`).textContent = value;
}

/** Back to "scan your ticket" for the next driver. */
function resetPanel() {
  clearTimeout(resetTimer);
  resetTimer = undefined;
  events?.close();
  events = undefined;
  current = undefined;
  due.hidden = true;
  gate.hidden = true;
  result.hidden = true;
  result.replaceChildren();
  paymentQr.removeAttribute('src');
  ticketForm.reset();
  lostForm?.reset();
  // The card block may be another component; whatever it is, the last driver's card must go.
  document.querySelector('[data-pay-form]')?.reset();
  root.dataset.state = 'ready';
  ticketForm.querySelector('input')?.focus();
}

function resetAfter(ms) {
  clearTimeout(resetTimer);
  resetTimer = setTimeout(resetPanel, ms);
}

// Any touch or key press means a driver is still here: the idle wait starts again.
for (const type of ['pointerdown', 'keydown', 'input']) {
  document.addEventListener(type, () => {
    if (root.dataset.state === 'busy') resetAfter(idleReset);
  });
}

/** The printable receipt of the ticket just paid (public to whoever holds the ticket). */
function receiptLink(ticketId) {
  const p = document.createElement('p');
  const link = document.createElement('a');
  link.href = `/parking/receipts/${encodeURIComponent(ticketId)}`;
  link.dataset.receiptLink = '';
  link.textContent = 'Receipt (print or keep the link)';
  p.append(link);
  result.append(p);
}

function openGate() {
  due.hidden = true;
  gate.hidden = false;
  show(result, 'ok', 'Paid — the gate opens', [
    ['Ticket', current.code ?? current.ticketId],
    ['Plate', current.licensePlate],
  ]);
  receiptLink(current.ticketId);
  events?.close();
  root.dataset.state = 'done';
  resetAfter(doneReset);
}

/** A ticket paid before (on a phone, or a second scan): say when; the gate does not open twice. */
function alreadyPaid(body) {
  due.hidden = true;
  gate.hidden = true;
  const when = body.paidAt ? localTime(body.paidAt, timeZone) : 'an earlier visit';
  show(result, 'ok', `Already paid — gate opened at ${when}`, [
    ['Ticket', body.code ?? body.ticketId],
    ['Plate', body.licensePlate],
    'If the barrier is still closed, press the help button to call an attendant.',
  ]);
  receiptLink(body.ticketId);
  root.dataset.state = 'done';
  resetAfter(doneReset);
}

function showDue(body) {
  current = body;
  gate.hidden = true;
  root.dataset.state = 'busy';
  resetAfter(idleReset);
  if (body.status === 'COMPLETED') return openGate();
  field('amount', body.amount.toFixed(2));
  field('currency', body.currency);
  field('duration', body.duration);
  field('spot', body.spotId);
  field('plate', `${body.licensePlate}${body.kind === 'LOST' ? ' · lost ticket' : ''}`);
  due.querySelector('[data-payment-url]').href = body.paymentUrl;
  // The QR of the payment page is made by the server (SVG); the payment id makes a new amount a new image.
  // A declined payment is still payable (another card, here or on the phone): its QR stays.
  if (body.status === 'PENDING' || body.status === 'FAILED') {
    paymentQr.src = `/api/v1/parking/tickets/${encodeURIComponent(body.ticketId)}/payment-qr?payment=${encodeURIComponent(body.paymentId)}`;
  }
  due.hidden = false;
  result.hidden = true;
  // The driver may pay on the payment page instead: the gate opens when that payment completes.
  events?.close();
  events = new EventSource(`/api/v1/parking/tickets/${encodeURIComponent(body.ticketId)}/events`);
  events.addEventListener('gate_open', openGate);
  events.addEventListener('ticket', (event) => {
    if (JSON.parse(event.data).status === 'PAID') openGate();
  });
  events.addEventListener('payment_failed', (event) => {
    const failed = JSON.parse(event.data);
    // A withdrawn older payment of the ticket fails too; only the one shown here matters.
    if (failed.paymentId !== current.paymentId) return;
    // The same words as the 402 answer to a card here (this event may arrive before or after it).
    show(result, 'bad', 'Payment failed — the gate stays closed', [
      failed.reason === 'canceled'
        ? `${declineText(failed.reason)} Nothing was charged. Press "Show amount" again for the amount due now.`
        : `${declineText(failed.reason)} Nothing was charged and the gate stays closed: try another card, or pay on your phone.`,
    ]);
  });
}

async function ask(url, body, headers, lookup = false) {
  const response = await postJson(url, { ...body, panelId: panel }, headers);
  if (response.ok) {
    if (lookup && response.data.status === 'COMPLETED') return alreadyPaid(response.data);
    showDue(response.data);
    if (response.status === 202)
      show(result, '', 'Waiting for the bank…', ['The gate opens as soon as the payment is confirmed.']);
  } else if (response.status === 402) {
    // The declined payment stays payable: the next card here, or the phone QR, pays that one.
    showDue({ ...response.data, status: response.data.paymentStatus });
    show(result, 'bad', 'Payment failed — the gate stays closed', [problemText(response.data)]);
  } else {
    due.hidden = true;
    show(result, 'bad', titleOf(response.data), [problemText(response.data)]);
    root.dataset.state = 'busy';
    resetAfter(idleReset);
  }
}

function titleOf(problem) {
  if (problem?.code === 'ticket_not_found') return 'Ticket not found';
  if (problem?.code === 'vehicle_not_found') return 'Vehicle not found';
  if (problem?.status === 400) return 'Please check what you typed';
  return problem?.title ?? 'Refused';
}

function busy(form, work) {
  return async (event) => {
    event.preventDefault();
    const button = form.querySelector('button');
    button.disabled = true;
    try {
      await work(new FormData(form));
    } catch {
      show(result, 'bad', 'No connection', ['Try again in a moment.']);
    } finally {
      button.disabled = false;
    }
  };
}

ticketForm.addEventListener(
  'submit',
  busy(ticketForm, (data) =>
    ask('/api/v1/parking/exit', { ticketId: String(data.get('ticketId')).trim() }, {}, true),
  ),
);

// Shown only to an attendant's session (the lost-ticket API needs parking:attendant).
lostForm?.addEventListener(
  'submit',
  busy(lostForm, (data) => ask('/api/v1/parking/tickets/lost', { licensePlate: data.get('licensePlate') })),
);

const card = cardForm(payForm);
payForm.addEventListener(
  'submit',
  busy(payForm, async () => {
    // The one card form: checked here as the payments API checks it; nothing is sent until right.
    const payment = card.read();
    if (!payment) return;
    // A new key per press of "Pay": a retry of the same press (network) is never a second charge.
    const headers = { 'idempotency-key': crypto.randomUUID() };
    // By ticket id for a lost ticket too: it pays the LOST payment the attendant asked for, and
    // the panel's own scope (parking:panel) is enough for that.
    await ask('/api/v1/parking/exit', { ticketId: current.ticketId, payment }, headers);
  }),
);

root.dataset.state = 'ready';
