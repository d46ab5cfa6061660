import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, type TestContext, test } from 'node:test';
import { sql } from 'kysely';
import { enter, exit, type LotJson, lotEnv, lotJson } from '../../../test/support/parking.ts';
import { createTestApp, metricValue, type TestApp } from '../../../test/support/platform.ts';
import { TEST_CARDS } from '../../payments/api.ts';
import { parseLotConfig } from '../lot/config.ts';
import { peakOverlap } from './repository.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** Monday 5 January 2026, 07:00 in New York (the test lot's zone). */
const NOW = '2026-01-05T12:00:00Z';

const RULES = { spots: { COMPACT: 2 }, holdAheadMinutes: 60, graceMinutes: 30, maxDaysAhead: 30, perUser: 5 };

/** A fresh app on a lot of its own (closed with the test): every test starts from an empty lot. */
async function lotApp(
  context: TestContext,
  overrides: Partial<LotJson> = {},
  env: Record<string, string> = {},
) {
  const lot = lotJson({
    floors: [{ floor: 1, spots: { COMPACT: 2, LARGE: 1 } }],
    reservations: RULES,
    ...overrides,
  });
  const t = await createTestApp({ services: ['parking'], env: { ...lotEnv(lot), ...env } });
  context.after(() => t.close());
  t.clock.set(NOW);
  return t;
}

const at = (t: TestApp, offsetMs: number) => new Date(t.clock.now().getTime() + offsetMs).toISOString();

function reserve(t: TestApp, user: string, body: Record<string, unknown>) {
  return t.app.inject({
    method: 'POST',
    url: '/api/v1/parking/reservations',
    headers: t.asUser(user),
    payload: { vehicleType: 'CAR', spotType: 'COMPACT', ...body },
  });
}

/** A reservation that must be booked; its JSON. */
async function booked(t: TestApp, user: string, body: Record<string, unknown>) {
  const response = await reserve(t, user, body);
  assert.equal(response.statusCode, 201, response.body);
  assert.equal(response.headers.location, `/api/v1/parking/reservations/${response.json().reservationId}`);
  return response.json();
}

const read = (t: TestApp, user: string, id: string, method: 'GET' | 'DELETE' = 'GET') =>
  t.app.inject({ method, url: `/api/v1/parking/reservations/${id}`, headers: t.asUser(user) });

/** One run of the `parking.reservations` job at the clock's time. */
async function runJob(t: TestApp) {
  assert.ok(await t.app.platform.scheduler.runTick('parking.reservations', t.clock.now()));
}

async function boards(t: TestApp) {
  return (await t.app.inject({ url: '/api/v1/parking/boards' })).json();
}

async function counter(t: TestApp, name: string, labels = '') {
  const value = await metricValue(t.app, name, labels);
  return Number.isNaN(value) ? 0 : value;
}

