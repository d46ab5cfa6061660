import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { dayOfWeekIn, feeFor, formatDuration, type Pricing } from './pricing.ts';

const hourly: Pricing = { strategy: 'hourly', ratesMinor: { MOTORCYCLE: 100, CAR: 200, BUS: 500 } };
const weekend: Pricing = {
  strategy: 'weekend',
  weekday: hourly,
  multiplierBasisPoints: 15_000,
  weekendDays: [6, 0],
};
const NY = 'America/New_York';
const minutes = (n: number) => n * 60_000;

function fee(
  pricing: Pricing,
  vehicleType: 'MOTORCYCLE' | 'CAR' | 'BUS',
  entry: string,
  stayMs: number,
  zone = NY,
) {
  const entryTime = new Date(entry);
  return feeFor(pricing, { vehicleType, entryTime, exitTime: new Date(entryTime.getTime() + stayMs) }, zone);
}

describe('hourly: whole hours truncated, at least one', () => {
  const monday = '2026-01-05T15:00:00Z';
  for (const [label, stay, hours] of [
    ['0 min', 0, 1],
    ['59 min', minutes(59), 1],
    ['60 min', minutes(60), 1],
    ['61 min', minutes(61), 1],
    ['119 min', minutes(119), 1],
    ['2 h', minutes(120), 2],
    ['25 h', minutes(25 * 60), 25],
    ['25 h 59 min', minutes(25 * 60 + 59), 25],
  ] as const) {
    test(`${label} is ${hours} h for each vehicle type`, () => {
      assert.equal(fee(hourly, 'MOTORCYCLE', monday, stay), hours * 100);
      assert.equal(fee(hourly, 'CAR', monday, stay), hours * 200);
      assert.equal(fee(hourly, 'BUS', monday, stay), hours * 500);
    });
  }

  test('a clock that went backwards bills the minimum, never a negative amount', () => {
    assert.equal(fee(hourly, 'CAR', monday, -minutes(30)), 200);
  });
});

describe('flat rate', () => {
  test('the same amount whatever the stay and vehicle', () => {
    const flat: Pricing = { strategy: 'flat', flatRateMinor: 1250 };
    assert.equal(fee(flat, 'CAR', '2026-01-05T15:00:00Z', 0), 1250);
    assert.equal(fee(flat, 'BUS', '2026-01-05T15:00:00Z', minutes(60 * 30)), 1250);
  });
});

describe('weekend multiplier by the entry day in the lot time zone', () => {
  test('Saturday entry pays ×1.5, Monday entry does not', () => {
    assert.equal(fee(weekend, 'CAR', '2026-01-10T15:00:00Z', minutes(150)), 600); // Sat 10:00 in New York, 2 h × 2.00 × 1.5
    assert.equal(fee(weekend, 'CAR', '2026-01-12T15:00:00Z', minutes(150)), 400); // Mon
  });

  test('what counts is the lot wall clock, not UTC', () => {
    // Friday 23:30 in New York is already Saturday in UTC: weekday price.
    assert.equal(fee(weekend, 'CAR', '2026-01-10T04:30:00Z', minutes(60)), 200);
    // Sunday 23:30 in New York is Monday in UTC: weekend price.
    assert.equal(fee(weekend, 'CAR', '2026-01-12T04:30:00Z', minutes(60)), 300);
    // The same instant in Tokyo is Monday afternoon.
    assert.equal(fee(weekend, 'CAR', '2026-01-12T04:30:00Z', minutes(60), 'Asia/Tokyo'), 200);
  });

  test('a stay that starts on Friday and ends on Saturday is priced as a weekday stay', () => {
    assert.equal(fee(weekend, 'BUS', '2026-01-09T20:00:00Z', minutes(10 * 60)), 5000);
  });

  test('the multiplier rounds half up to a whole cent', () => {
    const odd: Pricing = {
      strategy: 'weekend',
      weekday: { strategy: 'flat', flatRateMinor: 101 },
      multiplierBasisPoints: 15_000,
      weekendDays: [6, 0],
    };
    assert.equal(fee(odd, 'CAR', '2026-01-10T15:00:00Z', 0), 152); // 151.5 → 152
  });

  test('configurable weekend days (Friday and Saturday)', () => {
    const gulf: Pricing = { ...weekend, weekendDays: [5, 6] } as Pricing;
    assert.equal(fee(gulf, 'CAR', '2026-01-09T10:00:00Z', minutes(60), 'Asia/Dubai'), 300); // Friday
    assert.equal(fee(gulf, 'CAR', '2026-01-11T10:00:00Z', minutes(60), 'Asia/Dubai'), 200); // Sunday
  });
});

describe('daylight-saving changes: real elapsed time is billed', () => {
  test('spring forward: 01:30 to 03:30 on the wall clock is one real hour', () => {
    // 2026-03-08 02:00 EST → 03:00 EDT in New York (a Sunday, so plain hourly pricing here).
    const entry = '2026-03-08T06:30:00Z'; // 01:30 EST
    const exit = new Date('2026-03-08T07:30:00Z'); // 03:30 EDT
    assert.equal(fee(hourly, 'CAR', entry, exit.getTime() - Date.parse(entry)), 200);
  });

  test('fall back: 23:00 to 03:00 on the wall clock is five real hours', () => {
    // 2026-11-01 02:00 EDT → 01:00 EST.
    const entry = '2026-11-01T03:00:00Z'; // Sat 31 Oct 23:00 EDT
    const exit = Date.parse('2026-11-01T08:00:00Z'); // Sun 03:00 EST
    assert.equal(fee(hourly, 'CAR', entry, exit - Date.parse(entry)), 1000);
    // With the weekend strategy the entry day (Saturday, local) decides: ×1.5.
    assert.equal(fee(weekend, 'CAR', entry, exit - Date.parse(entry)), 1500);
  });

  test('the weekday of an instant follows the zone across the change', () => {
    assert.equal(dayOfWeekIn(new Date('2026-03-08T06:59:00Z'), NY), 0);
    assert.equal(dayOfWeekIn(new Date('2026-03-08T04:59:00Z'), NY), 6);
  });
});

test('durations read "<h>h <m>m", minutes truncated', () => {
  assert.equal(formatDuration(0), '0h 0m');
  assert.equal(formatDuration(minutes(59) + 59_000), '0h 59m');
  assert.equal(formatDuration(minutes(61)), '1h 1m');
  assert.equal(formatDuration(minutes(25 * 60)), '25h 0m');
});
