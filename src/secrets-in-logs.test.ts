import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { type RunningServer, startServer } from '../test/support/browser.ts';
import { lotJson, writeLot } from '../test/support/parking.ts';

/**
 * Secrets never reach the logs: a real server process logging at `trace` with a line per
 * request is sent API keys, paste passwords, full card numbers and the admin key — in headers,
 * bodies, and bodies that fail validation — and none of them appears in what it wrote.
 */
const ADMIN_KEY = `admin-${randomUUID()}`;
const OPERATOR_KEY = `panel-${randomUUID()}`;
const PASSWORD = `pw-${randomUUID()}`;
const CARD = '4242424242424242';
let server: RunningServer;

before(async () => {
  server = await startServer({
    SERVICES: 'paste,parking',
    LOG_LEVEL: 'trace',
    LOG_REQUESTS: 'true',
    ADMIN_API_KEY: ADMIN_KEY,
    OPERATOR_KEYS: `panel parking:panel ${OPERATOR_KEY}`,
    PARKING_LOT_CONFIG: writeLot(lotJson()),
  });
});
after(() => server?.stop());

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

test('API keys, passwords, card numbers, operator and admin keys never appear in the logs', async () => {
  const user = await post('/api/v1/users', { email: `${randomUUID()}@example.org` });
  assert.equal(user.status, 201);
  const { api_key: apiKey } = (await user.json()) as { api_key: string };
  const bearer = { authorization: `Bearer ${apiKey}` };

  const paste = await post('/api/v1/paste', { content: 'secret stuff', password: PASSWORD }, bearer);
  assert.equal(paste.status, 201);
  const { short_url: id } = (await paste.json()) as { short_url: string };
  const read = (password: string) =>
    fetch(`${server.url}/api/v1/paste/${id}`, { headers: { ...bearer, 'x-paste-password': password } });
  assert.equal((await read(PASSWORD)).status, 200);
  assert.equal((await read(`${PASSWORD}-wrong`)).status, 401);
  // A malformed body that carries the password: refused, and the refusal does not echo it.
  assert.equal(
    (await post('/api/v1/paste', { content: 'x', password: PASSWORD, expires_in: 'never-ish' })).status,
    400,
  );

  const panel = { 'x-operator-key': OPERATOR_KEY };
  const entry = await post('/api/v1/parking/entry', { licensePlate: 'SEC 1', vehicleType: 'CAR' }, panel);
  assert.equal(entry.status, 201);
  const { ticketId } = (await entry.json()) as { ticketId: string };
  const card = { card_number: CARD, exp_month: 12, exp_year: 2030, cvc: '123' };
  const paid = await post(
    '/api/v1/parking/exit',
    { ticketId, payment: card },
    { ...panel, 'idempotency-key': randomUUID() },
  );
  assert.equal(paid.status, 200, await paid.clone().text());
  const badCard = { ...card, exp_month: 13 };
  const refused = await post(
    '/api/v1/parking/exit',
    { ticketId, payment: badCard },
    { ...panel, 'idempotency-key': randomUUID() },
  );
  assert.equal(refused.status, 400);

  const admin = await fetch(`${server.url}/api/v1/parking/tickets/${ticketId}/refund`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-admin-key': ADMIN_KEY },
    body: JSON.stringify({ reason: 'test' }),
  });
  assert.ok(admin.status < 500);
  const wrongAdmin = await fetch(`${server.url}/api/v1/parking/tickets/${ticketId}/refund`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-admin-key': `${ADMIN_KEY}x` },
    body: '{}',
  });
  assert.equal(wrongAdmin.status, 401);

  await new Promise((resolve) => setTimeout(resolve, 300));
  const logs = server.output();
  // The requests were logged (with their URLs): otherwise this test could not fail.
  assert.ok(
    logs.includes(`/api/v1/paste/${id}`) && logs.includes('/api/v1/parking/exit'),
    'requests are logged',
  );
  for (const [what, secret] of [
    ['API key', apiKey],
    ['paste password', PASSWORD],
    ['card number', CARD],
    ['admin key', ADMIN_KEY],
    ['operator key', OPERATOR_KEY],
  ]) {
    assert.equal(logs.includes(secret), false, `the ${what} appears in the logs`);
  }
});