describe('admission', () => {
  test('30 concurrent bookings of one window: exactly spots[type] succeed; the peak, not the overlaps, counts', async (context) => {
    const t = await lotApp(context, {
      floors: [{ floor: 1, spots: { COMPACT: 5 } }],
      reservations: { ...RULES, spots: { COMPACT: 3 } },
    });
    const window = { startsAt: '2026-01-06T15:00:00Z', endsAt: '2026-01-06T17:00:00Z' };
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => reserve(t, randomUUID(), { licensePlate: `RACE${i}`, ...window })),
    );
    const statuses = answers.map((answer) => answer.statusCode);
    assert.equal(statuses.filter((status) => status === 201).length, 3, statuses.join(' '));
    for (const refused of answers.filter((answer) => answer.statusCode !== 201)) {
      assert.equal(refused.statusCode, 409, refused.body);
      assert.equal(refused.json().code, 'no_reservable_spot');
    }
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from parking_reservations
      where status in ('BOOKED', 'HELD')`.execute(t.adapters.database.db);
    assert.equal(rows[0].n, 3);
    // Right after the window: free again (half-open windows); across its end: still full.
    await booked(t, randomUUID(), {
      licensePlate: 'AFTER1',
      startsAt: window.endsAt,
      endsAt: '2026-01-06T18:00:00Z',
    });
    const across = await reserve(t, randomUUID(), {
      licensePlate: 'ACROSS1',
      startsAt: '2026-01-06T16:30:00Z',
      endsAt: '2026-01-06T17:30:00Z',
    });
    assert.equal(across.json().code, 'no_reservable_spot');
    const availability = await t.app.inject({
      url: `/api/v1/parking/reservations/availability?spotType=COMPACT&startsAt=2026-01-06T12:00:00Z&endsAt=2026-01-06T15:30:00Z&vehicleType=CAR`,
    });
    assert.equal(availability.statusCode, 200, availability.body);
    assert.deepEqual(availability.json(), {
      spotType: 'COMPACT',
      startsAt: '2026-01-06T12:00:00.000Z',
      endsAt: '2026-01-06T15:30:00.000Z',
      limit: 3,
      available: 0,
      quote: {
        amount: 6,
        currency: 'USD',
        rule: 'Hourly rate for a car: 2.00 USD per full hour (at least one) × 3 h',
      },
    });
  });

  test('the window, the fit, the per-user and per-plate limits; answers and quote', async (context) => {
    const t = await lotApp(context, { reservations: { ...RULES, perUser: 2 } });
    assert.deepEqual((await t.app.inject({ url: '/api/v1/parking/lot' })).json().reservations, {
      ...RULES,
      perUser: 2,
    });
    assert.match((await t.app.inject({ url: '/parking' })).body, /href="\/parking\/reserve"/);
    const user = randomUUID();
    const refused = async (body: Record<string, unknown>, status: number, code: string, field?: string) => {
      const response = await reserve(t, user, { licensePlate: 'V1', ...body });
      assert.equal(response.statusCode, status, response.body);
      assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8');
      assert.equal(response.json().code, code);
      if (field) assert.equal(response.json().errors[0].field, field);
    };
    await refused(
      { startsAt: at(t, -MINUTE), endsAt: at(t, HOUR) },
      422,
      'invalid_reservation_window',
      'body.startsAt',
    );
    await refused(
      { startsAt: at(t, 2 * HOUR), endsAt: at(t, 2 * HOUR) },
      422,
      'invalid_reservation_window',
      'body.endsAt',
    );
    await refused(
      { startsAt: at(t, 2 * HOUR), endsAt: at(t, 2 * HOUR + 29 * MINUTE) },
      422,
      'invalid_reservation_window',
      'body.endsAt',
    );
    await refused(
      { startsAt: at(t, 31 * 24 * HOUR), endsAt: at(t, 32 * 24 * HOUR) },
      422,
      'invalid_reservation_window',
      'body.startsAt',
    );
    await refused(
      { vehicleType: 'BUS', startsAt: at(t, 2 * HOUR), endsAt: at(t, 3 * HOUR) },
      422,
      'needs_not_possible',
      'body.spotType',
    );
    await refused(
      { spotType: 'LARGE', startsAt: at(t, 2 * HOUR), endsAt: at(t, 3 * HOUR) },
      409,
      'no_reservable_spot',
    );
    await refused(
      { licensePlate: '--', startsAt: at(t, 2 * HOUR), endsAt: at(t, 3 * HOUR) },
      400,
      'validation_failed',
    );

    // Offsets are accepted as given; answers are UTC, with the lot's wall clock beside.
    const first = await booked(t, user, {
      licensePlate: 'v-1',
      startsAt: '2026-01-06T09:00:00-05:00',
      endsAt: '2026-01-06T11:30:00-05:00',
    });
    assert.deepEqual(
      { ...first, reservationId: undefined, createdAt: undefined, updatedAt: undefined },
      {
        reservationId: undefined,
        status: 'BOOKED',
        licensePlate: 'V1',
        vehicleType: 'CAR',
        spotType: 'COMPACT',
        startsAt: '2026-01-06T14:00:00.000Z',
        endsAt: '2026-01-06T16:30:00.000Z',
        holdUntil: '2026-01-06T14:30:00.000Z',
        timeZone: 'America/New_York',
        local: {
          startsAt: 'Jan 6, 2026, 9:00 AM EST',
          endsAt: 'Jan 6, 2026, 11:30 AM EST',
          holdUntil: 'Jan 6, 2026, 9:30 AM EST',
        },
        quote: {
          amount: 4,
          currency: 'USD',
          rule: 'Hourly rate for a car: 2.00 USD per full hour (at least one) × 2 h',
        },
        spotId: null,
        floor: null,
        ticketId: null,
        createdAt: undefined,
        updatedAt: undefined,
      },
    );
    // The same plate overlapping: refused; the same plate later: fine; a third live one: refused.
    await refused(
      { startsAt: '2026-01-06T15:00:00Z', endsAt: '2026-01-06T18:00:00Z' },
      409,
      'reservation_overlaps',
    );
    await booked(t, user, {
      licensePlate: 'V1',
      startsAt: '2026-01-06T16:30:00Z',
      endsAt: '2026-01-06T18:00:00Z',
    });
    await refused(
      { licensePlate: 'V2', startsAt: '2026-01-07T15:00:00Z', endsAt: '2026-01-07T18:00:00Z' },
      409,
      'too_many_reservations',
    );

    const mine = await t.app.inject({ url: '/api/v1/parking/reservations', headers: t.asUser(user) });
    assert.deepEqual(
      mine.json().reservations.map((r: { startsAt: string }) => r.startsAt),
      ['2026-01-06T16:30:00.000Z', '2026-01-06T14:00:00.000Z'],
    );
    // Someone else sees none of them, and another's id is unknown to them.
    const stranger = randomUUID();
    const theirs = await t.app.inject({ url: '/api/v1/parking/reservations', headers: t.asUser(stranger) });
    assert.deepEqual(theirs.json(), { reservations: [] });
    assert.equal((await read(t, stranger, first.reservationId)).json().code, 'reservation_not_found');
    assert.equal((await read(t, stranger, first.reservationId, 'DELETE')).statusCode, 404);
    assert.equal((await read(t, user, first.reservationId)).json().status, 'BOOKED');
    // No token: 401.
    const anonymous = await t.app.inject({
      method: 'POST',
      url: '/api/v1/parking/reservations',
      payload: {},
    });
    assert.equal(anonymous.statusCode, 401);
  });

  test('a lot without a reservations section takes none: 409 reservations_closed', async (context) => {
    const t = await lotApp(context, { reservations: undefined });
    const response = await reserve(t, randomUUID(), {
      licensePlate: 'C1',
      startsAt: at(t, 2 * HOUR),
      endsAt: at(t, 3 * HOUR),
    });
    assert.equal(response.statusCode, 409);
    assert.equal(response.json().code, 'reservations_closed');
  });
});

describe('holds, arrival, no-shows, cancels', () => {
  test('held at booking when it starts soon: invisible to walk-ins, counted on the boards, taken by the plate', async (context) => {
    const t = await lotApp(context);
    const user = randomUUID();
    const before = await counter(t, 'parking_reservations_total', 'outcome="booked"');
    const held = await booked(t, user, {
      licensePlate: 'RES1',
      startsAt: at(t, 30 * MINUTE),
      endsAt: at(t, 3 * HOUR),
    });
    assert.equal(held.status, 'HELD');
    assert.equal(held.spotId, 'F1-C01');
    assert.equal(held.floor, 1);
    assert.equal(await counter(t, 'parking_reservations_total', 'outcome="booked"'), before + 1);

    const board = (await boards(t)).boards[0];
    assert.deepEqual([board.availableSpots.COMPACT, board.reservedSpots.COMPACT, board.reserved], [1, 1, 1]);
    assert.equal((await boards(t)).total.reserved, 1);
    const availability = (await t.app.inject({ url: '/api/v1/parking/availability' })).json();
    assert.deepEqual([availability.floors[0].compact, availability.floors[0].reserved.compact], [1, 1]);
    assert.equal(await metricValue(t.app, 'parking_spots', 'floor="1",type="COMPACT",state="reserved"'), 1);

    // Walk-ins: one takes the other compact spot, the large one goes to the next car, then full.
    assert.equal((await enter(t, 'WALK1')).json().spotId, 'F1-C02');
    assert.equal((await enter(t, 'WALK2')).json().spotId, 'F1-L01');
    const full = await enter(t, 'WALK3');
    assert.equal(full.statusCode, 409);
    assert.equal(full.json().code, 'parking_full');

    // The reserved plate arrives (typed another way): its held spot, linked both ways.
    const arrived = await enter(t, 'res 1');
    assert.equal(arrived.statusCode, 201, arrived.body);
    assert.deepEqual([arrived.json().spotId, arrived.json().reservationId], ['F1-C01', held.reservationId]);
    const used = (await read(t, user, held.reservationId)).json();
    assert.deepEqual([used.status, used.ticketId, used.spotId], ['USED', arrived.json().ticketId, 'F1-C01']);
    const after = (await boards(t)).boards[0];
    assert.deepEqual([after.availableSpots.COMPACT, after.reserved], [0, 0]);
    assert.equal(await counter(t, 'parking_reservations_total', 'outcome="used"'), 1);
    // Used: no longer cancellable.
    const late = await read(t, user, held.reservationId, 'DELETE');
    assert.equal(late.statusCode, 409);
    assert.equal(late.json().code, 'reservation_not_cancellable');
  });

  test('starting soon with no spot of the type free: 409 and nothing booked', async (context) => {
    const t = await lotApp(context);
    await enter(t, 'WALK1');
    await enter(t, 'WALK2');
    const response = await reserve(t, randomUUID(), {
      licensePlate: 'LATE1',
      startsAt: at(t, 20 * MINUTE),
      endsAt: at(t, 2 * HOUR),
    });
    assert.equal(response.statusCode, 409, response.body);
    assert.equal(response.json().code, 'no_reservable_spot');
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from parking_reservations`.execute(
      t.adapters.database.db,
    );
    assert.equal(rows[0].n, 0);
  });

  test('held by the job from holdAheadMinutes before the start; a type full of walk-ins is retried and counted', async (context) => {
    const t = await lotApp(context, {
      floors: [{ floor: 1, spots: { COMPACT: 1, LARGE: 1 } }],
      reservations: { ...RULES, spots: { COMPACT: 1 } },
    });
    const user = randomUUID();
    const reservation = await booked(t, user, {
      licensePlate: 'JOB1',
      startsAt: at(t, 3 * HOUR),
      endsAt: at(t, 5 * HOUR),
    });
    assert.equal(reservation.status, 'BOOKED');
    await runJob(t); // too early: stays BOOKED
    assert.equal((await read(t, user, reservation.reservationId)).json().status, 'BOOKED');
    const walkIn = (await enter(t, 'WALK1')).json();
    assert.equal(walkIn.spotId, 'F1-C01');
    t.clock.advance(2 * HOUR + MINUTE); // 59 minutes before the start
    await runJob(t);
    assert.equal((await read(t, user, reservation.reservationId)).json().status, 'BOOKED');
    assert.equal(await counter(t, 'parking_reservation_hold_failures_total'), 1);
    // The walk-in leaves: the next run holds the spot.
    assert.equal((await exit(t, walkIn.ticketId, { card: TEST_CARDS.success })).statusCode, 200);
    t.clock.advance(MINUTE);
    await runJob(t);
    const held = (await read(t, user, reservation.reservationId)).json();
    assert.deepEqual([held.status, held.spotId], ['HELD', 'F1-C01']);
    assert.equal((await enter(t, 'WALK2')).json().spotId, 'F1-L01');
    assert.equal((await enter(t, 'WALK3')).json().code, 'parking_full');
  });

  test('a BOOKED reservation that found no hold: its plate is parked like a walk-in and linked', async (context) => {
    const t = await lotApp(context);
    const user = randomUUID();
    const reservation = await booked(t, user, {
      licensePlate: 'BK1',
      startsAt: at(t, 2 * HOUR),
      endsAt: at(t, 4 * HOUR),
    });
    t.clock.advance(2 * HOUR - 10 * MINUTE); // within the arrival window, the job did not run
    const arrived = (await enter(t, 'BK1')).json();
    assert.deepEqual([arrived.spotId, arrived.reservationId], ['F1-C01', reservation.reservationId]);
    assert.equal((await read(t, user, reservation.reservationId)).json().status, 'USED');
  });

  test('no-show after the grace period: NO_SHOW, the held spot free again, not charged', async (context) => {
    const t = await lotApp(context);
    const user = randomUUID();
    const reservation = await booked(t, user, {
      licensePlate: 'NS1',
      startsAt: at(t, 30 * MINUTE),
      endsAt: at(t, 2 * HOUR),
    });
    assert.equal((await boards(t)).boards[0].reserved, 1);
    t.clock.advance(60 * MINUTE); // start + 30 min: still within grace
    await runJob(t);
    assert.equal((await read(t, user, reservation.reservationId)).json().status, 'HELD');
    t.clock.advance(MINUTE);
    await runJob(t);
    const lapsed = (await read(t, user, reservation.reservationId)).json();
    assert.equal(lapsed.status, 'NO_SHOW');
    assert.equal((await boards(t)).boards[0].reserved, 0);
    assert.equal(await counter(t, 'parking_reservations_total', 'outcome="no_show"'), 1);
    // The plate arriving now is a walk-in, on the first free spot.
    const late = (await enter(t, 'NS1')).json();
    assert.deepEqual([late.spotId, late.reservationId], ['F1-C01', null]);
  });

  test('cancel before arrival frees the held spot; again changes nothing', async (context) => {
    const t = await lotApp(context);
    const user = randomUUID();
    const reservation = await booked(t, user, {
      licensePlate: 'CX1',
      startsAt: at(t, 30 * MINUTE),
      endsAt: at(t, 2 * HOUR),
    });
    const cancelled = await read(t, user, reservation.reservationId, 'DELETE');
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    assert.equal(cancelled.json().status, 'CANCELLED');
    assert.equal((await boards(t)).boards[0].reserved, 0);
    assert.deepEqual((await read(t, user, reservation.reservationId, 'DELETE')).json(), cancelled.json());
    assert.equal(await counter(t, 'parking_reservations_total', 'outcome="cancelled"'), 1);
    // The plate arriving is a walk-in; the spot is anyone's.
    assert.equal((await enter(t, 'OTHER1')).json().spotId, 'F1-C01');
    assert.equal((await enter(t, 'CX1')).json().reservationId, null);
  });
});

