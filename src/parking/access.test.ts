import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { card, enter, exit, lotEnv, lotJson } from '../../test/support/parking.ts';
import { paymentsApi } from '../../test/support/payments.ts';
import { createTestApp, type TestApp } from '../../test/support/platform.ts';
import { type PaymentsApi, TEST_CARDS } from '../payments/api.ts';
import { generateSecret } from '../platform/auth/production.ts';

// Who may call what in the parking API: the lot's panels (operator `parking:panel`) let cars in
// and out, attendants (`parking:attendant`) handle lost tickets, whoever holds a ticket id may
// follow and pay it, admins refund; availability and boards are public.
const GATE_KEY = 'gate-key-0123456789abcdef';
const ATTENDANT_KEY = 'attendant-key-0123456789abcdef';
const DOOR_KEY = 'door-key-0123456789abcdef';
const gate = { 'x-operator-key': GATE_KEY };
const attendant = { 'x-operator-key': ATTENDANT_KEY };
const door = { 'x-operator-key': DOOR_KEY };

let t: TestApp;
let payments: PaymentsApi;
let plates = 0;

before(async () => {
  const lot = lotJson({ floors: [{ floor: 1, spots: { COMPACT: 20, LARGE: 5 } }] });
  t = await createTestApp({
    services: ['parking'],
    env: {
      ...lotEnv(lot),
      OPERATOR_KEYS: [
        'demo * dev-operator-key',
        `gate-1 parking:panel ${GATE_KEY}`,
        `attendant parking:attendant ${ATTENDANT_KEY}`,
        `door booking:door ${DOOR_KEY}`,
      ].join('; '),
    },
  });
  payments = paymentsApi(t.app);
});
after(() => t.close());

const tickets = async () =>
  (await sql<{ n: number }>`select count(*)::int as n from parking_tickets`.execute(t.adapters.database.db))
    .rows[0].n;
const ticket = async (id: string) => (await t.app.inject({ url: `/api/v1/parking/tickets/${id}` })).json();

async function parked(vehicleType = 'CAR') {
  const response = await enter(t, `AC${++plates}`, vehicleType);
  assert.equal(response.statusCode, 201, response.body);
  return { id: response.json().ticketId as string, plate: `AC${plates}` };
}

function post(url: string, payload: unknown, headers: Record<string, string> = {}) {
  return t.app.inject({ method: 'POST', url, headers, payload: payload as object });
}

function assertProblem(response: Awaited<ReturnType<typeof post>>, status: number, code: string) {
  assert.equal(response.statusCode, status, response.body);
  assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
  assert.equal(response.json().code, code, response.body);
}

describe("the lot's panels", () => {
  test('entry: no operator key 401, a key without parking:panel 403, the panel 201', async () => {
    const car = { licensePlate: 'PANEL1', vehicleType: 'CAR' };
    const before = await tickets();
    assertProblem(await post('/api/v1/parking/entry', car), 401, 'unauthorized');
    assertProblem(await post('/api/v1/parking/entry', car, door), 403, 'forbidden');
    assertProblem(await post('/api/v1/parking/entry', car, attendant), 403, 'forbidden');
    assertProblem(
      await post('/api/v1/parking/entry', car, { 'x-operator-key': 'not-a-key-0123456789' }),
      401,
      'unauthorized',
    );
    assert.equal(await tickets(), before, 'no ticket was issued to a refused caller');
    assert.equal((await post('/api/v1/parking/entry', car, gate)).statusCode, 201);
  });

  test('exit: no operator key 401, a key without parking:panel 403; nothing is asked or charged', async () => {
    const { id } = await parked();
    const leave = { ticketId: id, payment: card(TEST_CARDS.success) };
    assertProblem(
      await post('/api/v1/parking/exit', leave, { 'idempotency-key': `x-${id}` }),
      401,
      'unauthorized',
    );
    assertProblem(
      await post('/api/v1/parking/exit', leave, { ...door, 'idempotency-key': `x-${id}` }),
      403,
      'forbidden',
    );
    assert.deepEqual(await payments.listByReference('parking', id), [], 'no payment was made');
    assert.equal((await ticket(id)).status, 'ACTIVE');
    const paid = await post('/api/v1/parking/exit', leave, { ...gate, 'idempotency-key': `x-${id}` });
    assert.equal(paid.statusCode, 200, paid.body);
    assert.equal(paid.json().ticketStatus, 'PAID');
  });
});

