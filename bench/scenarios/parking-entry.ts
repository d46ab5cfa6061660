import type { Scenario } from '../run.ts';
import { writeBenchLot } from '../standalone.ts';

/**
 * Parking entries and exits on PostgreSQL: each of the 200 connections alternates an entry
 * (a new plate) and the exit of the ticket it just got (fee computed, a PENDING payment with its
 * payment page created in the payments module). Exits do not pay, so spots are not freed: every
 * entry of the run needs a spot of its own. The lot has 100 000 (the most a lot config may hold)
 * and rounds are 4 s: 2 s of warm-up and 3 × 4 s at the ~6 300 entries/s of a fast 2-core machine
 * (2026-11-25) take ~90 000. With 10 s rounds that machine ran the lot full in round 2, and the
 * 409s (plus the 400s of exits without a ticket) made the figures measure refusals. `verify`
 * fails a run whose lot ran full, so such figures are never taken for entries and exits.
 * (Paying at the exit would free the spots, but a paid exit is ~20 statements across payments,
 * the sandbox gateway and its webhook: ~700 paid exits/s, another benchmark.)
 */
const PLATE_PREFIX = `B${Date.now().toString(36).slice(-3).toUpperCase()}`;
let plates = 0;

const json = { 'content-type': 'application/json' };
/** Entries and exits are the panels' (an operator key with `parking:panel`: the development one). */
const panel = { ...json, 'x-operator-key': 'dev-operator-key' };

const scenario: Scenario = {
  description:
    'POST /api/v1/parking/entry then POST /api/v1/parking/exit of that ticket, alternating per connection, on PostgreSQL, vs a bare Fastify POST',
  services: 'parking',
  backends: { postgres: true },
  env: { PARKING_LOT_CONFIG: writeBenchLot(20, 5000) },
  baseline: { kind: 'post' },
  target: 0.2,
  connections: 200,
  duration: 4,
  // Every entry of the warm-up takes a spot too.
  warmup: 2,
  async prepare() {
    return {
      requests: [
        {
          method: 'POST',
          path: '/api/v1/parking/entry',
          headers: panel,
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
          headers: panel,
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
    headers: panel,
    body: JSON.stringify({ licensePlate: 'B12345', vehicleType: 'CAR' }),
  }),
  async verify(baseUrl) {
    const boards = (await (await fetch(`${baseUrl}/api/v1/parking/boards`)).json()) as {
      total: { availableSpots: Record<string, number>; totalSpots: Record<string, number> };
    };
    const free = Object.values(boards.total.availableSpots).reduce((a, b) => a + b, 0);
    const total = Object.values(boards.total.totalSpots).reduce((a, b) => a + b, 0);
    if (free === 0)
      throw new Error(
        `the lot ran full (${total} spots): entries were refused, so the figures do not measure entries and exits; run shorter rounds (--duration)`,
      );
    return [`lot after the run: ${total - free} of ${total} spots occupied`];
  },
};
export default scenario;
