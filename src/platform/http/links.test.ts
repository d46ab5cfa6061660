import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createTestApp, type TestApp } from '../../../test/support/platform.ts';
import { rebase } from './links.ts';

/**
 * Absolute links in API answers (issue 26): from BASE_URL when it is set, otherwise from the
 * address the request used; X-Forwarded-Host and -Proto count only from a trusted proxy.
 */
const HTML = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
let open: TestApp;
let fixed: TestApp;
let proxied: TestApp;
before(async () => {
  // BASE_URL empty is BASE_URL unset (testConfig sets one otherwise).
  open = await createTestApp({ env: { BASE_URL: '' } });
  fixed = await createTestApp({ env: { BASE_URL: 'https://paste.example.org/' } });
  proxied = await createTestApp({ env: { BASE_URL: '', TRUST_PROXY: '127.0.0.1' } });
});
after(async () => {
  await Promise.all([open.close(), fixed.close(), proxied.close()]);
});

let addresses = 0;
const createPaste = (t: TestApp, headers: Record<string, string>, remoteAddress?: string) =>
  t.app.inject({
    method: 'POST',
    url: '/api/v1/paste',
    headers,
    payload: { content: 'links' },
    remoteAddress: remoteAddress ?? `10.26.0.${++addresses}`,
  });

async function parkingExit(t: TestApp, headers: Record<string, string>) {
  const plate = `LNK${++addresses}`;
  const entry = await t.app.inject({
    method: 'POST',
    url: '/api/v1/parking/entry',
    headers: t.asOperator,
    payload: { licensePlate: plate, vehicleType: 'CAR' },
  });
  assert.equal(entry.statusCode, 201, entry.body);
  const exit = await t.app.inject({
    method: 'POST',
    url: '/api/v1/parking/exit',
    headers: { ...t.asOperator, ...headers },
    payload: { ticketId: entry.json().ticketId },
  });
  assert.equal(exit.statusCode, 200, exit.body);
  return exit.json() as { paymentId: string; paymentUrl: string };
}