describe('lost tickets: attendants only', () => {
  test('a plate alone is 401 and the panel is 403: the waiting exit payment stays, the ticket ACTIVE', async () => {
    const { id, plate } = await parked();
    const due = (await exit(t, id)).json();
    assertProblem(await post('/api/v1/parking/tickets/lost', { licensePlate: plate }), 401, 'unauthorized');
    assertProblem(
      await post('/api/v1/parking/tickets/lost', { licensePlate: plate }, gate),
      403,
      'forbidden',
    );
    assert.equal((await payments.get(due.paymentId))?.status, 'PENDING', 'not withdrawn');
    const refused = await ticket(id);
    assert.equal(refused.status, 'ACTIVE');
    assert.equal(refused.lostAt, null);

    const lost = await post('/api/v1/parking/tickets/lost', { licensePlate: plate }, attendant);
    assert.equal(lost.statusCode, 200, lost.body);
    assert.equal(lost.json().ticketStatus, 'LOST');
  });

  const lostFee = async (vehicleType: string, hours: number) => {
    const { plate } = await parked(vehicleType);
    t.clock.advance(hours * 3600_000);
    const response = await post('/api/v1/parking/tickets/lost', { licensePlate: plate }, attendant);
    assert.equal(response.statusCode, 200, response.body);
    return response.json().amount;
  };

  test('the fee is the lost-ticket fee while the stay has cost less', async () => {
    assert.equal(await lostFee('CAR', 5), 50, '5 h of a car: 10.00 < 50.00');
    assert.equal(await lostFee('CAR', 25), 50, '25 h: 50.00, equal');
  });

  test('the fee is what the stay has reached when that is more than the lost-ticket fee', async () => {
    assert.equal(await lostFee('CAR', 30), 60, '30 h of a car at 2.00');
    assert.equal(await lostFee('BUS', 11), 55, '11 h of a bus at 5.00');
  });
});

describe('tickets, boards and refunds', () => {
  test("a ticket's status needs no credentials (the ticket id is the capability), nor do availability, boards and the lot", async () => {
    const { id } = await parked();
    const status = await t.app.inject({ url: `/api/v1/parking/tickets/${id}` });
    assert.equal(status.statusCode, 200);
    assert.equal(status.json().ticketId, id);
    for (const url of ['/api/v1/parking/availability', '/api/v1/parking/boards', '/api/v1/parking/lot']) {
      assert.equal((await t.app.inject({ url })).statusCode, 200, url);
    }
  });

  test('refunds are for admins: an operator key is no admin key', async () => {
    const { id } = await parked();
    await exit(t, id, { card: TEST_CARDS.success });
    const refund = (headers: Record<string, string>) =>
      post(`/api/v1/parking/tickets/${id}/refund`, { reason: 'goodwill' }, headers);
    assertProblem(await refund(t.asOperator), 401, 'unauthorized');
    assertProblem(await refund(attendant), 401, 'unauthorized');
    assert.equal((await refund(t.asAdmin)).json().status, 'REFUNDED');
  });

  test('/openapi.json says who may call each parking operation', async () => {
    const spec = (await t.app.inject({ url: '/openapi.json' })).json();
    const security = (method: string, path: string) => spec.paths[`/api/v1/parking${path}`][method].security;
    const operator = (scope: string) => [{ operatorKey: [scope] }, { staffSession: [scope] }];
    assert.deepEqual(security('post', '/entry'), operator('parking:panel'));
    assert.deepEqual(security('post', '/exit'), operator('parking:panel'));
    assert.deepEqual(security('post', '/tickets/lost'), operator('parking:attendant'));
    assert.deepEqual(security('post', '/tickets/{ticketId}/refund'), [
      { adminKey: [] },
      { staffSession: ['admin'] },
    ]);
    for (const path of [
      '/availability',
      '/boards',
      '/boards/stream',
      '/lot',
      '/tickets/{ticketId}',
      '/tickets/{ticketId}/events',
      '/tickets/{ticketId}/qr',
      '/tickets/{ticketId}/payment-qr',
      '/tickets/{ticketId}/receipt',
    ]) {
      assert.deepEqual(security('get', path), [], path);
    }
    assert.match(
      spec.paths['/api/v1/parking/tickets/{ticketId}'].get.description,
      /ticket id or its short code \(`ABCD-EFGH`\) is the capability/,
    );
  });
});

