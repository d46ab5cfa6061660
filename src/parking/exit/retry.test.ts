import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { enter, exit, lotEnv, lotJson } from '../../../test/support/parking.ts';
import { card, paymentsApi } from '../../../test/support/payments.ts';
import { createTestApp, type TestApp } from '../../../test/support/platform.ts';
import { type PaymentsApi, TEST_CARDS } from '../../payments/api.ts';
import { TICKETS_CHANNEL, type TicketEvent } from '../boards/events.ts';

// A declined card leaves the ticket's payment payable: the next card at the panel or on the
// hosted page pays that same payment, once; the grace period or a lost ticket withdraws it.
let t: TestApp;
let payments: PaymentsApi;
const ticketEvents: TicketEvent[] = [];
let plates = 0;

before(async () => {
  const lot = lotJson({ exitGraceMinutes: 15, floors: [{ floor: 1, spots: { COMPACT: 30 } }] });
  t = await createTestApp({ services: ['parking'], env: { ...lotEnv(lot), PAYMENT_TIMEOUT_MS: '100' } });
  payments = paymentsApi(t.app);
  await t.adapters.pubsub.subscribe(TICKETS_CHANNEL, (message) => ticketEvents.push(message as TicketEvent));
});
after(() => t.close());

async function parked() {
  t.clock.set('2026-01-05T12:00:00Z');
  const response = await enter(t, `RT${++plates}`);
  assert.equal(response.statusCode, 201, response.body);
  return response.json().ticketId as string;
}
const ticket = async (id: string) => (await t.app.inject({ url: `/api/v1/parking/tickets/${id}` })).json();
/**
 * The ticket once `done` holds: an outcome on the hosted page reaches parking through the payments
 * module's handler, which the sandbox's webhook may run just after the page's answer.
 */
async function ticketWhen(
  id: string,
  done: (ticket: { status: string; payment: { status: string } }) => boolean,
) {
  let current = await ticket(id);
  for (let i = 0; i < 100 && !done(current); i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    current = await ticket(id);
  }
  return current;
}
/** What the hosted page's script sends with the card typed in. */
const payOnPage = (paymentId: string, number: string) =>
  t.app.inject({
    method: 'POST',
    url: `/api/v1/payments/${paymentId}/pay`,
    payload: { payment_method: 'CARD', payment_details: card(number) },
  });
const payPage = (paymentId: string) => t.app.inject({ url: `/pay/${paymentId}` });
/** The gateway's books for one payment: every charge tried, in order (what a real gateway keeps). */
const charges = async (paymentId: string) =>
  (
    await sql<{ status: string; last4: string }>`select status, last4 from payments_sandbox_charges
      where payment_id = ${paymentId} order by created_at, id`.execute(t.adapters.database.db)
  ).rows.map((row) => `${row.status} ${row.last4}`);
const parkingPayments = async (ticketId: string) =>
  (
    await sql<{ id: string; status: string }>`select id, status from parking_payments
      where ticket_id = ${ticketId} order by created_at, id`.execute(t.adapters.database.db)
  ).rows;
