import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type NotifyTestApp, notifyTestApp } from '../../../test/support/notify.ts';
import { DEFAULT_PREFERENCES, quietUntil } from './service.ts';

let t: NotifyTestApp;
before(async () => {
  // Test users subscribe push endpoints at push.example.com, which has no DNS here.
  t = await notifyTestApp({ env: { OUTBOUND_ALLOW_HOSTS: 'push.example.com' } });
});
after(() => t.close());

const url = (userId: string) => `/api/users/${userId}/notification-preferences`;
const call = (method: 'PUT' | 'PATCH', userId: string, payload: unknown) =>
  t.inject({ method, url: url(userId), payload: payload as Record<string, unknown> });

describe('preferences', () => {
  test('defaults for an unknown user: every channel on, no quiet hours, UTC', async () => {
    const response = await t.inject(url('12345'));
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json(), {
      push_enabled: true,
      sms_enabled: true,
      email_enabled: true,
      in_app_enabled: true,
      email_marketing_enabled: true,
      quiet_hours_start: null,
      quiet_hours_end: null,
      timezone: 'UTC',
      email: null,
      phone: null,
      locale: null,
    });
  });

  test('PUT replaces everything (omitted fields go back to defaults), PATCH changes only what it names', async () => {
    const put = await call('PUT', 'alice', {
      push_enabled: false,
      sms_enabled: true,
      email_enabled: true,
      quiet_hours_start: '22:00',
      quiet_hours_end: '07:00',
      timezone: 'Europe/Berlin',
      phone: '+4915112345678',
    });
    assert.equal(put.statusCode, 200, put.body);
    const patched = await call('PATCH', 'alice', { email: 'alice@example.com' });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.deepEqual(patched.json(), { ...(await t.inject(url('alice'))).json() });
    assert.equal(patched.json().push_enabled, false);
    assert.equal(patched.json().quiet_hours_start, '22:00');
    assert.equal(patched.json().phone, '+4915112345678');
    const replaced = await call('PUT', 'alice', {
      push_enabled: true,
      sms_enabled: false,
      email_enabled: true,
    });
    assert.equal(replaced.json().phone, null);
    assert.equal(replaced.json().timezone, 'UTC');
  });

  test('bad input: problem+json naming the field, nothing changes', async () => {
    await call('PATCH', 'bob', { timezone: 'Asia/Tokyo' });
    const cases: [unknown, number, string][] = [
      [{ timezone: 'Mars/Olympus' }, 422, 'timezone'],
      [{ quiet_hours_start: '25:00', quiet_hours_end: '07:00' }, 400, 'quiet_hours_start'],
      [{ quiet_hours_start: '22:00' }, 422, 'quiet_hours_end'],
      [{ phone: '0151 123' }, 400, 'phone'],
      [{ email: 'not-an-address' }, 400, 'email'],
      [{ push_enabled: 'yes' }, 400, 'push_enabled'],
      [{ unknown_field: 1 }, 400, ''],
      [{}, 400, ''],
    ];
    for (const [payload, status, field] of cases) {
      const response = await call('PATCH', 'bob', payload);
      assert.equal(response.statusCode, status, `${JSON.stringify(payload)}: ${response.body}`);
      assert.match(String(response.headers['content-type']), /problem\+json/);
      if (field) assert.ok(JSON.stringify(response.json().errors).includes(field), response.body);
    }
    assert.equal((await t.inject(url('bob'))).json().timezone, 'Asia/Tokyo');
    assert.equal((await t.inject(url('not a user!'))).statusCode, 400);
  });

  test('push subscriptions: https only, added and removed; a push is skipped without one', async () => {
    const add = (payload: unknown) =>
      t.inject({
        method: 'POST',
        url: '/api/users/carol/push-subscriptions',
        payload: payload as Record<string, unknown>,
      });
    assert.equal(
      (await add({ endpoint: 'http://insecure.example.com', keys: { p256dh: 'k', auth: 'a' } })).statusCode,
      400,
    );
    assert.equal(
      (await add({ endpoint: 'https://push.example.com/c', keys: { p256dh: 'k' } })).statusCode,
      400,
    );
    assert.equal(
      (await add({ endpoint: 'https://push.example.com/c', keys: { p256dh: 'k', auth: 'a' } })).statusCode,
      201,
    );
    const sendPush = async () =>
      (
        await t.send({ user_id: 'carol', type: 'order_update', channels: ['push'], data: { order_id: 1 } })
      ).json().channels[0];
    assert.equal((await sendPush()).status, 'queued');
    const remove = () =>
      t.inject({
        method: 'DELETE',
        url: `/api/users/carol/push-subscriptions?endpoint=${encodeURIComponent('https://push.example.com/c')}`,
      });
    assert.equal((await remove()).statusCode, 204);
    assert.equal((await remove()).statusCode, 404);
    assert.deepEqual(await sendPush(), { channel: 'push', status: 'skipped', reason: 'no_address' });
  });
});

describe('quietUntil', () => {
  const prefs = (start: string, end: string, timezone: string) => ({
    ...DEFAULT_PREFERENCES,
    quiet_hours_start: start,
    quiet_hours_end: end,
    timezone,
  });
  test('same-day and across-midnight periods; start inclusive, end exclusive', () => {
    const at = (iso: string, p: ReturnType<typeof prefs>) =>
      quietUntil(p, new Date(iso))?.toISOString() ?? null;
    const day = prefs('09:00', '17:00', 'UTC');
    assert.equal(at('2026-03-02T08:59:59Z', day), null);
    assert.equal(at('2026-03-02T09:00:00Z', day), '2026-03-02T17:00:00.000Z');
    assert.equal(at('2026-03-02T17:00:00Z', day), null);
    const night = prefs('22:00', '07:00', 'Asia/Kolkata');
    assert.equal(at('2026-03-02T16:29:00Z', night), null, '21:59 in India');
    assert.equal(at('2026-03-02T16:30:00Z', night), '2026-03-03T01:30:00.000Z');
    assert.equal(at('2026-03-02T20:15:30Z', night), '2026-03-03T01:30:00.000Z', '01:45:30 in India');
    assert.equal(at('2026-03-02T16:30:00Z', prefs('22:00', '22:00', 'UTC')), null, 'empty period');
  });
});
