import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { lotJson, writeLot } from '../../../test/support/parking.ts';
import { ConfigError } from '../../platform/config.ts';
import { DEMO_LOT_PATH, LotConfigError, loadLotConfig, parseLotConfig } from './config.ts';

describe('the lot config', () => {
  test('the demo lot: 3 floors with all five spot types, panels, pricing, zone and lost-ticket fee', () => {
    const lot = loadLotConfig(DEMO_LOT_PATH);
    assert.equal(lot.floors.length, 3);
    for (const floor of lot.floors) {
      assert.deepEqual([...new Set(floor.spots.map((spot) => spot.type))].sort(), [
        'COMPACT',
        'ELECTRIC',
        'HANDICAPPED',
        'LARGE',
        'MOTORCYCLE',
      ]);
    }
    assert.ok(lot.entryPanels.length >= 1 && lot.exitPanels.length >= 1);
    assert.equal(lot.timeZone, 'America/New_York');
    assert.equal(lot.lostTicketFeeMinor, 5000);
    assert.equal(lot.pricing.strategy, 'weekend');
  });

  test('spots listed one by one or counted per type; counted spots get ids per floor', () => {
    const lot = parseLotConfig(
      lotJson({
        floors: [
          { floor: -1, code: 'B1', spots: { LARGE: 2, COMPACT: 1 } },
          { floor: 0, spots: [{ id: 'A-7', type: 'ELECTRIC' }] },
        ],
      }),
    );
    assert.deepEqual(
      lot.floors.map((floor) => floor.spots),
      [
        [
          { id: 'B1-C01', type: 'COMPACT' },
          { id: 'B1-L01', type: 'LARGE' },
          { id: 'B1-L02', type: 'LARGE' },
        ],
        [{ id: 'A-7', type: 'ELECTRIC' }],
      ],
    );
    assert.equal(lot.floors[1].boardId, 'board-F0');
  });

  test('pricing: hourly defaults to the spec rates; amounts become minor units', () => {
    assert.deepEqual(parseLotConfig(lotJson({ pricing: undefined })).pricing, {
      strategy: 'hourly',
      ratesMinor: { MOTORCYCLE: 100, CAR: 200, BUS: 500 },
    });
    assert.deepEqual(parseLotConfig(lotJson({ pricing: { strategy: 'flat', flatRate: 12.5 } })).pricing, {
      strategy: 'flat',
      flatRateMinor: 1250,
    });
    assert.deepEqual(
      parseLotConfig(
        lotJson({
          pricing: {
            strategy: 'weekend',
            weekendMultiplier: 1.25,
            weekday: { strategy: 'hourly', rates: { CAR: 3 } },
          },
        }),
      ).pricing,
      {
        strategy: 'weekend',
        weekday: { strategy: 'hourly', ratesMinor: { MOTORCYCLE: 100, CAR: 300, BUS: 500 } },
        multiplierBasisPoints: 12_500,
        weekendDays: [6, 0],
      },
    );
  });

  const bad: [string, unknown, RegExp][] = [
    ['no floors', lotJson({ floors: [] }), /floors must have at least 1 item/],
    [
      'unknown spot type',
      lotJson({ floors: [{ floor: 1, spots: [{ id: 'X1', type: 'TRUCK' }] }] }),
      /floors\[0\]\.spots\[0\]\.type must be one of MOTORCYCLE\|COMPACT/,
    ],
    [
      'duplicate spot id',
      lotJson({
        floors: [
          {
            floor: 1,
            spots: [
              { id: 'X1', type: 'LARGE' },
              { id: 'X1', type: 'COMPACT' },
            ],
          },
        ],
      }),
      /spot id "X1" is used twice/,
    ],
    [
      'duplicate floor',
      lotJson({
        floors: [
          { floor: 1, spots: { LARGE: 1 } },
          { floor: 1, spots: { LARGE: 1 } },
        ],
      }),
      /floors\[1\]\.floor 1 appears twice/,
    ],
    [
      'bad time zone',
      lotJson({ timeZone: 'Mars/Olympus' }),
      /timeZone is not an IANA time zone, got "Mars\/Olympus"/,
    ],
    ['currency without cents', lotJson({ currency: 'JPY' }), /currency must be a currency with two decimals/],
    ['fee with three decimals', lotJson({ lostTicketFee: 1.234 }), /lostTicketFee must be an amount/],
    ['negative fee', lotJson({ lostTicketFee: -5 }), /lostTicketFee must be an amount/],
    [
      'unknown strategy',
      lotJson({ pricing: { strategy: 'dynamic' } }),
      /pricing\.strategy must be one of hourly\|flat\|weekend/,
    ],
    [
      'weekend on weekend',
      lotJson({ pricing: { strategy: 'weekend', weekendMultiplier: 2, weekday: { strategy: 'weekend' } } }),
      /pricing\.weekday/,
    ],
    [
      'zero multiplier',
      lotJson({
        pricing: { strategy: 'weekend', weekendMultiplier: 0, weekday: { strategy: 'flat', flatRate: 1 } },
      }),
      /pricing\.weekendMultiplier must be a number above 0/,
    ],
    [
      'bad weekend day',
      lotJson({
        pricing: {
          strategy: 'weekend',
          weekendMultiplier: 2,
          weekendDays: ['SUN'],
          weekday: { strategy: 'flat', flatRate: 1 },
        },
      }),
      /pricing\.weekendDays\[0\] must be one of SUNDAY/,
    ],
    ['a typo in a field name', { ...lotJson(), lostTicketfee: 5 }, /lostTicketfee is not a known field/],
    ['no exit panel', lotJson({ exitPanels: [] }), /exitPanels must have at least 1 item/],
    [
      'panel id used twice',
      lotJson({ exitPanels: [{ id: 'in-1' }] }),
      /exitPanels\[0\]\.id "in-1" is used twice/,
    ],
    [
      'negative spot count',
      lotJson({ floors: [{ floor: 1, spots: { LARGE: -1 } }] }),
      /floors\[0\]\.spots\.LARGE must be an integer/,
    ],
    ['not an object', [1, 2], /\(root\) must be an object/],
  ];
  for (const [label, json, message] of bad) {
    test(`refused with a message naming the problem: ${label}`, () => {
      assert.throws(
        () => parseLotConfig(json, 'lot.json'),
        (error: unknown) => {
          assert.ok(error instanceof LotConfigError && error instanceof ConfigError);
          assert.match(error.message, /^lot config lot\.json is invalid: /);
          assert.match(error.message, message);
          return true;
        },
      );
    });
  }

  test('every problem is listed at once', () => {
    assert.throws(
      () => parseLotConfig(lotJson({ timeZone: 'Nowhere', currency: 'usd' })),
      /timeZone.*; currency/,
    );
  });

  test('a missing file or broken JSON is named', () => {
    assert.throws(
      () => loadLotConfig('/nonexistent/lot.json'),
      /PARKING_LOT_CONFIG: cannot read \/nonexistent\/lot\.json: ENOENT/,
    );
    assert.throws(() => loadLotConfig(writeLot('{"id": ')), /is not valid JSON/);
  });

  test('start-up stops with status 2 and the message when the lot config is bad', () => {
    const path = writeLot(lotJson({ timeZone: 'Mars/Olympus' }));
    const run = spawnSync(process.execPath, ['src/main.ts'], {
      env: {
        ...process.env,
        PARKING_LOT_CONFIG: path,
        SERVICES: 'parking',
        DATA_DIR: 'memory://',
        DATABASE_URL: '',
        REDIS_URL: '',
        NATS_URL: '',
        PORT: '0',
        LOG_LEVEL: 'silent',
      },
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(run.status, 2, run.stderr);
    assert.match(
      run.stderr,
      /^configuration error: lot config .*lot\.json is invalid: timeZone is not an IANA time zone/m,
    );
  });
});
