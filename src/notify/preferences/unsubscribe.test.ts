import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTestApp, type TestApp } from '../../../test/support/platform.ts';
import { unsubscribeToken } from './unsubscribe.ts';

/**
 * The one-click unsubscribe link of bulk e-mail (RFC 8058): its signature is the credential, the
 * POST turns marketing e-mail off (for good: the next marketing accept skips the e-mail), the GET
 * a mail scanner follows changes nothing, and a link we did not sign is refused.
 */
let t: TestApp;
before(async () => {
  t = await createTestApp({ services: ['notify'] });
});
after(() => t.close());

const userId = 'u-unsub-1';
const preferences = async () =>
  (await t.app.inject({ url: `/api/users/${userId}/notification-preferences`, headers: t.asAdmin })).json();
const send = async (type: string, data: Record<string, unknown>, id: string) =>
  t.app.inject({
    method: 'POST',
    url: '/api/notifications',
    headers: t.asService,
    payload: { id, user_id: userId, type, channels: ['email'], data },
  });
const marketing = { headline: 'Diwali offers', message: 'Two tickets for one.' };

test('GET shows a button and changes nothing; POST turns marketing e-mail off, idempotently; transactional mail still goes', async () => {
  const patched = await t.app.inject({
    method: 'PATCH',
    url: `/api/users/${userId}/notification-preferences`,
    headers: t.asAdmin,
    payload: { email: 'ana@example.test' },
  });
  assert.equal(patched.statusCode, 200, patched.body);
  assert.equal(patched.json().email_marketing_enabled, true);
  const path = `/notify/unsubscribe/${unsubscribeToken(t.config.secret, userId)}`;

  const page = await t.app.inject({ url: path });
  assert.equal(page.statusCode, 200, page.body);
  assert.match(page.headers['content-type'] as string, /text\/html/);
  assert.match(page.body, new RegExp(`<form method="post" action="${path}">`));
  assert.equal((await preferences()).email_marketing_enabled, true, 'a GET changes nothing');
  const before = await send('marketing', marketing, 'm-1');
  assert.deepEqual(before.json().channels, [{ channel: 'email', status: 'queued' }]);

  // As Gmail sends it: no credentials, the RFC 8058 body.
  const oneClick = {
    method: 'POST' as const,
    url: path,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'List-Unsubscribe=One-Click',
  };
  const done = await t.app.inject(oneClick);
  assert.equal(done.statusCode, 200, done.body);
  assert.equal((await preferences()).email_marketing_enabled, false);
  assert.equal((await preferences()).email_enabled, true, 'only marketing e-mail stops');
  assert.equal((await t.app.inject(oneClick)).statusCode, 200, 'again: the same answer');
  // RFC 8058 allows multipart/form-data too.
  const multipart = await t.app.inject({
    method: 'POST',
    url: path,
    headers: { 'content-type': 'multipart/form-data; boundary=x' },
    payload: '--x\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--x--\r\n',
  });
  assert.equal(multipart.statusCode, 200, multipart.body);

  const after = await send('marketing', marketing, 'm-2');
  assert.equal(after.statusCode, 202, after.body);
  assert.deepEqual(after.json().channels, [{ channel: 'email', status: 'skipped', reason: 'unsubscribed' }]);
  const booking = await send(
    'refund_update',
    { booking_id: 'BK-1', refund_amount: 900, refund_status: 'COMPLETED' },
    'r-1',
  );
  assert.deepEqual(booking.json().channels, [{ channel: 'email', status: 'queued' }]);
});

test('a tampered or malformed link is refused (problem+json) and changes nothing', async () => {
  const other = 'u-unsub-2';
  const token = unsubscribeToken(t.config.secret, other);
  const tampered = [
    `${userId}.${token.split('.')[1]}`, // another user's signature
    `${other}.${token.split('.')[1].slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`,
  ];
  for (const bad of tampered) {
    for (const method of ['GET', 'POST'] as const) {
      const response = await t.app.inject({ method, url: `/notify/unsubscribe/${bad}` });
      assert.equal(response.statusCode, 404, `${method} ${bad}: ${response.body}`);
      assert.match(response.headers['content-type'] as string, /application\/problem\+json/);
      assert.equal(response.json().code, 'unsubscribe_link_invalid');
    }
  }
  const malformed = await t.app.inject({ method: 'POST', url: '/notify/unsubscribe/nope' });
  assert.equal(malformed.statusCode, 400, malformed.body);
  assert.match(malformed.headers['content-type'] as string, /application\/problem\+json/);
  const untouched = (
    await t.app.inject({ url: `/api/users/${other}/notification-preferences`, headers: t.asAdmin })
  ).json();
  assert.equal(untouched.email_marketing_enabled, true);
});
