import assert from 'node:assert/strict';
import { DEV_KEYS } from '../../src/platform/auth/keys.ts';
import type { RunningServer } from '../support/browser.ts';
import { lotJson, writeLot } from '../support/parking.ts';
import { type Answer, withPg } from './harness.ts';

/**
 * Parking entries on a lot large enough never to fill: each one takes a spot in one transaction.
 * The loads run for a time, not a count, so a faster machine parks more: 3 000 spots ran full
 * (617 × 409 in the PostgreSQL fault test, 2026-11-25); 50 000 leaves ten times the most seen.
 */
export const parkingEnv = () => ({
  PARKING_LOT_CONFIG: writeLot(lotJson({ floors: [{ floor: 1, spots: { COMPACT: 50_000 } }] })),
});

/** Distinct plates per load (`tag` keeps two loads apart). */
export const plate = (tag: string) => (counter: number) => `${tag}${counter.toString(36)}`.toUpperCase();

export const enterCar = (server: RunningServer) => (licensePlate: string) =>
  fetch(`${server.url}/api/v1/parking/entry`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-operator-key': DEV_KEYS.operator },
    body: JSON.stringify({ licensePlate, vehicleType: 'CAR' }),
  });

/** Every ticket answered 201 exists and is ACTIVE on its spot; no spot holds two cars. */
export async function assertTicketsKept(server: RunningServer, schema: string, answers: Answer[]) {
  const accepted = answers.filter((answer) => answer.status === 201);
  assert.ok(accepted.length > 0, 'the load parked nothing');
  for (const answer of accepted) {
    const { ticketId, spotId } = JSON.parse(answer.body) as { ticketId: string; spotId: string };
    const response = await fetch(`${server.url}/api/v1/parking/tickets/${ticketId}`);
    assert.equal(response.status, 200, `accepted ticket ${ticketId} is lost`);
    const ticket = (await response.json()) as { spotId: string; status: string };
    assert.deepEqual([ticket.spotId, ticket.status], [spotId, 'ACTIVE']);
  }
  return withPg(async (client) => {
    const doubled = await client.query(
      `select spot_id from "${schema}".parking_tickets where status = 'ACTIVE' group by spot_id having count(*) > 1`,
    );
    assert.equal(doubled.rowCount, 0, 'a spot was given twice');
    const { rows } = await client.query(`select count(*)::int as n from "${schema}".parking_tickets`);
    const stored = rows[0].n as number;
    assert.ok(
      stored >= accepted.length && stored <= answers.length,
      `${stored} tickets for ${accepted.length} accepted`,
    );
    return { accepted: accepted.length, stored };
  });
}