/** gate_open events of a ticket once the pub/sub had time to deliver every one of them. */
async function gateOpenings(ticketId: string) {
  const count = () => ticketEvents.filter((e) => e.type === 'gate_open' && e.ticketId === ticketId).length;
  for (let i = 0; i < 200 && count() === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  await new Promise((resolve) => setTimeout(resolve, 200)); // a second one would have arrived by now
  return count();
}

describe('a declined card can be followed by another', () => {
  test('at the panel: 402, the same payment stays payable, 4242 then pays it (one payment, one charge)', async () => {
    const id = await parked();
    t.clock.advance(61 * 60_000);
    const declined = await exit(t, id, { card: TEST_CARDS.declined, panelId: 'out-1' });
    assert.equal(declined.statusCode, 402, declined.body);
    const problem = declined.json();
    assert.equal(
      problem.detail,
      'The card was declined. Nothing was charged and the gate stays closed: try another card, or pay on your phone.',
    );
    assert.deepEqual([problem.paymentStatus, problem.ticketStatus], ['FAILED', 'ACTIVE']);

    // Asked again without a card: the same payment, FAILED but payable (the panel's phone QR).
    const again = await exit(t, id, { panelId: 'out-1' });
    assert.equal(again.statusCode, 200, again.body);
    assert.deepEqual(
      [again.json().paymentId, again.json().status, again.json().failureReason],
      [problem.paymentId, 'FAILED', 'card_declined'],
    );
    const page = await payPage(problem.paymentId);
    assert.match(page.body, /The card was declined\. Nothing was charged: you can try another card\./);
    assert.match(page.body, /<form id="pay-form"/);

    const paid = await exit(t, id, { card: TEST_CARDS.success, panelId: 'out-1' });
    assert.equal(paid.statusCode, 200, paid.body);
    assert.deepEqual(
      [paid.json().paymentId, paid.json().status, paid.json().ticketStatus],
      [problem.paymentId, 'COMPLETED', 'PAID'],
    );
    const after = await ticket(id);
    assert.equal(after.status, 'PAID');
    assert.deepEqual(after.payments, [problem.paymentId], 'no second payment');
    assert.deepEqual(await parkingPayments(id), [{ id: problem.paymentId, status: 'COMPLETED' }]);
    const all = await payments.listByReference('parking', id);
    assert.deepEqual(
      all.map((payment) => [payment.id, payment.status]),
      [[problem.paymentId, 'COMPLETED']],
    );
    // The payments module keeps no attempt list; the gateway's books hold the declined attempt.
    assert.deepEqual(await charges(problem.paymentId), ['failed 0002', 'succeeded 4242']);
    assert.equal(await gateOpenings(id), 1);
  });

  test('on the hosted page: declined, then 4242 on the same page pays the ticket', async () => {
    const id = await parked();
    t.clock.advance(30 * 60_000);
    const due = (await exit(t, id, { panelId: 'out-1' })).json();
    assert.equal(due.status, 'PENDING');
    assert.equal((await payments.get(due.paymentId))?.allowRetry, true);

    const declined = await payOnPage(due.paymentId, TEST_CARDS.declined);
    assert.equal(declined.statusCode, 402, declined.body);
    assert.equal(declined.json().retry_allowed, true);
    const failed = await ticketWhen(id, (now) => now.payment.status === 'FAILED');
    assert.deepEqual(
      [failed.status, failed.payment.paymentId, failed.payment.status, failed.payment.failureReason],
      ['ACTIVE', due.paymentId, 'FAILED', 'card_declined'],
    );
    assert.match((await payPage(due.paymentId)).body, /<form id="pay-form"/, 'the page still takes a card');

    const paid = await payOnPage(due.paymentId, TEST_CARDS.success);
    assert.equal(paid.statusCode, 200, paid.body);
    const after = await ticketWhen(id, (now) => now.status === 'PAID');
    assert.deepEqual(
      [after.status, after.payment.status, after.payments],
      ['PAID', 'COMPLETED', [due.paymentId]],
    );
    assert.deepEqual(await charges(due.paymentId), ['failed 0002', 'succeeded 4242']);
    assert.equal(await gateOpenings(id), 1);
    const exitAgain = (await exit(t, id, { panelId: 'out-1' })).json();
    assert.deepEqual([exitAgain.paymentId, exitAgain.status], [due.paymentId, 'COMPLETED']);
  });

  test('a retry whose charge does not answer: parking follows FAILED → PENDING → COMPLETED', async () => {
    const id = await parked();
    const problem = (await exit(t, id, { card: TEST_CARDS.declined })).json();
    const pending = await exit(t, id, { card: TEST_CARDS.noAnswer });
    assert.equal(pending.statusCode, 202, pending.body);
    assert.deepEqual([pending.json().paymentId, pending.json().status], [problem.paymentId, 'PENDING']);
    assert.equal((await ticket(id)).payment.status, 'PENDING');
    await payments.sandbox.settle(problem.paymentId, 'succeeded');
    assert.deepEqual([(await ticket(id)).status, (await ticket(id)).payment.status], ['PAID', 'COMPLETED']);
    assert.equal(await gateOpenings(id), 1);
  });

  test('the grace period passes after a decline: the old payment is withdrawn, its page can no longer be paid', async () => {
    const id = await parked();
    t.clock.advance(61 * 60_000);
    const old = (await exit(t, id, { card: TEST_CARDS.declined })).json();
    assert.equal(old.amount, 2);
    t.clock.advance(2 * 3600_000);
    const fresh = await exit(t, id);
    assert.equal(fresh.statusCode, 200, fresh.body);
    assert.notEqual(fresh.json().paymentId, old.paymentId);
    assert.deepEqual([fresh.json().amount, fresh.json().status], [6, 'PENDING']);

    const withdrawn = await payments.get(old.paymentId);
    assert.deepEqual(
      [withdrawn?.status, withdrawn?.failureCode, withdrawn?.allowRetry],
      ['FAILED', 'canceled', false],
    );
    const refused = await payOnPage(old.paymentId, TEST_CARDS.success);
    assert.equal(refused.statusCode, 409, refused.body);
    assert.equal(refused.json().code, 'payment_not_payable');
    const page = await payPage(old.paymentId);
    assert.match(
      page.body,
      /This payment was replaced or withdrawn and can no longer be paid\. Nothing was charged/,
    );
    assert.doesNotMatch(page.body, /<form/);
    assert.match(page.body, new RegExp(`href="/parking/receipts/${id}">See what is due now`));
    // That page: not paid yet, and a link to the payment due now.
    const ticketPage = await t.app.inject({ url: `/parking/receipts/${id}` });
    assert.equal(ticketPage.statusCode, 200);
    assert.match(ticketPage.body, new RegExp(`href="${fresh.json().paymentUrl}">Pay 6.00 USD now`));
    assert.deepEqual(
      (await parkingPayments(id)).map((payment) => payment.status),
      ['FAILED', 'PENDING'],
      'the old one out of the live index',
    );
    assert.equal((await ticket(id)).payment.paymentId, fresh.json().paymentId);

    const paid = await exit(t, id, { card: TEST_CARDS.success });
    assert.deepEqual([paid.json().status, paid.json().ticketStatus], ['COMPLETED', 'PAID']);
    assert.deepEqual(await charges(old.paymentId), ['failed 0002'], 'nothing charged on the old one');
  });

  test('a lost ticket after a decline withdraws the declined exit payment', async () => {
    const id = await parked();
    const declined = (await exit(t, id, { card: TEST_CARDS.declined })).json();
    const lost = await t.app.inject({
      method: 'POST',
      url: '/api/v1/parking/tickets/lost',
      headers: t.asOperator,
      payload: { licensePlate: `RT${plates}`, panelId: 'out-1' },
    });
    assert.equal(lost.statusCode, 200, lost.body);
    assert.equal(lost.json().kind, 'LOST');
    assert.notEqual(lost.json().paymentId, declined.paymentId);
    assert.equal((await payments.get(declined.paymentId))?.failureCode, 'canceled');
    assert.equal((await payOnPage(declined.paymentId, TEST_CARDS.success)).statusCode, 409);
  });

  test("a card at the panel while the page's retry is still charging: 202 waiting, never 402; one charge", async () => {
    const id = await parked();
    const problem = (await exit(t, id, { card: TEST_CARDS.declined })).json();
    const onPage = await payOnPage(problem.paymentId, TEST_CARDS.noAnswer);
    assert.equal(onPage.statusCode, 202, onPage.body);
    const panel = await exit(t, id, { card: TEST_CARDS.success });
    assert.equal(panel.statusCode, 202, panel.body);
    assert.deepEqual([panel.json().paymentId, panel.json().status], [problem.paymentId, 'PENDING']);
    await payments.sandbox.settle(problem.paymentId, 'succeeded');
    assert.equal((await ticket(id)).status, 'PAID');
    assert.deepEqual(await charges(problem.paymentId), ['failed 0002', 'succeeded 0119']);
    assert.equal(await gateOpenings(id), 1);
  });

  test('a retry at the panel and on the page at once charges once', async () => {
    for (let round = 0; round < 4; round++) {
      const id = await parked();
      const problem = (await exit(t, id, { card: TEST_CARDS.declined })).json();
      const [panel, page] = await Promise.all([
        exit(t, id, { card: TEST_CARDS.success }),
        payOnPage(problem.paymentId, TEST_CARDS.success),
      ]);
      assert.ok([200, 202].includes(panel.statusCode), `panel: ${panel.statusCode} ${panel.body}`);
      assert.ok([200, 409].includes(page.statusCode), `page: ${page.statusCode} ${page.body}`);
      assert.equal(panel.json().paymentId, problem.paymentId);
      const succeeded = (await charges(problem.paymentId)).filter((c) => c.startsWith('succeeded'));
      assert.equal(succeeded.length, 1, 'one charge');
      const after = await ticketWhen(id, (now) => now.status === 'PAID');
      assert.deepEqual([after.status, after.payments], ['PAID', [problem.paymentId]]);
      assert.equal((await payments.get(problem.paymentId))?.status, 'COMPLETED');
      assert.equal(await gateOpenings(id), 1);
    }
  });
});
