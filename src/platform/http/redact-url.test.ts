import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import { createTestAdapters, type TestAdapters, testConfig } from '../../../test/support/platform.ts';
import { type App, buildApp } from '../../app.ts';

/**
 * With LOG_REQUESTS=true every request is logged with its URL. A URL that carries a secret (a
 * ticket token at the door, a paste password in the query string) is logged as its route's
 * pattern; every other URL as it was sent.
 */
const TICKET_TOKEN = 'TK1.secret-ticket-token-4711';
const PASSWORD = 'secret-password-0815';
let app: App;
let adapters: TestAdapters;
let logs = '';

before(async () => {
  const config = testConfig({ LOG_REQUESTS: 'true' }, ['paste', 'booking']);
  adapters = await createTestAdapters(config);
  const stream = new Writable({
    write(chunk, _encoding, done) {
      logs += chunk.toString();
      done();
    },
  });
  app = await buildApp(config, adapters, { logger: { level: 'info', stream } });
  app.get('/test/open/:id', async () => ({ ok: true }));
  app.get('/test/secret/:token', { config: { redactUrl: true } }, async () => ({ ok: true }));
  await app.ready();
});
after(async () => {
  await app.close();
  await adapters.close();
});

function loggedUrls(): string[] {
  return logs
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { req?: { url?: string } })
    .flatMap((line) => (line.req?.url ? [line.req.url] : []));
}

test('a route marked redactUrl logs its pattern; other routes their URL', async () => {
  await app.inject('/test/open/visible-id?page=2');
  await app.inject('/test/secret/hidden-value?also=hidden');
  const urls = loggedUrls();
  assert.ok(urls.includes('/test/open/visible-id?page=2'), urls.join(', '));
  assert.ok(urls.includes('/test/secret/:token?[redacted]'), urls.join(', '));
  assert.doesNotMatch(logs, /hidden/);
});

test("the door check's ticket token and a raw paste's password never reach the log", async () => {
  const check = await app.inject(`/api/v1/tickets/${encodeURIComponent(TICKET_TOKEN)}`);
  assert.ok(check.statusCode >= 400, 'a made-up token is refused, and still logged');
  const checkIn = await app.inject({
    method: 'POST',
    url: `/api/v1/tickets/${encodeURIComponent(TICKET_TOKEN)}/check-in`,
    payload: { show_id: '00000000-0000-4000-8000-000000000000', door: 'Main' },
  });
  assert.ok(checkIn.statusCode >= 400, 'a check-in without credentials is refused, and still logged');
  const paste = await app.inject({
    method: 'POST',
    url: `/api/v1/paste?password=${PASSWORD}`,
    headers: { 'content-type': 'text/plain' },
    payload: 'a protected paste',
  });
  assert.equal(paste.statusCode, 201, paste.body);
  const urls = loggedUrls();
  assert.ok(urls.includes('/api/v1/tickets/:token'), urls.join(', '));
  assert.ok(urls.includes('/api/v1/tickets/:token/check-in'), urls.join(', '));
  assert.ok(urls.includes('/api/v1/paste?[redacted]'), urls.join(', '));
  assert.equal(logs.includes('secret-ticket-token'), false, 'the ticket token is in the log');
  assert.equal(logs.includes(PASSWORD), false, 'the paste password is in the log');
});
