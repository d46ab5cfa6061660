import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { postWebhook } from '../../test/support/payments.ts';
import { createTestApp, metricValue, type TestApp } from '../../test/support/platform.ts';
import { ConfigError } from '../platform/config.ts';
import type { WebhookEvent } from './gateway.ts';
import { loadPaymentsSettings } from './settings.ts';

const DAY = 86_400_000;

let t: TestApp;
before(async () => {
  t = await createTestApp({ modules: ['payments'] });
});
after(() => t?.close());

/** A signed charge event for no payment of ours: recorded (deduplicated), nothing to apply. */
const event = (id: string): WebhookEvent => ({
  id,
  type: 'charge.failed',
  created: t.clock.now().toISOString(),
  data: {
    charge: {
      id: `ch_${id}`,
      idempotencyKey: 'not-ours',
      paymentId: 'not-ours',
      status: 'failed',
      amountMinor: 100,
      currency: 'USD',
      last4: '0002',
      brand: 'visa',
      failureCode: 'card_declined',
      failureMessage: 'Declined',
    },
  },
});

test('PAYMENTS_EVENT_RETENTION: 7 days by default, never under the gateway retry horizon (3 days)', () => {
  assert.equal(loadPaymentsSettings({}).eventRetentionMs, 7 * DAY);
  assert.equal(loadPaymentsSettings({ PAYMENTS_EVENT_RETENTION: '14d' }).eventRetentionMs, 14 * DAY);
  for (const value of ['7', 'a week', '2d', '12h']) {
    assert.throws(
      () => loadPaymentsSettings({ PAYMENTS_EVENT_RETENTION: value }),
      (error: Error) => error instanceof ConfigError && error.message.includes('PAYMENTS_EVENT_RETENTION'),
      value,
    );
  }
});

test('webhook event ids older than the window go in the payments.retention job; newer ones still stop a repeat', async () => {
  for (const id of ['evt_old_1', 'evt_old_2']) {
    assert.equal((await postWebhook(t, event(id))).statusCode, 200);
  }
  t.clock.advance(6 * DAY);
  assert.equal((await postWebhook(t, event('evt_new'))).statusCode, 200);
  t.clock.advance(2 * DAY);

  assert.equal(await t.app.platform.scheduler.runTick('payments.retention', t.clock.now()), true);

  const { rows } = await sql<{ event_id: string }>`select event_id from payment_webhook_events`.execute(
    t.adapters.database.db,
  );
  assert.deepEqual(
    rows.map((row) => row.event_id),
    ['evt_new'],
  );
  const repeat = await postWebhook(t, event('evt_new'));
  assert.deepEqual(repeat.json(), { received: true, duplicate: true });
  assert.equal(await metricValue(t.app, 'retention_rows_removed_total', 'table="payment_webhook_events"'), 2);
  assert.equal(await metricValue(t.app, 'retention_lag_seconds', 'table="payment_webhook_events"'), 0);
});