describe('pricing of a reserved stay', () => {
  test('the exit pays [min(entry, start), max(exit, end)]; the receipt says so', async (context) => {
    const t = await lotApp(context);
    const user = randomUUID();
    // 13:00–16:00 UTC: 3 h, 6.00 at 2.00 an hour.
    const reservation = await booked(t, user, {
      licensePlate: 'PAY1',
      startsAt: '2026-01-05T13:00:00Z',
      endsAt: '2026-01-05T16:00:00Z',
    });
    assert.equal(reservation.quote.amount, 6);
    t.clock.set('2026-01-05T12:30:00Z');
    const ticket = (await enter(t, 'PAY1')).json();
    t.clock.set('2026-01-05T14:00:00Z'); // left early: the window is paid, 12:30–16:00 = 3 h
    const early = await exit(t, ticket.ticketId, { card: TEST_CARDS.success });
    assert.deepEqual([early.json().amount, early.json().duration], [6, '1h 30m']);
    // A walk-in for the same time pays its 1.5 h.
    t.clock.set('2026-01-05T12:30:00Z');
    const walkIn = (await enter(t, 'WALK1')).json();
    t.clock.set('2026-01-05T14:00:00Z');
    assert.equal((await exit(t, walkIn.ticketId, { card: TEST_CARDS.success })).json().amount, 2);

    // Stayed late: 14:30–19:40 = 5 h 10 min, 5 h.
    const second = await booked(t, user, {
      licensePlate: 'PAY2',
      startsAt: '2026-01-05T15:00:00Z',
      endsAt: '2026-01-05T16:00:00Z',
    });
    t.clock.set('2026-01-05T14:30:00Z');
    const late = (await enter(t, 'PAY2')).json();
    assert.equal(late.reservationId, second.reservationId);
    t.clock.set('2026-01-05T19:40:00Z');
    const paid = await exit(t, late.ticketId, { card: TEST_CARDS.success });
    assert.equal(paid.statusCode, 200, paid.body);
    assert.equal(paid.json().amount, 10);
    assert.equal(
      paid.json().receipt.rule,
      'Hourly rate for a car: 2.00 USD per full hour (at least one) × 5 h (reserved stay: the reserved window at least)',
    );
  });
});

