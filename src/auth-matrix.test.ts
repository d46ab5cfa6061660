import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createTestApp, type TestApp } from '../test/support/platform.ts';

/**
 * The trust boundary, driven by /openapi.json: every operation says who may call it, every
 * operation that is not public refuses a caller without credentials, and an operation on a
 * user's data refuses another user's token. A new route that forgets to declare its access
 * fails here.
 */

/** Operations anyone may call, each with the reason it is safe. */
const PUBLIC: Record<string, string> = {
  'GET /health/live': 'load balancers probe it; it says only that the process runs',
  'GET /health/ready': 'load balancers probe it; adapter and breaker states, no data',
  'POST /api/v1/guests': 'issues a fresh random identity; nothing existing is reached',
  'POST /api/v1/paste': 'pastebin create: anonymous by design, rate-limited per address',
  'POST /paste': 'alias of POST /api/v1/paste',
  'POST /': 'the create form, and POST /api/v1/paste for curl (`curl -F file=@f host/`)',
  'PUT /': 'paste create from `curl -T - host/`, as POST /api/v1/paste',
  'PUT /paste': 'paste create from `curl -T file host/paste`, as POST /api/v1/paste',
  'GET /api/v1/paste/{short_url}': 'public pastes are public; private ones answer 404 to all but the owner',
  'GET /paste/{short_url}': 'alias of GET /api/v1/paste/{short_url}',
  'GET /{short_url}/raw': 'the raw text of the same paste, under the same rules',
  'DELETE /api/v1/paste/{short_url}': "the paste's delete token is the credential (or its owner's key)",
  'GET /api/v1/paste/languages': 'a static list',
  'POST /documents': 'haste API create (hastebin clients): as POST /api/v1/paste',
  'GET /documents/{key}': 'haste API read of a paste, under the rules of GET /api/v1/paste/{short_url}',
  'GET /raw/{key}': 'haste API raw text of a paste, under the same rules',
  'POST /api/v1/users': 'pastebin sign-up: returns a new key once, rate-limited per address',
  'GET /api/v1/cities': 'catalogue',
  'GET /api/v1/cities/{id}/shows': 'catalogue',
  'GET /api/v1/movies': 'catalogue search',
  'GET /api/v1/movies/suggest': 'catalogue search',
  'GET /api/v1/movies/{id}': 'catalogue',
  'GET /api/v1/movies/{id}/shows': 'catalogue: where and when a movie plays',
  'GET /api/v1/theaters/{id}': 'catalogue',
  'GET /api/v1/shows/{id}': 'catalogue',
  'GET /api/v1/shows/{id}/seats': 'the seat map: which seats are free, never who holds them',
  'GET /api/v1/shows/{id}/seats/events': 'the seat map, live: which seats are free, never who holds them',
  'GET /api/v1/parking/availability': 'free spots per floor and type',
  'GET /api/v1/parking/boards': 'the display boards',
  'GET /api/v1/parking/boards/stream': 'the display boards, live',
  'GET /api/v1/parking/lot': "the lot's floors, panels and prices, as on the public landing page",
  'GET /api/v1/parking/reservations/availability':
    "how many more of a spot type can be reserved for a window, and its price: no one's data",
  'GET /api/v1/parking/tickets/{ticketId}': 'the ticket id is the capability: whoever holds the ticket',
  'GET /api/v1/parking/tickets/{ticketId}/qr':
    'the ticket id or code is the capability: the QR of the code printed on that ticket',
  'GET /api/v1/parking/tickets/{ticketId}/payment-qr':
    "the ticket id or code is the capability: the QR of the ticket's payment page, itself public by payment id",
  'GET /api/v1/parking/tickets/{ticketId}/receipt':
    'the ticket id or code is the capability: whoever holds the ticket gets its receipt, as its status',
  'GET /api/v1/parking/tickets/{ticketId}/events':
    'the ticket id is the capability: whoever holds the ticket follows its payment and gate',
  'GET /api/v1/payments/{paymentId}': 'the payment id is the capability (the hosted payment page)',
  'POST /api/v1/payments/{paymentId}/pay': 'the payment id is the capability (the hosted payment page)',
  'POST /api/v1/payments/webhook': "the gateway's HMAC signature is the credential",
  'POST /api/notifications/receipts/{provider}': "the provider's signature is the credential",
  'GET /api/notifications/push/vapid-public-key': 'the public half of the Web Push key pair',
  'GET /notify/unsubscribe/{token}':
    'the signed unsubscribe link is the credential; the page changes nothing',
  'POST /notify/unsubscribe/{token}':
    "the signed unsubscribe link is the credential (RFC 8058 one-click, APP_SECRET's HMAC)",
};

