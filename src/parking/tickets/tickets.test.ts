import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { enter, exit, lotEnv, lotJson } from '../../../test/support/parking.ts';
import { createTestApp, type TestApp } from '../../../test/support/platform.ts';
import { TEST_CARDS } from '../../payments/api.ts';
import { checkCharacter, isValidCode, normaliseCode } from './codes.ts';

let t: TestApp;
let plates = 0;

before(async () => {
  t = await createTestApp({
    services: ['parking'],
    env: lotEnv(lotJson({ floors: [{ floor: 1, spots: { COMPACT: 20, LARGE: 2 } }] })),
  });
});
after(() => t.close());

async function parked() {
  t.clock.set('2026-01-05T12:00:00Z');
  const response = await enter(t, `CD${++plates}`);
  assert.equal(response.statusCode, 201, response.body);
  return response.json() as { ticketId: string; code: string; licensePlate: string };
}
const get = (url: string) => t.app.inject({ url });
/** A well-formed code (its check character right) that no ticket has. */
function unusedCode(taken: string): string {
  for (const body of ['2345678', '3456789', '456789A']) {
    const code = body + checkCharacter(body);
    if (code !== normaliseCode(taken)) return `${code.slice(0, 4)}-${code.slice(4)}`;
  }
  throw new Error('unreachable');
}

describe('short ticket codes', () => {
  test('entry prints a short code with a valid check character, unique among the cars inside', async () => {
    const tickets = await Promise.all(Array.from({ length: 8 }, () => parked()));
    for (const ticket of tickets) {
      assert.match(ticket.code, /^[2-9A-HJ-NP-Y]{4}-[2-9A-HJ-NP-Y]{4}$/);
      assert.ok(isValidCode(normaliseCode(ticket.code)));
    }
    assert.equal(new Set(tickets.map((ticket) => ticket.code)).size, tickets.length);
    const inDb = await t.adapters.database.db
      .selectFrom('parking_tickets' as never)
      .select(['code' as never])
      .where('id' as never, '=', tickets[0].ticketId as never)
      .executeTakeFirstOrThrow();
    assert.equal((inDb as { code: string }).code, normaliseCode(tickets[0].code));
  });

  test('status, exit and pay by code (any case, without the dash) answer as by id', async () => {
    const ticket = await parked();
    const typed = ticket.code.replace('-', '').toLowerCase();
    const byCode = await get(`/api/v1/parking/tickets/${typed}`);
    assert.equal(byCode.statusCode, 200, byCode.body);
    assert.equal(byCode.json().ticketId, ticket.ticketId);
    assert.equal(byCode.json().code, ticket.code);

    t.clock.advance(61 * 60_000);
    const due = await exit(t, ` ${typed} `);
    assert.equal(due.statusCode, 200, due.body);
    assert.deepEqual(
      [due.json().ticketId, due.json().code, due.json().amount],
      [ticket.ticketId, ticket.code, 2],
    );
    const paid = await exit(t, ticket.code, { card: TEST_CARDS.success });
    assert.equal(paid.statusCode, 200, paid.body);
    assert.deepEqual([paid.json().status, paid.json().ticketStatus], ['COMPLETED', 'PAID']);
    assert.equal(paid.json().paidAt, t.clock.now().toISOString());
    // After the exit the code still names this (paid) ticket: its status and receipt.
    assert.equal((await get(`/api/v1/parking/tickets/${ticket.code}`)).json().status, 'PAID');
  });

  test('a typo or an unknown code answers 404 in words, never a format error; nothing changes', async () => {
    const ticket = await parked();
    const typo = ticket.code.slice(0, -1) + (ticket.code.endsWith('2') ? '3' : '2');
    for (const ref of [typo, unusedCode(ticket.code)]) {
      const response = await exit(t, ref);
      assert.equal(response.statusCode, 404, response.body);
      assert.equal(response.json().code, 'ticket_not_found');
      assert.equal(response.json().detail, `No ticket with code ${ref}, check the code on the ticket`);
      assert.doesNotMatch(response.body, /format|uuid|must match/i);
      const status = await get(`/api/v1/parking/tickets/${encodeURIComponent(ref)}`);
      assert.equal(status.statusCode, 404);
    }
    const garbage = await exit(t, 'hello world');
    assert.equal(garbage.statusCode, 404);
    assert.equal(garbage.json().detail, 'No ticket with code hello world, check the code on the ticket');
    assert.equal((await get(`/api/v1/parking/tickets/${ticket.ticketId}`)).json().exitTime, null);
  });

  test('a declined card is told in words: no failure codes, no ticket states', async () => {
    const ticket = await parked();
    const response = await exit(t, ticket.code, { card: TEST_CARDS.declined });
    assert.equal(response.statusCode, 402, response.body);
    assert.equal(
      response.json().detail,
      'The card was declined. Nothing was charged and the gate stays closed: try another card, or pay on your phone.',
    );
    assert.equal(response.json().failureReason, 'card_declined', 'the code stays for machines');
  });

  test('QR codes as SVG: the ticket code, and the payment page once an amount is due', async () => {
    const ticket = await parked();
    const qr = await get(`/api/v1/parking/tickets/${ticket.code}/qr`);
    assert.equal(qr.statusCode, 200);
    assert.match(String(qr.headers['content-type']), /^image\/svg\+xml/);
    assert.match(qr.body, /^<svg [^>]*viewBox="0 0 \d+ \d+"/);
    assert.match(qr.body, /<path /);

    const early = await get(`/api/v1/parking/tickets/${ticket.ticketId}/payment-qr`);
    assert.equal(early.statusCode, 409);
    assert.equal(early.json().code, 'no_payment_due');
    await exit(t, ticket.ticketId);
    const pay = await get(`/api/v1/parking/tickets/${ticket.code}/payment-qr`);
    assert.equal(pay.statusCode, 200);
    assert.match(pay.body, /^<svg /);
    assert.equal(pay.headers['cache-control'], 'no-store');
    // A different text makes a different image: the payment QR is not the ticket's.
    assert.notEqual(pay.body, qr.body);
    assert.equal((await get(`/api/v1/parking/tickets/${unusedCode(ticket.code)}/qr`)).statusCode, 404);
  });

  test('the ticket stream takes a code too: an unknown one is 404 before the stream opens', async () => {
    const ticket = await parked();
    const unknown = await get(`/api/v1/parking/tickets/${unusedCode(ticket.code)}/events`);
    assert.equal(unknown.statusCode, 404);
  });
});
