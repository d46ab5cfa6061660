import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { enter, exit, lotEnv, lotJson } from '../../../test/support/parking.ts';
import { createTestApp, type TestApp } from '../../../test/support/platform.ts';

// The fee shown at the exit, with the clock moved between entry and exit: hourly rates of the spec
// (1/2/5 per whole hour, at least one), ×1.5 when entering on a weekend in New York, and a flat lot.
const floors = [{ floor: 1, spots: { MOTORCYCLE: 20, COMPACT: 20, LARGE: 20 } }];
let hourly: TestApp;
let flat: TestApp;
let plates = 0;

before(async () => {
  hourly = await createTestApp({
    services: ['parking'],
    env: lotEnv(
      lotJson({
        floors,
        pricing: { strategy: 'weekend', weekendMultiplier: 1.5, weekday: { strategy: 'hourly' } },
      }),
    ),
  });
  flat = await createTestApp({
    services: ['parking'],
    env: lotEnv(lotJson({ floors, pricing: { strategy: 'flat', flatRate: 10 } })),
  });
});
after(async () => {
  await hourly.close();
  await flat.close();
});

async function feeAt(t: TestApp, vehicleType: string, entryAt: string, exitAt: string) {
  t.clock.set(entryAt);
  const entry = await enter(t, `FEE${++plates}`, vehicleType);
  assert.equal(entry.statusCode, 201, entry.body);
  t.clock.set(exitAt);
  const response = await exit(t, entry.json().ticketId);
  assert.equal(response.statusCode, 200, response.body);
  const { amount, duration } = response.json();
  return { amount, duration };
}

describe('fees with a movable clock (lot in America/New_York)', () => {
  // Monday 5 January 2026, 09:00 in New York.
  const monday = '2026-01-05T14:00:00Z';
  const later = (minutes: number) => new Date(Date.parse(monday) + minutes * 60_000).toISOString();
  const cases: [string, string, number, number, string][] = [
    ['0 min is one hour', 'CAR', 0, 2, '0h 0m'],
    ['59 min', 'CAR', 59, 2, '0h 59m'],
    ['61 min: whole hours, truncated', 'CAR', 61, 2, '1h 1m'],
    ['2 h 59 min', 'CAR', 179, 4, '2h 59m'],
    ['25 h', 'CAR', 25 * 60, 50, '25h 0m'],
    ['a motorcycle, 3 h', 'MOTORCYCLE', 180, 3, '3h 0m'],
    ['a bus, 3 h', 'BUS', 180, 15, '3h 0m'],
  ];
  for (const [label, vehicle, minutes, amount, duration] of cases) {
    test(`${label}: ${vehicle} pays ${amount.toFixed(2)}`, async () => {
      assert.deepEqual(await feeAt(hourly, vehicle, monday, later(minutes)), { amount, duration });
    });
  }

  test('weekend entry (Saturday 10:00) pays ×1.5; Friday 23:30 local, already Saturday in UTC, does not', async () => {
    assert.deepEqual(await feeAt(hourly, 'CAR', '2026-01-10T15:00:00Z', '2026-01-10T17:10:00Z'), {
      amount: 6,
      duration: '2h 10m',
    });
    assert.deepEqual(await feeAt(hourly, 'CAR', '2026-01-10T04:30:00Z', '2026-01-10T05:40:00Z'), {
      amount: 2,
      duration: '1h 10m',
    });
  });

  test('across daylight-saving changes the real elapsed time is billed', async () => {
    // Fall back: Saturday 31 Oct 23:00 EDT → Sunday 03:00 EST is 5 hours, not 4 (weekend entry: ×1.5).
    assert.deepEqual(await feeAt(hourly, 'CAR', '2026-11-01T03:00:00Z', '2026-11-01T08:00:00Z'), {
      amount: 15,
      duration: '5h 0m',
    });
    // Spring forward: Sunday 8 Mar 01:30 EST → 03:30 EDT is 1 hour, not 2.
    assert.deepEqual(await feeAt(hourly, 'BUS', '2026-03-08T06:30:00Z', '2026-03-08T07:30:00Z'), {
      amount: 7.5,
      duration: '1h 0m',
    });
  });

  test('flat rate: the same amount for any stay and vehicle', async () => {
    assert.deepEqual(await feeAt(flat, 'CAR', monday, later(5)), { amount: 10, duration: '0h 5m' });
    assert.deepEqual(await feeAt(flat, 'BUS', monday, later(30 * 60)), { amount: 10, duration: '30h 0m' });
  });
});
