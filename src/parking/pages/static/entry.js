// Entry panel: plate + vehicle type → a ticket with its spot, or "lot full" and no ticket.
import { localTime, postJson, problemText, show } from './panel.js';

const form = document.querySelector('[data-entry-form]');
const result = document.querySelector('[data-result]');
const { panel, timeZone } = form.dataset;

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
        ['Ticket', body.ticketId, 'ticketId'],
        ['Spot', `${body.spotId} (${body.spotType})`, 'spotId'],
        ['Floor', String(body.floor)],
        ['Plate', body.licensePlate],
        ['Entered', localTime(body.entryTime, timeZone)],
        'Keep the ticket: you need its number at the exit.',
      ]);
      form.reset();
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
  }
});
