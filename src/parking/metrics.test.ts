import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { enter, exit, lotEnv, lotJson } from '../../test/support/parking.ts';
import { createTestApp, metricValue, type TestApp } from '../../test/support/platform.ts';
import { TEST_CARDS } from '../payments/api.ts';

let t: TestApp;
let plates = 0;

before(async () => {
  const lot = lotJson({
    floors: [
      { floor: 1, spots: { COMPACT: 3, LARGE: 1 } },
      { floor: 2, spots: { LARGE: 1, ELECTRIC: 2 } },
    ],
  });
  t = await createTestApp({ services: ['parking'], env: { ...lotEnv(lot), PAYMENT_TIMEOUT_MS: '100' } });
});
after(() => t.close());

/** A series' value now, 0 before it is first served. */
async function value(name: string, labels: string) {
  const found = await metricValue(t.app, name, labels);
  return Number.isNaN(found) ? 0 : found;
}

/** How much each outcome's series moved while `act` ran. */
async function moved(name: string, outcomes: string[], act: () => Promise<void>) {
  const series = outcomes.map((outcome) => `outcome="${outcome}"`);
  const before = await Promise.all(series.map((labels) => value(name, labels)));
  await act();
  const after = await Promise.all(series.map((labels) => value(name, labels)));
  return Object.fromEntries(outcomes.map((outcome, i) => [outcome, after[i] - before[i]]));
}

/** `parking_spots` as served: "floor/type/state" → spots. */
async function spots() {
  const body = (await t.app.inject({ url: '/metrics' })).body;
  const found: Record<string, number> = {};
  for (const [, floor, type, state, count] of body.matchAll(
    /^parking_spots\{floor="([^"]+)",type="([^"]+)",state="([^"]+)"\} (\d+)$/gm,
  ))
    found[`${floor}/${type}/${state}`] = Number(count);
  return found;
}

async function park(vehicleType: string) {
  const response = await enter(t, `MT${++plates}`, vehicleType);
  assert.equal(response.statusCode, 201, response.body);
  return response.json().ticketId as string;
}

test('parking_spots: free and occupied per floor and spot type, read at scrape time', async () => {
  assert.deepEqual(await spots(), {
    '1/COMPACT/free': 3,
    '1/COMPACT/occupied': 0,
    '1/LARGE/free': 1,
    '1/LARGE/occupied': 0,
    '2/LARGE/free': 1,
    '2/ELECTRIC/free': 2,
    '2/LARGE/occupied': 0,
    '2/ELECTRIC/occupied': 0,
  });
  const bus = await park('BUS');
  await park('CAR');
  const after = await spots();
  assert.deepEqual(
    [after['1/LARGE/occupied'], after['1/LARGE/free'], after['1/COMPACT/occupied'], after['1/COMPACT/free']],
    [1, 0, 1, 2],
  );
  assert.equal((await exit(t, bus, { card: TEST_CARDS.success })).statusCode, 200);
  assert.equal((await spots())['1/LARGE/occupied'], 0);
});

test('parking_entries_total: parked, full, already_parked, rejected', async () => {
  const deltas = await moved(
    'parking_entries_total',
    ['parked', 'full', 'already_parked', 'rejected'],
    async () => {
      // Two LARGE spots: a third bus finds the lot full for it.
      await park('BUS');
      await park('BUS');
      assert.equal((await enter(t, `MT${++plates}`, 'BUS')).statusCode, 409);
      assert.equal((await enter(t, `MT${plates - 1}`, 'CAR')).statusCode, 409); // still inside
      assert.equal((await enter(t, `MT${++plates}`, 'CAR', { panelId: 'nowhere' })).statusCode, 422);
    },
  );
  assert.deepEqual(deltas, { parked: 2, full: 1, already_parked: 1, rejected: 1 });
});

test('parking_exits_total: paid (once per ticket), declined, pending', async () => {
  const deltas = await moved('parking_exits_total', ['paid', 'declined', 'pending'], async () => {
    const paid = await park('CAR');
    assert.equal((await exit(t, paid, { card: TEST_CARDS.success })).statusCode, 200);
    // The same exit again answers the paid payment: the ticket is not counted twice.
    assert.equal((await exit(t, paid, { card: TEST_CARDS.success })).statusCode, 200);
    const declined = await park('CAR');
    assert.equal((await exit(t, declined, { card: TEST_CARDS.declined })).statusCode, 402);
    const unpaid = await park('CAR');
    const pending = await exit(t, unpaid);
    assert.equal(pending.statusCode, 200, pending.body);
    assert.equal(pending.json().status, 'PENDING');
  });
  assert.deepEqual(deltas, { paid: 1, declined: 1, pending: 1 });
});
