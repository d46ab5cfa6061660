import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { type NotifyTestApp, notifyTestApp } from '../../../test/support/notify.ts';
import { metricValue } from '../../../test/support/platform.ts';
import { createTestClock } from '../../platform/clock.ts';
import { ConfigError } from '../../platform/config.ts';
import { loadNotifySettings } from '../settings.ts';
import { createNotifyRepository, type NotifyRepository } from './repository.ts';

const DAY = 86_400_000;

/**
 * Notification ids are UUIDv7s of the wall clock (platform/ids.ts), which the retention finds old
 * rows by: the moved clock starts at the wall time, as the system clock does in production.
 */
let t: NotifyTestApp;
let repo: NotifyRepository;
before(async () => {
  // A send scheduled further ahead than the retention window: past the 30 days `send_at` allows by default.
  t = await notifyTestApp({ clock: createTestClock(new Date()), env: { NOTIFY_SEND_AT_MAX: '60d' } });
  repo = createNotifyRepository(t.adapters.database.db);
  await t.setPreferences('ret-mail', { email: 'ret@example.test' });
});
after(() => t?.close());

/** Accepts a notification (no workers: its deliveries stay as the accept left them) and returns its id. */
async function send(userId: string, channels = ['email']): Promise<string> {
  const response = await t.send({
    user_id: userId,
    type: 'order_update',
    channels,
    data: { order_id: 'o-1' },
  });
  assert.equal(response.statusCode, 202, response.body);
  return response.json().id;
}

/** What a worker writes for a failed try and then the outcome (delivery/handler.ts). */
async function settle(id: string, status: 'delivered' | 'failed' | 'sent', failedTries = 1) {
  for (let i = 0; i < failedTries; i++) {
    await repo.recordAttempt(id, 'email', {
      at: t.clock.now(),
      error: 'timeout: slow',
      provider: 'fake-email',
    });
  }
  await repo.updateDelivery(id, 'email', { status }, t.clock.now());
}

const ids = async (table: 'notifications' | 'notification_deliveries' | 'notification_attempts') => {
  const column = table === 'notifications' ? sql.ref('id') : sql.ref('notification_id');
  const { rows } = await sql<{
    id: string;
  }>`select distinct ${column}::text as id from ${sql.table(table)}`.execute(t.adapters.database.db);
  return new Set(rows.map((row) => row.id));
};

test('NOTIFY_RETENTION: 30 days by default, down to minutes, a bad value names the variable', () => {
  assert.equal(loadNotifySettings({}).retentionMs, 30 * DAY);
  assert.equal(loadNotifySettings({ NOTIFY_RETENTION: '15m' }).retentionMs, 15 * 60_000);
  for (const value of ['30', '30 days', '-1d', '10s', '0m']) {
    assert.throws(
      () => loadNotifySettings({ NOTIFY_RETENTION: value }),
      (error: Error) => error instanceof ConfigError && error.message.includes('NOTIFY_RETENTION'),
      value,
    );
  }
});

test('old notifications whose deliveries are all final go with their deliveries and attempts; the rest stays', async () => {
  const delivered = await send('ret-mail');
  await settle(delivered, 'delivered', 2);
  const failed = await send('ret-mail');
  await settle(failed, 'failed');
  const skipped = await send('ret-nobody'); // no address: skipped at the accept, final
  const queued = await send('ret-mail'); // never taken by a worker
  const mixed = await send('ret-mail', ['email', 'sms']); // sms skipped (no phone), e-mail still sending
  await settle(mixed, 'sent', 1);
  await repo.updateDelivery(mixed, 'email', { status: 'sending' }, t.clock.now());
  const late = await send('ret-mail'); // settled only a day before the run
  const batch = await t.inject({
    method: 'POST',
    url: '/api/notifications/batch',
    headers: t.asService,
    payload: {
      type: 'order_update',
      channels: ['email'],
      data: { order_id: 'o-2' },
      user_ids: ['ret-mail'],
      send_at: new Date(t.clock.now().getTime() + 40 * DAY).toISOString(),
    },
  });
  assert.equal(batch.statusCode, 202, batch.body);
  assert.equal(batch.json().counts.scheduled, 1);
  const [scheduled] = [...(await ids('notifications'))].filter(
    (id) => ![delivered, failed, skipped, queued, mixed, late].includes(id),
  );

  t.clock.advance(2 * DAY);
  const inside = await send('ret-nobody'); // 29 days old at the run
  t.clock.advance(28 * DAY);
  await settle(late, 'delivered');
  t.clock.advance(DAY);
  const recent = await send('ret-nobody');

  assert.equal(await t.app.platform.scheduler.runTick('notify.retention', t.clock.now()), true);

  const kept = [queued, mixed, late, scheduled, inside, recent].sort();
  assert.deepEqual([...(await ids('notifications'))].sort(), kept);
  assert.deepEqual([...(await ids('notification_deliveries'))].sort(), kept);
  assert.deepEqual([...(await ids('notification_attempts'))].sort(), [mixed, late].sort());
  for (const id of [delivered, failed, skipped]) {
    assert.equal((await t.inject(`/api/notifications/${id}`)).statusCode, 404);
  }
  assert.equal((await t.inject(`/api/notifications/${mixed}`)).json().attempts.length, 1);
  assert.equal(await metricValue(t.app, 'retention_rows_removed_total', 'table="notifications"'), 3);
  assert.equal(await metricValue(t.app, 'retention_lag_seconds', 'table="notifications"'), 0);
});