describe('retention', () => {
  test('ended reservations go after the archive age; live ones stay', async (context) => {
    const t = await lotApp(context, {}, { PARKING_TICKET_ARCHIVE_AFTER: '2d' });
    const user = randomUUID();
    const window = (hours: number) => ({ startsAt: at(t, hours * HOUR), endsAt: at(t, (hours + 1) * HOUR) });
    const cancelled = await booked(t, user, { licensePlate: 'R1', ...window(2) });
    await read(t, user, cancelled.reservationId, 'DELETE');
    const noShow = await booked(t, user, { licensePlate: 'R2', ...window(2) });
    const live = await booked(t, user, { licensePlate: 'R3', ...window(24 * 5) });
    t.clock.advance(3 * HOUR);
    await runJob(t); // R2 is a no-show now
    assert.equal((await read(t, user, noShow.reservationId)).json().status, 'NO_SHOW');
    t.clock.advance(2 * 24 * HOUR - 2 * HOUR); // the no-show's end is not 2 days old yet; the cancel is
    assert.ok(await t.app.platform.scheduler.runTick('parking.retention', t.clock.now()));
    const left = async () =>
      (
        await sql<{ id: string }>`select id::text from parking_reservations order by id`.execute(
          t.adapters.database.db,
        )
      ).rows.map((row) => row.id);
    assert.deepEqual(await left(), [noShow.reservationId, live.reservationId].sort());
    t.clock.advance(2 * HOUR + MINUTE);
    assert.ok(await t.app.platform.scheduler.runTick('parking.retention', t.clock.now()));
    assert.deepEqual(await left(), [live.reservationId]);
    assert.equal(await metricValue(t.app, 'retention_rows_removed_total', 'table="parking_reservations"'), 2);
  });
});

