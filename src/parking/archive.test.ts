import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { enter, exit, lotEnv, lotJson } from '../../test/support/parking.ts';
import { createTestApp, metricValue, type TestApp } from '../../test/support/platform.ts';
import { TEST_CARDS } from '../payments/api.ts';
import { ConfigError } from '../platform/config-error.ts';
import { loadParkingSettings } from './settings.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

let t: TestApp;

before(async () => {
  const lot = lotJson({ floors: [{ floor: 1, spots: { COMPACT: 10 } }] });
  t = await createTestApp({
    services: ['parking'],
    env: { ...lotEnv(lot), PARKING_TICKET_ARCHIVE_AFTER: '2d' },
  });
});
after(() => t?.close());

const db = () => t.adapters.database.db;
const lookup = (id: string) => t.app.inject({ url: `/api/v1/parking/tickets/${id}` });
const ids = async (table: string) =>
  (await sql<{ id: string }>`select id::text from ${sql.table(table)} order by id`.execute(db())).rows.map(
    (row) => row.id,
  );

async function parked(plate: string): Promise<string> {
  const response = await enter(t, plate);
  assert.equal(response.statusCode, 201, response.body);
  return response.json().ticketId;
}

describe('paid tickets move to the archive', () => {
  test('past the window with their payments; vehicles inside and recent tickets stay; lookups answer the same', async () => {
    t.clock.set('2026-01-05T12:00:00Z');
    const t0 = t.clock.now().getTime();
    // Paid after the exit grace period withdrew the first amount: two payments.
    const old = await parked('OLD1');
    const active = await parked('ACTIVE1');
    const lost = await parked('LOST1');
    assert.equal((await exit(t, old)).statusCode, 200);
    t.clock.advance(HOUR);
    const paid = await exit(t, old, { card: TEST_CARDS.success, panelId: 'out-1' });
    assert.equal(paid.statusCode, 200, paid.body);
    const reported = await t.app.inject({
      method: 'POST',
      url: '/api/v1/parking/tickets/lost',
      headers: t.asOperator,
      payload: { licensePlate: 'LOST1' },
    });
    assert.equal(reported.statusCode, 200, reported.body);
    const oldPayments = (await lookup(old)).json().payments;
    assert.equal(oldPayments.length, 2);
    // Paid an hour before the run: inside the window.
    t.clock.set(new Date(t0 + 3 * DAY - 2 * HOUR));
    const recent = await parked('NEW1');
    t.clock.advance(HOUR);
    assert.equal((await exit(t, recent, { card: TEST_CARDS.success })).statusCode, 200);

    const before = (await lookup(old)).json();
    const exitBefore = (await exit(t, old, { panelId: 'out-1' })).json();
    t.clock.set(new Date(t0 + 3 * DAY));
    assert.ok(await t.app.platform.scheduler.runTick('parking.retention', t.clock.now()));

    assert.deepEqual(await ids('parking_tickets'), [active, lost, recent].sort());
    assert.deepEqual(await ids('parking_tickets_archive'), [old]);
    assert.deepEqual(await ids('parking_payments_archive'), [...oldPayments].sort());
    const { rows: live } = await sql<{ n: number }>`
      select count(*)::int as n from parking_payments where ticket_id = ${old}`.execute(db());
    assert.equal(live[0].n, 0);
    const { rows: stamped } = await sql<{ archived_at: Date; status: string }>`
      select archived_at, status from parking_tickets_archive`.execute(db());
    assert.deepEqual(stamped, [{ archived_at: new Date(t0 + 3 * DAY), status: 'PAID' }]);
    assert.equal(await metricValue(t.app, 'retention_rows_removed_total', 'table="parking_tickets"'), 1);
    assert.equal(await metricValue(t.app, 'retention_lag_seconds', 'table="parking_tickets"'), 0);

    // The ticket id still answers, from the archive, exactly as before the move.
    const archived = await lookup(old);
    assert.equal(archived.statusCode, 200, archived.body);
    assert.deepEqual(archived.json(), before);
    assert.deepEqual((await exit(t, old, { panelId: 'out-1' })).json(), exitBefore);
    assert.equal((await lookup(active)).json().status, 'ACTIVE');
    assert.equal((await lookup(lost)).json().status, 'LOST');

    // A refund months later: the payments module refunds it, the archived payment records it.
    const refund = await t.app.inject({
      method: 'POST',
      url: `/api/v1/parking/tickets/${old}/refund`,
      headers: { 'x-admin-key': t.config.adminApiKey },
      payload: { reason: 'goodwill' },
    });
    assert.equal(refund.statusCode, 200, refund.body);
    assert.deepEqual([refund.json().status, refund.json().ticketStatus], ['REFUNDED', 'PAID']);
    assert.equal((await lookup(old)).json().payment.status, 'REFUNDED');
    assert.equal((await ids('parking_payments')).includes(before.payment.paymentId), false);

    // An unknown ticket is still 404.
    assert.equal((await lookup('0194c5a0-0000-7000-8000-000000000000')).statusCode, 404);
    assert.equal((await exit(t, '0194c5a0-0000-7000-8000-000000000000')).statusCode, 404);
  });
});

test('PARKING_TICKET_ARCHIVE_AFTER: 90 days by default; a bad value names the variable', () => {
  assert.equal(loadParkingSettings({}).archiveAfterMs, 90 * DAY);
  assert.equal(loadParkingSettings({ PARKING_TICKET_ARCHIVE_AFTER: '10m' }).archiveAfterMs, 10 * 60_000);
  for (const value of ['never', '90', '5s']) {
    assert.throws(
      () => loadParkingSettings({ PARKING_TICKET_ARCHIVE_AFTER: value }),
      (error) => error instanceof ConfigError && error.message.startsWith('PARKING_TICKET_ARCHIVE_AFTER'),
    );
  }
});
