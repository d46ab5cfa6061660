import { cardForm } from '/static/platform/card-form.js';

// The hosted payment page: posts the card to the payments API and shows the outcome.
// The card number only ever goes to our own API over the page's origin; nothing is kept here.
const root = document.getElementById('pay');
const form = document.getElementById('pay-form');
const entry = document.getElementById('pay-entry');
const result = document.getElementById('pay-result');
const errors = document.getElementById('pay-errors');
const button = document.getElementById('pay-button');
const paymentId = root.dataset.paymentId;
const card = form ? cardForm(form) : undefined;

function show(tone, text) {
  result.hidden = false;
  result.dataset.tone = tone;
  result.textContent = text;
}

function showErrors(list) {
  errors.replaceChildren(
    ...list.map((error) => {
      const item = document.createElement('li');
      item.textContent = `${error.field.replace('payment_details.', '').replace('_', ' ')} ${error.message}`;
      return item;
    }),
  );
  errors.hidden = list.length === 0;
}

// The same sentences as the server renders (pages/routes.ts `failedText`, `REPLACED`).
const REPLACED =
  'This payment was replaced or withdrawn and can no longer be paid. Nothing was charged: ask for the amount due now where you started.';

function failedText(message, retry) {
  const why = (message ?? 'The payment failed').replace(/\.$/, '');
  return retry ? `${why}. Nothing was charged: you can try another card.` : `${why}. Nothing was charged.`;
}

function finished(payment) {
  if (payment.status === 'COMPLETED') {
    const card = payment.card ? ` with ${payment.card.brand} •••• ${payment.card.last4}` : '';
    show('ok', `Paid${card}. Thank you!`);
    entry?.remove();
    return true;
  }
  if (payment.status === 'FAILED' && !payment.charge_outstanding) {
    const replaced = payment.failure_code === 'canceled';
    show('bad', replaced ? REPLACED : failedText(payment.failure_message, payment.allow_retry));
    if (!payment.allow_retry) entry?.remove();
    return true;
  }
  return false;
}

// While a charge is outstanding the bank's answer arrives by webhook; poll until it has.
async function waitForOutcome() {
  show('wait', 'Your payment is being processed. This page updates when the bank answers.');
  entry?.remove();
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const response = await fetch(`/api/v1/payments/${paymentId}`);
    if (!response.ok) continue;
    if (finished(await response.json())) return;
  }
}

form?.addEventListener('submit', async (event) => {
  event.preventDefault();
  showErrors([]);
  const details = card.read();
  if (!details) return;
  button.disabled = true;
  const body = { payment_method: 'CARD', payment_details: details };
  try {
    const response = await fetch(`/api/v1/payments/${paymentId}/pay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
      body: JSON.stringify(body),
    });
    const answer = await response.json();
    if (response.status === 200) finished(answer);
    else if (response.status === 202) await waitForOutcome();
    else if (response.status === 402) {
      show('bad', failedText(answer.detail, answer.retry_allowed));
      if (!answer.retry_allowed) entry.remove();
    } else if (answer.code === 'payment_not_payable') {
      // Withdrawn while this page was open (its owner made a new payment): no form any more.
      show('bad', REPLACED);
      entry.remove();
    } else if (answer.errors) {
      if (!card.showApiErrors(answer.errors)) showErrors(answer.errors);
    } else show('bad', answer.detail ?? 'The payment could not be made.');
  } catch {
    show('bad', 'The connection failed. Check your network and try again.');
  } finally {
    button.disabled = false;
  }
});

if (root.dataset.outstanding === 'true') waitForOutcome();