describe('the lot file and the peak', () => {
  test('reservations: known types, at most the lot has, known fields, ranges; absent = closed', () => {
    const problems = (reservations: unknown) => {
      try {
        parseLotConfig(lotJson({ reservations }));
        return '';
      } catch (error) {
        return (error as Error).message;
      }
    };
    assert.match(
      problems({ spots: { COMPACT: 3 } }),
      /reservations\.spots\.COMPACT is 3, but the lot has 2 COMPACT spots/,
    );
    assert.match(problems({ spots: { TRUCK: 1 } }), /reservations\.spots\.TRUCK is not a known field/);
    assert.match(problems({ spots: {}, holdAhead: 5 }), /reservations\.holdAhead is not a known field/);
    assert.match(
      problems({ spots: {}, graceMinutes: -1 }),
      /reservations\.graceMinutes must be an integer from 0 to 1440/,
    );
    assert.match(
      problems({ spots: {}, perUser: 0 }),
      /reservations\.perUser must be an integer from 1 to 100/,
    );
    assert.match(problems([]), /reservations must be an object/);
    assert.deepEqual(parseLotConfig(lotJson({ reservations: { spots: { ELECTRIC: 2 } } })).reservations, {
      spots: { ELECTRIC: 2 },
      holdAheadMinutes: 60,
      graceMinutes: 30,
      maxDaysAhead: 30,
      perUser: 5,
    });
    assert.equal(parseLotConfig(lotJson()).reservations, undefined);
  });

  test('peakOverlap: the most windows live at one instant, half-open', () => {
    const w = (from: number, to: number) => ({ startsAt: new Date(from), endsAt: new Date(to) });
    assert.equal(peakOverlap([w(0, 10), w(10, 20), w(20, 30)], new Date(0), new Date(30)), 1);
    assert.equal(peakOverlap([w(0, 10), w(5, 15), w(9, 20)], new Date(0), new Date(30)), 3);
    assert.equal(peakOverlap([w(0, 10), w(5, 15)], new Date(10), new Date(30)), 1);
    assert.equal(peakOverlap([], new Date(0), new Date(1)), 0);
  });
});
