import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { enter, exit, lotEnv, lotJson } from '../../../test/support/parking.ts';
import { createTestApp, type TestApp } from '../../../test/support/platform.ts';
import { TEST_CARDS } from '../../payments/api.ts';

let t: TestApp;
let plates = 0;

before(async () => {
  const lot = lotJson({
    timeZone: 'America/New_York',
    pricing: {
      strategy: 'weekend',
      weekendMultiplier: 1.5,
      weekendDays: ['SATURDAY', 'SUNDAY'],
      weekday: { strategy: 'hourly', rates: { MOTORCYCLE: 1, CAR: 2, BUS: 5 } },
    },
    floors: [{ floor: 1, spots: { COMPACT: 10 } }],
  });
  t = await createTestApp({ services: ['parking'], env: lotEnv(lot) });
});
after(() => t.close());

async function parked(at: string) {
  t.clock.set(at);
  const response = await enter(t, `RC${++plates}`);
  assert.equal(response.statusCode, 201, response.body);
  return response.json() as { ticketId: string; code: string; licensePlate: string };
}
const get = (url: string) => t.app.inject({ url });

describe('receipts', () => {
  test('a paid exit answers with its receipt: lot-zone times, "Xh Ym", the rule applied, the amount', async () => {
    // Monday 2026-01-05 09:10 in New York (14:10 UTC); out at 12:35 → 3 h 25 min, 3 whole hours.
    const ticket = await parked('2026-01-05T14:10:00Z');
    t.clock.set('2026-01-05T17:35:00Z');
    const unpaid = await exit(t, ticket.code);
    assert.equal(unpaid.json().receipt, null, 'no receipt before the payment');
    const receiptBefore = await get(`/api/v1/parking/tickets/${ticket.code}/receipt`);
    assert.equal(receiptBefore.statusCode, 409);
    assert.equal(receiptBefore.json().code, 'receipt_not_ready');

    const paid = await exit(t, ticket.code, { card: TEST_CARDS.success });
    assert.equal(paid.statusCode, 200, paid.body);
    const receipt = paid.json().receipt;
    assert.deepEqual(
      {
        code: receipt.code,
        plate: receipt.licensePlate,
        entry: receipt.local.entryTime,
        exit: receipt.local.exitTime,
        entryTime: receipt.entryTime,
        exitTime: receipt.exitTime,
        duration: receipt.duration,
        rule: receipt.rule,
        amount: receipt.amount,
        currency: receipt.currency,
        status: receipt.status,
        number: receipt.receiptNumber,
        url: receipt.url,
      },
      {
        code: ticket.code,
        plate: ticket.licensePlate,
        entry: 'Jan 5, 2026, 9:10 AM EST',
        exit: 'Jan 5, 2026, 12:35 PM EST',
        entryTime: '2026-01-05T14:10:00.000Z',
        exitTime: '2026-01-05T17:35:00.000Z',
        duration: '3h 25m',
        rule: 'Hourly rate for a car: 2.00 USD per full hour (at least one) × 3 h',
        amount: 6,
        currency: 'USD',
        status: 'COMPLETED',
        number: paid.json().paymentId,
        url: `/parking/receipts/${ticket.ticketId}`,
      },
    );
    // The same receipt by id and by code, to whoever holds the ticket.
    const byId = await get(`/api/v1/parking/tickets/${ticket.ticketId}/receipt`);
    const byCode = await get(`/api/v1/parking/tickets/${ticket.code.toLowerCase()}/receipt`);
    assert.equal(byId.statusCode, 200);
    assert.deepEqual(byId.json(), receipt);
    assert.deepEqual(byCode.json(), receipt);
  });

  test('a weekend entry names the multiplier; a summer stay is in EDT', async () => {
    // Saturday 2026-07-04 22:00 in New York (EDT) to Sunday 00:30: 2 h 30 min → 2 h × 2.00 × 1.5.
    const ticket = await parked('2026-07-05T02:00:00Z');
    t.clock.set('2026-07-05T04:30:00Z');
    const paid = (await exit(t, ticket.ticketId, { card: TEST_CARDS.success })).json();
    assert.equal(
      paid.receipt.rule,
      'Hourly rate for a car: 2.00 USD per full hour (at least one) × 2 h; weekend entry ×1.5',
    );
    assert.equal(paid.receipt.amount, 6);
    assert.equal(paid.receipt.local.entryTime, 'Jul 4, 2026, 10:00 PM EDT');
    assert.equal(paid.receipt.local.exitTime, 'Jul 5, 2026, 12:30 AM EDT');
    assert.equal(paid.receipt.duration, '2h 30m');
  });

  test('the printable page: the receipt in words; a typo, an unpaid ticket are pages in words', async () => {
    const ticket = await parked('2026-01-06T15:00:00Z');
    // The page /pay links back to (returnUrl): a state in words, not a broken link.
    const unpaid = await get(`/parking/receipts/${ticket.code}`);
    assert.equal(unpaid.statusCode, 200);
    assert.equal(unpaid.headers['cache-control'], 'private, no-store');
    assert.match(unpaid.body, /not paid yet/);
    t.clock.set('2026-01-06T15:45:00Z');
    await exit(t, ticket.code, { card: TEST_CARDS.success });
    const page = await get(`/parking/receipts/${ticket.code}`);
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.equal(page.headers['cache-control'], 'private, no-store');
    for (const text of [
      'Receipt',
      ticket.code,
      ticket.licensePlate,
      'Jan 6, 2026, 10:00 AM EST',
      'Jan 6, 2026, 10:45 AM EST',
      '0h 45m',
      'Hourly rate for a car: 2.00 USD per full hour (at least one) × 1 h',
      '2.00 USD',
    ]) {
      assert.ok(page.body.includes(text), text);
    }
    const typo = await get(
      `/parking/receipts/${ticket.code.slice(0, -1)}${ticket.code.endsWith('2') ? '3' : '2'}`,
    );
    assert.equal(typo.statusCode, 404);
    assert.match(typo.body, /No ticket with code .*, check the code on the ticket/);
  });
});
