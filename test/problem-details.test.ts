import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTestApp, type TestApp } from './support/platform.ts';

/**
 * RFC 9457 across the four services: whatever refused the request (a service's catalogue, the
 * schema validator, the JSON parser, the router), the body has every standard member, each
 * saying what the problem is, and `instance` names this occurrence and no other.
 */
let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

const json = { 'content-type': 'application/json' };
const missing = '00000000-0000-4000-8000-000000000000';

test('every problem has type, title, numeric status, detail and an instance of its own', async () => {
  const user = t.asUser('u-problem');
  // Each request with the code it must meet: a refusal of every kind, from every service.
  const cases = [
    ['paste_not_found', { method: 'GET', url: '/api/v1/paste/nopaste' }],
    ['malformed_json', { method: 'POST', url: '/api/v1/paste', headers: json, payload: '{"content": ' }],
    // The notification's type has a member of its own; `type` stays the problem's.
    [
      'unknown_type',
      {
        method: 'POST',
        url: '/api/notifications',
        headers: t.asService,
        payload: { user_id: 'u-problem', type: 'nope', channels: ['email'], data: {} },
      },
    ],
    ['notification_not_found', { method: 'GET', url: `/api/notifications/${missing}`, headers: t.asService }],
    ['booking_not_found', { method: 'GET', url: `/api/v1/bookings/${missing}`, headers: user }],
    ['validation_failed', { method: 'POST', url: '/api/v1/shows/nope/hold', headers: user, payload: {} }],
    ['ticket_not_found', { method: 'GET', url: `/api/v1/parking/tickets/${missing}` }],
    ['unauthorized', { method: 'POST', url: '/api/v1/parking/exit', payload: {} }],
    ['method_not_allowed', { method: 'DELETE', url: '/api/v1/parking/lot' }],
    ['not_found', { method: 'GET', url: '/api/v1/no/such/thing' }],
  ] as const;
  const instances = new Set<string>();
  for (const [code, request] of cases) {
    const response = await t.app.inject(request);
    const where = `${request.method} ${request.url}: ${response.body}`;
    assert.match(String(response.headers['content-type']), /^application\/problem\+json/, where);
    const problem = response.json();
    assert.equal(problem.code, code, where);
    assert.equal(problem.status, response.statusCode, where);
    assert.equal(problem.type, `/problems/${code}`, where);
    for (const member of ['title', 'detail', 'instance'] as const) {
      assert.equal(typeof problem[member], 'string', `${member}: ${where}`);
      assert.ok(problem[member].length > 0, `${member}: ${where}`);
    }
    assert.equal(problem.requestId, response.headers['x-request-id'], where);
    assert.equal(problem.instance, `urn:request:${problem.requestId}`, where);
    assert.ok(!instances.has(problem.instance), `instance repeated: ${where}`);
    instances.add(problem.instance);
    if (code === 'unknown_type') assert.equal(problem.notification_type, 'nope');
  }
});

test('a refusal about fields carries errors [{field, message}], as the Problem schema in /openapi.json documents', async () => {
  const schema = (await t.app.inject({ url: '/openapi.json' })).json().components.schemas.Problem;
  assert.deepEqual(schema.properties.errors.items.required.sort(), ['field', 'message']);
  assert.ok(!schema.required.includes('errors'), 'optional: problems about no field have none');
  const url = '/api/users/u-fields/notification-preferences';
  const rule = await t.app.inject({
    method: 'PATCH',
    url,
    headers: t.asService,
    payload: { timezone: 'Mars/Olympus', quiet_hours_start: '22:00' },
  });
  assert.equal(rule.json().code, 'invalid_preferences');
  assert.deepEqual(rule.json().errors, [
    { field: 'timezone', message: 'is not an IANA time zone' },
    { field: 'quiet_hours_end', message: 'quiet_hours_start and quiet_hours_end go together' },
  ]);
  const shape = await t.app.inject({
    method: 'PATCH',
    url,
    headers: t.asService,
    payload: { sms_enabled: 'yes' },
  });
  assert.equal(shape.json().code, 'validation_failed');
  assert.deepEqual(
    shape.json().errors.map((e: { field: string }) => e.field),
    ['body.sms_enabled'],
  );
});
