// Entry panel: plate + vehicle type → a ticket with its short code and QR, or "lot full" and no ticket.
import { localTime, postJson, problemText, show } from './panel.js';

const form = document.querySelector('[data-entry-form]');
const result = document.querySelector('[data-result]');
const { panel, timeZone } = form.dataset;
const idleReset = Number(form.dataset.idleReset);
const needs = [...form.querySelectorAll('input[name="needs"]')];
const hint = form.querySelector('[data-needs-hint]');
let resetTimer;

// The lot's rules, as the server rendered them: a need is offered only to the vehicles it fits
// (a bus fits large spots only), so the form never sends a combination the entry refuses.
function applyRules() {
  const vehicle = form.querySelector('input[name="vehicleType"]:checked')?.value;
  const refused = [];
  for (const box of needs) {
    const fits = box.dataset.vehicles.split(' ').includes(vehicle);
    box.disabled = !fits;
    if (!fits) {
      box.checked = false;
      refused.push(box.parentElement.textContent.trim());
    }
  }
  if (hint) {
    hint.textContent = refused.length
      ? `A ${vehicle.toLowerCase()} cannot use ${refused.join(' or ')} spots here.`
      : '';
  }
}
form.addEventListener('change', (event) => {
  if (event.target.name === 'vehicleType') applyRules();
});
applyRules();

// The next driver must not see the last one's ticket: it clears after a while.
function clearLater() {
  clearTimeout(resetTimer);
  resetTimer = setTimeout(() => {
    result.hidden = true;
    result.replaceChildren();
  }, idleReset);
}

function ticketQr(body) {
  const figure = document.createElement('figure');
  figure.className = 'ticket-qr';
  const image = document.createElement('img');
  image.src = `/api/v1/parking/tickets/${encodeURIComponent(body.ticketId)}/qr`;
  image.alt = `QR code of ticket ${body.code}`;
  image.width = 160;
  image.height = 160;
  const caption = document.createElement('figcaption');
  caption.textContent = 'Scan it at the exit, or type the code.';
  figure.append(image, caption);
  return figure;
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const data = new FormData(form);
  const button = form.querySelector('button');
  button.disabled = true;
  // The previous driver's ticket must not stay on the panel while the next car is served.
  result.hidden = true;
  result.replaceChildren();
  try {
    const { status, data: body } = await postJson('/api/v1/parking/entry', {
      licensePlate: data.get('licensePlate'),
      vehicleType: data.get('vehicleType'),
      needs: data.getAll('needs'),
      panelId: panel,
    });
    if (status === 201) {
      show(result, 'ok', 'Your ticket — the gate opens', [
        ['Ticket code', body.code, 'ticketCode'],
        ['Spot', `${body.spotId} (${body.spotType})`, 'spotId'],
        ['Floor', String(body.floor)],
        ['Plate', body.licensePlate],
        ['Entered', localTime(body.entryTime, timeZone)],
        'Keep the ticket: you need its code at the exit.',
      ]);
      result.querySelector('[data-ticket-code]')?.classList.add('ticket-code');
      result.dataset.ticketId = body.ticketId;
      result.append(ticketQr(body));
      form.reset();
      applyRules();
    } else if (body.code === 'parking_full') {
      show(result, 'bad full', 'Lot full', [
        problemText(body),
        'No ticket was issued; the gate stays closed.',
      ]);
    } else {
      show(result, 'bad', body.title ?? 'Entry refused', [problemText(body)]);
    }
  } catch {
    show(result, 'bad', 'No connection', ['Try again in a moment.']);
  } finally {
    button.disabled = false;
    clearLater();
  }
});