describe('pages', () => {
  test('development: the panel pages sign the demo operator in, and the page session works their API calls', async () => {
    const boards = await t.app.inject({ url: '/parking/boards' });
    assert.equal(boards.statusCode, 200);
    assert.equal(boards.headers['set-cookie'], undefined, 'the boards are public');

    const entryPage = await t.app.inject({ url: '/parking/entry?panel=in-1' });
    assert.equal(entryPage.statusCode, 200);
    const cookie = String(entryPage.headers['set-cookie']).split(';')[0];
    assert.match(cookie, /^staff_session=/);
    const entered = await post(
      '/api/v1/parking/entry',
      { licensePlate: 'PAGE1', vehicleType: 'CAR' },
      { cookie },
    );
    assert.equal(entered.statusCode, 201, entered.body);

    const exitPage = await t.app.inject({ url: '/parking/exit?panel=out-1' });
    assert.equal(exitPage.statusCode, 200);
    const exitCookie = String(exitPage.headers['set-cookie']).split(';')[0];
    // The demo operator has every scope, so the exit panel's lost-ticket action works too.
    assert.match(exitPage.body, /data-lost-form/);
    const lost = await post(
      '/api/v1/parking/tickets/lost',
      { licensePlate: 'PAGE1' },
      { cookie: exitCookie },
    );
    assert.equal(lost.statusCode, 200, lost.body);
    // The panel pays a lost ticket by its id, which needs no more than parking:panel.
    const paid = await post(
      '/api/v1/parking/exit',
      { ticketId: lost.json().ticketId, payment: card(TEST_CARDS.success) },
      { ...gate, 'idempotency-key': `lost-${lost.json().ticketId}` },
    );
    assert.deepEqual([paid.json().kind, paid.json().ticketStatus], ['LOST', 'PAID']);
  });

  test("a panel's own session sees no lost-ticket form: only attendants may charge one", async () => {
    const signIn = await post('/sign-in', { key: GATE_KEY, next: '/parking/exit' });
    assert.equal(signIn.statusCode, 303);
    const cookie = String(signIn.headers['set-cookie']).split(';')[0];
    const page = await t.app.inject({ url: '/parking/exit', headers: { cookie } });
    assert.equal(page.statusCode, 200);
    assert.doesNotMatch(page.body, /data-lost-form/);
    assert.match(page.body, /data-lost-note/);
    const lost = await post('/api/v1/parking/tickets/lost', { licensePlate: 'PAGE1' }, { cookie });
    assertProblem(lost, 403, 'forbidden');
  });

  test('production: the panel pages send the browser to sign in; the boards stay public', async () => {
    const strong = generateSecret;
    const prod = await createTestApp({
      services: ['parking'],
      env: {
        ...lotEnv(),
        NODE_ENV: 'production',
        APP_SECRET: strong(),
        ADMIN_API_KEY: strong(),
        PAYMENT_WEBHOOK_SECRET: strong(),
        OPERATOR_KEYS: `gate-1 parking:panel ${strong()}`,
        PAYMENTS_SANDBOX: 'true',
      },
    });
    try {
      for (const url of ['/parking/entry?panel=in-1', '/parking/exit']) {
        const page = await prod.app.inject({ url });
        assert.equal(page.statusCode, 303, url);
        assert.equal(page.headers.location, `/sign-in?next=${encodeURIComponent(url)}`);
        assert.equal(page.headers['set-cookie'], undefined);
      }
      for (const url of ['/parking', '/parking/boards']) {
        assert.equal((await prod.app.inject({ url })).statusCode, 200, url);
      }
    } finally {
      await prod.close();
    }
  });
});
