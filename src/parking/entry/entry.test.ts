import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { sql } from 'kysely';
import { lotEnv, lotJson } from '../../../test/support/parking.ts';
import { createTestApp, type TestApp } from '../../../test/support/platform.ts';

let t: TestApp;
const enter = (payload: Record<string, unknown>) =>
  t.app.inject({ method: 'POST', url: '/api/v1/parking/entry', headers: t.asOperator, payload });
const availability = async () => (await t.app.inject({ url: '/api/v1/parking/availability' })).json();
const tickets = async () =>
  (await sql<{ n: number }>`select count(*)::int as n from parking_tickets`.execute(t.adapters.database.db))
    .rows[0].n;

function assertProblem(response: Awaited<ReturnType<typeof enter>>, status: number, code: string) {
  assert.equal(response.statusCode, status, response.body);
  assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
  assert.equal(response.json().code, code);
  return response.json();
}

before(async () => {
  t = await createTestApp({ services: ['parking'], env: lotEnv() });
});
after(() => t.close());
beforeEach(async () => {
  // Each test starts from an empty lot (same spots, no vehicles).
  const db = t.adapters.database.db;
  await sql`update parking_spots set ticket_id = null, occupied_at = null`.execute(db);
  await sql`delete from parking_payments`.execute(db);
  await sql`delete from parking_tickets`.execute(db);
});