describe('without BASE_URL, links are on the address the request used', () => {
  test('a paste’s url, the text answer of curl, the own-paste list and the form’s curl line', async () => {
    const host = { host: 'example.test:8080' };
    const created = await createPaste(open, host);
    assert.equal(created.statusCode, 201, created.body);
    assert.match(created.json().url, /^http:\/\/example\.test:8080\/[0-9A-Za-z]{6}$/);
    const text = await open.app.inject({
      method: 'POST',
      url: '/paste',
      headers: { ...host, 'content-type': 'text/plain' },
      payload: 'from curl',
      remoteAddress: '10.26.1.1',
    });
    assert.match(text.body, /^http:\/\/example\.test:8080\/[0-9A-Za-z]{6}\n$/);
    const form = await open.app.inject({ url: '/paste', headers: { ...host, accept: HTML } });
    assert.match(form.body, /curl --data-binary @file\.txt http:\/\/example\.test:8080\/paste/);
    const other = await createPaste(open, { host: 'other.test' });
    assert.match(other.json().url, /^http:\/\/other\.test\/[0-9A-Za-z]{6}$/);
    const user = await open.app.inject({
      method: 'POST',
      url: '/api/v1/users',
      payload: { email: 'links@example.test' },
      remoteAddress: '10.26.1.2',
    });
    const auth = { authorization: `Bearer ${user.json().api_key}` };
    await createPaste(open, { ...auth, host: 'example.test:8080' });
    const mine = await open.app.inject({
      url: '/api/v1/users/me/pastes',
      headers: { ...auth, host: 'mine.test' },
    });
    assert.match(mine.json().pastes[0].url, /^http:\/\/mine\.test\/[0-9A-Za-z]{6}$/);
  });

  test('payment links of parking (kept in its rows) and of the payments API', async () => {
    const exit = await parkingExit(open, { host: 'example.test:8080' });
    assert.equal(exit.paymentUrl, `http://example.test:8080/pay/${exit.paymentId}`);
    const payment = await open.app.inject({
      url: `/api/v1/payments/${exit.paymentId}`,
      headers: { host: 'lot.example.test' },
    });
    assert.equal(payment.statusCode, 200, payment.body);
    assert.equal(payment.json().payment_url, `http://lot.example.test/pay/${exit.paymentId}`);
    // Asked again from another address: the same stored payment, its link on that address.
    const again = await open.app.inject({
      method: 'POST',
      url: '/api/v1/parking/exit',
      headers: { ...open.asOperator, host: 'kiosk.test:9000' },
      payload: { ticketId: await ticketOf(open, exit.paymentId) },
    });
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.json().paymentUrl, `http://kiosk.test:9000/pay/${exit.paymentId}`);
  });

  test('/openapi.json and /docs/json name the address in use as their server', async () => {
    for (const url of ['/openapi.json', '/docs/json']) {
      const spec = (await open.app.inject({ url, headers: { host: 'example.test:8080' } })).json();
      assert.deepEqual(
        spec.servers.map((server: { url: string }) => server.url),
        ['http://example.test:8080'],
        url,
      );
    }
  });

  test('a spoofed X-Forwarded-Host or -Proto is ignored when the proxy is not trusted', async () => {
    const spoofed = await createPaste(open, {
      host: 'example.test:8080',
      'x-forwarded-host': 'evil.test',
      'x-forwarded-proto': 'https',
    });
    assert.match(spoofed.json().url, /^http:\/\/example\.test:8080\//);
    const spec = (
      await open.app.inject({
        url: '/openapi.json',
        headers: { host: 'example.test:8080', 'x-forwarded-host': 'evil.test' },
      })
    ).json();
    assert.equal(spec.servers[0].url, 'http://example.test:8080');
  });

  test('a trusted proxy’s X-Forwarded-Host and -Proto are the address in use', async () => {
    const forwarded = {
      host: '127.0.0.1:3000',
      'x-forwarded-host': 'public.test',
      'x-forwarded-proto': 'https',
    };
    const viaProxy = await createPaste(proxied, forwarded, '127.0.0.1');
    assert.match(viaProxy.json().url, /^https:\/\/public\.test\/[0-9A-Za-z]{6}$/);
    // The same headers from an address that is not the proxy are the client's own words.
    const direct = await createPaste(proxied, forwarded, '10.26.2.1');
    assert.match(direct.json().url, /^http:\/\/127\.0\.0\.1:3000\//);
  });

  test('a Host that is no host falls back to the default base', async () => {
    const odd = await createPaste(open, { host: 'bad host/<x>' });
    assert.equal(odd.statusCode, 201, odd.body);
    assert.match(odd.json().url, /^http:\/\/localhost:\d+\//);
  });
});

describe('with BASE_URL, links are on BASE_URL whatever the request says', () => {
  test('paste url, payment link and the docs’ server', async () => {
    const headers = { host: 'example.test:8080', 'x-forwarded-host': 'evil.test' };
    const created = await createPaste(fixed, headers);
    assert.match(created.json().url, /^https:\/\/paste\.example\.org\/[0-9A-Za-z]{6}$/);
    const exit = await parkingExit(fixed, headers);
    assert.equal(exit.paymentUrl, `https://paste.example.org/pay/${exit.paymentId}`);
    const spec = (await fixed.app.inject({ url: '/openapi.json', headers })).json();
    assert.deepEqual(spec.servers, [
      { url: 'https://paste.example.org', description: 'This deployment (BASE_URL)' },
    ]);
  });
});

test('rebase moves only strings that start with the default base, and copies only what changes', () => {
  const untouched = { a: 1, list: ['x'], when: new Date(0) };
  assert.equal(rebase(untouched, 'http://localhost:3000/', 'http://h/'), untouched);
  const moved = rebase(
    {
      url: 'http://localhost:3000/pay/1',
      other: 'http://localhost:30000/x',
      nested: [{ u: 'http://localhost:3000/a' }],
    },
    'http://localhost:3000/',
    'http://h/',
  );
  assert.deepEqual(moved, {
    url: 'http://h/pay/1',
    other: 'http://localhost:30000/x',
    nested: [{ u: 'http://h/a' }],
  });
});

async function ticketOf(t: TestApp, paymentId: string): Promise<string> {
  const [row] = await t.adapters.database.db
    .withTables<{ parking_payments: { id: string; ticket_id: string } }>()
    .selectFrom('parking_payments')
    .select('ticket_id')
    .where('id', '=', paymentId)
    .execute();
  assert.ok(row, `payment ${paymentId} is kept`);
  return row.ticket_id;
}
