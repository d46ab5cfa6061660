import type { Scenario } from '../run.ts';
import { writeBenchLot } from '../standalone.ts';

/**
 * Parking entries and exits on PostgreSQL: each of the 200 connections alternates an entry
 * (a new plate) and the exit of the ticket it just got (fee computed, a PENDING payment with its
 * payment page created in the payments module). Exits do not pay, so spots are not freed: the
 * lot is large enough (100 000 spots) for every entry of the run to get one — a 409 would count
 * as a non-2xx and show up in the table.
 */
const PLATE_PREFIX = `B${Date.now().toString(36).slice(-3).toUpperCase()}`;
let plates = 0;

const json = { 'content-type': 'application/json' };

const scenario: Scenario = {
  description:
    'POST /api/v1/parking/entry then POST /api/v1/parking/exit of that ticket, alternating per connection, on PostgreSQL, vs a bare Fastify POST',
  services: 'parking',
  backends: { postgres: true },
  env: { PARKING_LOT_CONFIG: writeBenchLot(20, 5000) },
  baseline: { kind: 'post' },
  target: 0.2,
  connections: 200,
  async prepare() {
    return {
      requests: [
        {
          method: 'POST',
          path: '/api/v1/parking/entry',
          headers: json,
          setupRequest: (request) => ({
            ...request,
            body: JSON.stringify({
              licensePlate: `${PLATE_PREFIX}${(plates++).toString(36)}`,
              vehicleType: 'CAR',
            }),
          }),
          onResponse: (status, body, context: { ticketId?: string }) => {
            context.ticketId = status === 201 ? JSON.parse(body).ticketId : undefined;
          },
        },
        {
          method: 'POST',
          path: '/api/v1/parking/exit',
          headers: json,
          // Without a ticket (the entry failed) the exit is a 400 and counts as non-2xx.
          setupRequest: (request, context: { ticketId?: string }) => ({
            ...request,
            body: JSON.stringify({ ticketId: context.ticketId ?? '-' }),
          }),
        },
      ],
    };
  },
  baselineRequest: () => ({
    method: 'POST',
    headers: json,
    body: JSON.stringify({ licensePlate: 'B12345', vehicleType: 'CAR' }),
  }),
  async verify(baseUrl) {
    const boards = (await (await fetch(`${baseUrl}/api/v1/parking/boards`)).json()) as {
      total: { availableSpots: Record<string, number>; totalSpots: Record<string, number> };
    };
    const free = Object.values(boards.total.availableSpots).reduce((a, b) => a + b, 0);
    const total = Object.values(boards.total.totalSpots).reduce((a, b) => a + b, 0);
    return [`lot after the run: ${total - free} of ${total} spots occupied`];
  },
};
export default scenario;
