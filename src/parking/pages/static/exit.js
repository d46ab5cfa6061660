// Exit panel: ticket (or lost ticket by plate) → amount → pay by card here or on the payment
// page → gate opens; a failed payment shows the error and the gate stays closed.
import { cardForm } from '/static/platform/card-form.js';
import { postJson, problemText, show } from './panel.js';

const root = document.querySelector('[data-exit]');
const { panel } = root.dataset;
const due = document.querySelector('[data-due]');
const result = document.querySelector('[data-result]');
const gate = document.querySelector('[data-gate]');
const payForm = document.querySelector('[data-pay-form]');
let current; // {ticketId, licensePlate, paymentId}
let events;

function field(name, value) {
  due.querySelector(`[data-${name}]`).textContent = value;
}

function openGate() {
  due.hidden = true;
  gate.hidden = false;
  show(result, 'ok', 'Paid — the gate opens', [
    ['Ticket', current.ticketId],
    ['Plate', current.licensePlate],
  ]);
  events?.close();
}

function showDue(body) {
  current = body;
  gate.hidden = true;
  if (body.status === 'COMPLETED') return openGate();
  field('amount', body.amount.toFixed(2));
  field('currency', body.currency);
  field('duration', body.duration);
  field('spot', body.spotId);
  field('plate', `${body.licensePlate}${body.kind === 'LOST' ? ' · lost ticket' : ''}`);
  due.querySelector('[data-payment-url]').href = body.paymentUrl;
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
    show(result, 'bad', 'Payment failed — the gate stays closed', [
      failed.reason ?? 'declined',
      'Show the amount again to retry.',
    ]);
  });
}

async function ask(url, body, headers) {
  const response = await postJson(url, { ...body, panelId: panel }, headers);
  if (response.ok) {
    showDue(response.data);
    if (response.status === 202)
      show(result, '', 'Waiting for the bank…', ['The gate opens as soon as the payment is confirmed.']);
  } else if (response.status === 402) {
    showDue(response.data);
    show(result, 'bad', 'Payment failed — the gate stays closed', [
      problemText(response.data),
      'Try another card.',
    ]);
  } else {
    due.hidden = true;
    show(result, 'bad', response.data.title ?? 'Refused', [problemText(response.data)]);
  }
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

const ticketForm = document.querySelector('[data-ticket-form]');
ticketForm.addEventListener(
  'submit',
  busy(ticketForm, (data) => ask('/api/v1/parking/exit', { ticketId: String(data.get('ticketId')).trim() })),
);

// Shown only to an attendant's session (the lost-ticket API needs parking:attendant).
const lostForm = document.querySelector('[data-lost-form]');
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