describe('POST /api/v1/parking/entry', () => {
  test('201 with the ticket; the plate is normalised; the ticket can be looked up', async () => {
    t.clock.set('2026-01-05T12:00:00Z');
    const response = await enter({ licensePlate: ' ab-12 3 ', vehicleType: 'CAR', panelId: 'in-1' });
    assert.equal(response.statusCode, 201, response.body);
    const ticket = response.json();
    assert.match(ticket.ticketId, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/);
    assert.equal(ticket.spotId, 'F1-C01');
    assert.equal(ticket.floor, 1);
    assert.equal(ticket.entryTime, '2026-01-05T12:00:00.000Z');
    assert.equal(ticket.licensePlate, 'AB123');
    assert.equal(ticket.status, 'ACTIVE');
    const lookup = await t.app.inject({ url: `/api/v1/parking/tickets/${ticket.ticketId}` });
    assert.equal(lookup.statusCode, 200);
    const { payments, ...found } = lookup.json() as Record<string, unknown>;
    assert.deepEqual(found, ticket);
    assert.deepEqual(payments, []);
  });

  test('fit rules and order: smallest fitting type first, HANDICAPPED and ELECTRIC last, then the next floor', async () => {
    const spots = async (vehicleType: string, count: number) => {
      const taken = [];
      for (let i = 0; i < count; i++) {
        const response = await enter({
          licensePlate: `${vehicleType.slice(0, 1)}${taken.length}X${Math.random().toString(36).slice(2, 6)}`,
          vehicleType,
        });
        taken.push(response.statusCode === 201 ? response.json().spotId : response.json().code);
      }
      return taken;
    };
    assert.deepEqual(await spots('MOTORCYCLE', 3), ['F1-M01', 'F1-C01', 'F1-L01']);
    assert.deepEqual(await spots('CAR', 3), ['F1-H01', 'F1-E01', 'F2-C01']);
    assert.deepEqual(await spots('BUS', 2), ['F2-L01', 'parking_full']);
    // A car never takes a motorcycle spot: F2-M01 is free, but not for it.
    assert.deepEqual(await spots('CAR', 3), ['F2-H01', 'F2-E01', 'parking_full']);
    assert.deepEqual(await spots('MOTORCYCLE', 2), ['F2-M01', 'parking_full']);
  });

  test('a bus takes LARGE spots only, floor by floor', async () => {
    const first = await enter({ licensePlate: 'BUS1', vehicleType: 'BUS' });
    const second = await enter({ licensePlate: 'BUS2', vehicleType: 'BUS' });
    assert.deepEqual([first.json().spotId, second.json().spotId], ['F1-L01', 'F2-L01']);
    assert.equal(first.json().spotType, 'LARGE');
  });

  test('needs: the asked-for type first, on any floor, before ordinary spots', async () => {
    const electric = await enter({ licensePlate: 'EV1', vehicleType: 'CAR', needs: ['ELECTRIC'] });
    assert.equal(electric.json().spotId, 'F1-E01');
    const again = await enter({ licensePlate: 'EV2', vehicleType: 'CAR', needs: ['ELECTRIC'] });
    assert.equal(
      again.json().spotId,
      'F2-E01',
      'the electric spot on floor 2 beats a compact one on floor 1',
    );
    const third = await enter({ licensePlate: 'EV3', vehicleType: 'CAR', needs: ['ELECTRIC'] });
    assert.equal(third.json().spotId, 'F1-C01', 'no electric spot left: the ordinary order');
    const wheelchair = await enter({
      licensePlate: 'HC1',
      vehicleType: 'MOTORCYCLE',
      needs: ['HANDICAPPED'],
    });
    assert.equal(wheelchair.json().spotId, 'F1-H01');
  });

  test('concurrent entries (written in batches) get what one-by-one entries get', async () => {
    // 8 spots fit a car; 11 plates arrive at once, one of them twice (written differently).
    const plates = ['C0', 'C1', 'C2', 'C3', 'c-3', 'C4', 'C5', 'C6', 'C7', 'C8', 'C9', 'C10'];
    const responses = await Promise.all(
      plates.map((licensePlate) => enter({ licensePlate, vehicleType: 'CAR' })),
    );
    const parked = responses
      .filter((response) => response.statusCode === 201)
      .map((response) => response.json());
    assert.deepEqual(parked.map((ticket) => ticket.spotId).sort(), [
      'F1-C01',
      'F1-E01',
      'F1-H01',
      'F1-L01',
      'F2-C01',
      'F2-E01',
      'F2-H01',
      'F2-L01',
    ]);
    const refused = responses
      .filter((response) => response.statusCode !== 201)
      .map((response) => response.json().code);
    assert.equal(refused.length, 4);
    assert.ok(
      refused.every((code) => code === 'parking_full' || code === 'vehicle_already_parked'),
      String(refused),
    );
    const c3 = responses.filter((_, i) => plates[i] === 'C3' || plates[i] === 'c-3');
    assert.ok(c3.filter((response) => response.statusCode === 201).length <= 1);
    if (c3.some((response) => response.statusCode === 201))
      assert.ok(refused.includes('vehicle_already_parked'));
    assert.equal(await tickets(), 8);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from parking_spots s
      join parking_tickets t on t.id = s.ticket_id and t.spot_id = s.id`.execute(t.adapters.database.db);
    assert.equal(rows[0].n, 8, 'every occupied spot holds its own ticket');
  });

  test('concurrent entries on an empty lot take the first spots in the offering order', async () => {
    const responses = await Promise.all(
      ['O1', 'O2', 'O3'].map((licensePlate) => enter({ licensePlate, vehicleType: 'CAR' })),
    );
    assert.deepEqual(responses.map((response) => response.json().spotId).sort(), [
      'F1-C01',
      'F1-H01',
      'F1-L01',
    ]);
  });

  test('409 parking_full issues no ticket and changes nothing', async () => {
    assert.equal((await enter({ licensePlate: 'B1', vehicleType: 'BUS' })).statusCode, 201);
    assert.equal((await enter({ licensePlate: 'B2', vehicleType: 'BUS' })).statusCode, 201);
    const before = await availability();
    const count = await tickets();
    const body = assertProblem(await enter({ licensePlate: 'B3', vehicleType: 'BUS' }), 409, 'parking_full');
    assert.match(body.detail, /no ticket was issued/);
    assert.deepEqual(await availability(), before);
    assert.equal(await tickets(), count);
  });

  test('409 vehicle_already_parked for the same plate however it is written, even when the lot is full for it', async () => {
    assert.equal((await enter({ licensePlate: 'KA-1', vehicleType: 'BUS' })).statusCode, 201);
    assertProblem(await enter({ licensePlate: 'ka 1', vehicleType: 'CAR' }), 409, 'vehicle_already_parked');
    assert.equal((await enter({ licensePlate: 'KA-2', vehicleType: 'BUS' })).statusCode, 201);
    assertProblem(await enter({ licensePlate: 'KA1', vehicleType: 'BUS' }), 409, 'vehicle_already_parked');
    assert.equal(await tickets(), 2);
  });

  test('bad input is a 400/422 listing the field, and changes nothing', async () => {
    const before = await availability();
    const cases: [Record<string, unknown>, number, string, RegExp][] = [
      [{ vehicleType: 'CAR' }, 400, 'validation_failed', /licensePlate/],
      [{ licensePlate: 'AB#12', vehicleType: 'CAR' }, 400, 'validation_failed', /body\.licensePlate/],
      [{ licensePlate: '- -', vehicleType: 'CAR' }, 400, 'validation_failed', /body\.licensePlate/],
      [{ licensePlate: 'ABCDEFGHIJK', vehicleType: 'CAR' }, 400, 'validation_failed', /body\.licensePlate/],
      [{ licensePlate: 'AB12', vehicleType: 'TRUCK' }, 400, 'validation_failed', /vehicleType/],
      [{ licensePlate: 'AB12', vehicleType: 'CAR', color: 'red' }, 400, 'validation_failed', /color/],
      [{ licensePlate: 'AB12', vehicleType: 'CAR', needs: ['VALET'] }, 400, 'validation_failed', /needs/],
      [
        { licensePlate: 'AB12', vehicleType: 'BUS', needs: ['ELECTRIC'] },
        422,
        'needs_not_possible',
        /LARGE spots only/,
      ],
      [
        { licensePlate: 'AB12', vehicleType: 'CAR', panelId: 'out-1' },
        422,
        'unknown_panel',
        /No entry panel "out-1"/,
      ],
    ];
    for (const [payload, status, code, detail] of cases) {
      const body = assertProblem(await enter(payload), status, code);
      assert.match(`${body.detail} ${JSON.stringify(body.errors ?? [])}`, detail, JSON.stringify(payload));
    }
    const malformed = await t.app.inject({
      method: 'POST',
      url: '/api/v1/parking/entry',
      headers: { ...t.asOperator, 'content-type': 'application/json' },
      payload: '{"licensePlate":',
    });
    assertProblem(malformed, 400, 'malformed_json');
    assert.deepEqual(await availability(), before);
    assert.equal(await tickets(), 0);
  });
});

/** Spots held for reservations, per type (this lot takes none). */
const NONE_RESERVED = { motorcycle: 0, compact: 0, large: 0, handicapped: 0, electric: 0 };

describe('availability, boards, tickets, lot', () => {
  test('GET /availability: the spec shape plus handicapped and electric, counting free spots', async () => {
    assert.deepEqual(await availability(), {
      floors: [
        {
          floor: 1,
          motorcycle: 1,
          compact: 1,
          large: 1,
          handicapped: 1,
          electric: 1,
          reserved: NONE_RESERVED,
        },
        {
          floor: 2,
          motorcycle: 1,
          compact: 1,
          large: 1,
          handicapped: 1,
          electric: 1,
          reserved: NONE_RESERVED,
        },
      ],
    });
    await enter({ licensePlate: 'A1', vehicleType: 'CAR' });
    await enter({ licensePlate: 'A2', vehicleType: 'CAR', needs: ['ELECTRIC'] });
    assert.deepEqual((await availability()).floors[0], {
      floor: 1,
      motorcycle: 1,
      compact: 0,
      large: 1,
      handicapped: 1,
      electric: 0,
      reserved: NONE_RESERVED,
    });
  });

  test('GET /boards: one board per floor with free and total spots per type', async () => {
    await enter({ licensePlate: 'BUS9', vehicleType: 'BUS' });
    const response = await t.app.inject({ url: '/api/v1/parking/boards' });
    assert.equal(response.statusCode, 200);
    const boards = response.json();
    assert.deepEqual(boards.lot, { id: 'test-lot', name: 'Test lot' });
    assert.equal(boards.updatedAt, t.clock.now().toISOString());
    assert.deepEqual(
      boards.boards.map((board: { boardId: string; floor: number }) => [board.boardId, board.floor]),
      [
        ['board-F1', 1],
        ['board-F2', 2],
      ],
    );
    assert.deepEqual(boards.boards[0].availableSpots, {
      MOTORCYCLE: 1,
      COMPACT: 1,
      LARGE: 0,
      HANDICAPPED: 1,
      ELECTRIC: 1,
    });
    assert.deepEqual(boards.boards[0].totalSpots, {
      MOTORCYCLE: 1,
      COMPACT: 1,
      LARGE: 1,
      HANDICAPPED: 1,
      ELECTRIC: 1,
    });
    assert.deepEqual(boards.total.availableSpots, {
      MOTORCYCLE: 2,
      COMPACT: 2,
      LARGE: 1,
      HANDICAPPED: 2,
      ELECTRIC: 2,
    });
  });

  test('ticket lookup: 404 for an unknown ticket or code (in words), 400 for an overlong one', async () => {
    assertProblem(
      await t.app.inject({ url: '/api/v1/parking/tickets/0190f0f0-0000-7000-8000-000000000000' }),
      404,
      'ticket_not_found',
    );
    const typo = await t.app.inject({ url: '/api/v1/parking/tickets/not-a-ticket' });
    assertProblem(typo, 404, 'ticket_not_found');
    assert.equal(typo.json().detail, 'No ticket with code not-a-ticket, check the code on the ticket');
    assertProblem(
      await t.app.inject({ url: `/api/v1/parking/tickets/${'x'.repeat(65)}` }),
      400,
      'validation_failed',
    );
  });

  test('GET /lot describes floors, panels and pricing', async () => {
    const lot = (await t.app.inject({ url: '/api/v1/parking/lot' })).json();
    assert.equal(lot.timeZone, 'America/New_York');
    assert.equal(lot.lostTicketFee, 50);
    assert.deepEqual(lot.exitPanels, [{ id: 'out-1', name: 'Exit' }]);
    assert.equal(lot.floors[0].spots, 5);
    assert.match(lot.pricing, /CAR 2\.00 USD/);
  });

  test('pages: landing, boards, entry and exit panels render', async () => {
    for (const [url, text] of [
      ['/parking', 'Test lot'],
      ['/parking/boards', 'Display boards'],
      ['/parking/entry?panel=in-1', 'Entry panel · Entrance'],
      ['/parking/exit', 'Exit panel · Exit'],
    ]) {
      const response = await t.app.inject({ url });
      assert.equal(response.statusCode, 200, url);
      assert.match(String(response.headers['content-type']), /text\/html/);
      assert.ok(response.body.includes(text), `${url} shows ${text}`);
    }
  });
});

test('a lot config of a different size: spots beyond it are never offered', async () => {
  const small = await createTestApp({
    services: ['parking'],
    env: lotEnv(lotJson({ floors: [{ floor: 0, spots: [{ id: 'ONLY', type: 'COMPACT' }] }] })),
  });
  try {
    const first = await small.app.inject({
      method: 'POST',
      url: '/api/v1/parking/entry',
      headers: small.asOperator,
      payload: { licensePlate: 'X1', vehicleType: 'CAR' },
    });
    assert.equal(first.json().spotId, 'ONLY');
    const second = await small.app.inject({
      method: 'POST',
      url: '/api/v1/parking/entry',
      headers: small.asOperator,
      payload: { licensePlate: 'X2', vehicleType: 'CAR' },
    });
    assert.equal(second.json().code, 'parking_full');
  } finally {
    await small.close();
  }
});