let t: TestApp;
let spec: {
  paths: Record<string, Record<string, { security?: Record<string, string[]>[]; parameters?: Param[] }>>;
};
interface Param {
  in: string;
  name: string;
  schema?: { format?: string; type?: string; pattern?: string };
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

function operations() {
  return Object.entries(spec.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]) => ({ key: `${method.toUpperCase()} ${path}`, method, path, operation })),
  );
}

/** A URL for the path with each parameter filled by a well-formed value that names nothing stored. */
function urlOf(path: string, parameters: Param[] = []): string {
  return path.replace(/\{(\w+)\}/g, (_match, name: string) => {
    const schema = parameters.find((p) => p.in === 'path' && p.name === name)?.schema;
    if (schema?.format === 'uuid' || /id$/i.test(name)) return randomUUID();
    return 'abcDEF12';
  });
}

before(async () => {
  t = await createTestApp();
  spec = (await t.app.inject({ url: '/openapi.json' })).json();
});
after(() => t.close());

describe('every operation in /openapi.json', () => {
  test('declares its security, or is on the public list with a reason', () => {
    const undeclared: string[] = [];
    const publicWithoutReason: string[] = [];
    for (const { key, operation } of operations()) {
      if (operation.security === undefined) undeclared.push(key);
      else if (isPublic(operation.security) && !PUBLIC[key]) publicWithoutReason.push(key);
    }
    assert.deepEqual(undeclared, [], 'operations without security');
    assert.deepEqual(publicWithoutReason, [], 'public operations missing from the reviewed public list');
    const stale = Object.keys(PUBLIC).filter((key) => !operations().some((op) => op.key === key));
    assert.deepEqual(stale, [], 'the public list names operations that no longer exist');
  });

  test('that is not public answers 401 problem+json without credentials', async () => {
    const wrong: string[] = [];
    for (const { key, method, path, operation } of operations()) {
      if (isPublic(operation.security ?? [])) continue;
      const response = await t.app.inject({
        method: method.toUpperCase() as 'GET',
        url: urlOf(path, operation.parameters),
        headers: { 'content-type': 'application/json' },
        payload: method === 'get' || method === 'delete' ? undefined : '{}',
      });
      const type = String(response.headers['content-type']);
      if (response.statusCode !== 401 || !type.startsWith('application/problem+json')) {
        wrong.push(`${key}: ${response.statusCode} ${type}`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  test("on a user's own data answers 404 to another user's token", async () => {
    const wrong: string[] = [];
    const stranger = t.asUser(randomUUID());
    for (const { key, method, path, operation } of operations()) {
      const userParam = /\{(userId)\}|\/users\/\{(id)\}/.exec(path);
      if (!userParam || !operation.security?.some((requirement) => 'userToken' in requirement)) continue;
      const response = await t.app.inject({
        method: method.toUpperCase() as 'GET',
        url: urlOf(path, operation.parameters),
        headers: { ...stranger, 'content-type': 'application/json' },
        payload: method === 'get' || method === 'delete' ? undefined : '{}',
      });
      if (response.statusCode !== 404) wrong.push(`${key}: ${response.statusCode}`);
    }
    assert.deepEqual(wrong, []);
  });
});

function isPublic(security: Record<string, string[]>[]): boolean {
  return security.length === 0 || security.some((requirement) => Object.keys(requirement).length === 0);
}
