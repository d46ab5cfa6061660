import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually, type NotifyTestApp, notifyTestApp } from '../../../test/support/notify.ts';
import { metricValue } from '../../../test/support/platform.ts';
import type { Db } from '../../platform/db/index.ts';
import type { PlatformDeps } from '../../platform/module.ts';
import type { Metrics } from '../../platform/observability/metrics.ts';
import type { OutboundMessage } from '../ports.ts';
import {
  channelHealth,
  createChannelSenders,
  INBOX_RETENTION_MS,
  inboxRepository,
  readProviderSettings,
  receiptRequest,
  signReceipt,
} from './index.ts';

/**
 * The dev inbox providers on the notify module's database, and the module's own receipts webhook
 * and inbox API. The module sends through recording providers here, so a receipt is seen applied
 * to a delivery that was `sent`, not stored by the inbox.
 */
let t: NotifyTestApp;
let db: Db;
let metrics: Metrics;
let secret: string;
const receipts: [string, string][] = [];
const env = { NOTIFY_INBOX_RECEIPT_DELAY_MS: '20' };
const onReceipt = (id: string, at: Date) => void receipts.push([id, at.toISOString()]);

before(async () => {
  t = await notifyTestApp({ env, workers: true });
  db = t.adapters.database.db;
  metrics = t.app.platform.metrics;
  secret = readProviderSettings(t.config.env, t.config.secret).receiptSecret;
});
after(() => t.close());

/** The dev-inbox senders with a silent log and the given receipt delay. */
const inboxSenders = (receiptDelayMs: string, onReceipt?: (id: string) => void) =>
  createChannelSenders({
    env: { NOTIFY_INBOX_RECEIPT_DELAY_MS: receiptDelayMs },
    db,
    clock: t.clock,
    metrics,
    log: { warn: () => {}, info: () => {}, error: () => {} },
    onReceipt: onReceipt && ((id) => void onReceipt(id)),
  });

const email = (id: string): OutboundMessage => ({
  deliveryId: `${id}:email`,
  notificationId: id,
  channel: 'email',
  type: 'booking_confirmed',
  recipient: { userId: '7', email: 'ana@example.test' },
  message: { subject: 'Your tickets', text: 'Booking BK-1', html: '<p>Booking BK-1</p>' },
});

test('the dev inbox stores a delivery once, answers repeats with the same id, and emits a receipt', async () => {
  const log = { warn: () => {}, info: () => {}, error: () => {} };
  const senders = createChannelSenders({ env, db, clock: t.clock, metrics, log, onReceipt });
  try {
    const id = '0190a1b2-0000-7000-8000-000000000001';
    const first = await senders.email.send(email(id));
    const again = await senders.email.send(email(id));
    assert.equal(first.provider, 'inbox');
    assert.deepEqual(again, first);
    const list = await t.app.inject({
      url: '/api/notifications/inbox?user=7&channel=email',
      headers: t.asAdmin,
    });
    assert.equal(list.statusCode, 200, list.body);
    const messages = list.json().messages;
    assert.equal(messages.length, 1);
    assert.equal((await t.app.inject({ url: '/api/notifications/inbox' })).statusCode, 401);
    assert.equal(messages[0].address, 'ana@example.test');
    assert.equal(messages[0].provider_message_id, first.providerMessageId);
    const one = await t.app.inject({ url: `/api/notifications/inbox/${messages[0].id}`, headers: t.asAdmin });
    assert.equal(one.json().html, '<p>Booking BK-1</p>');
    assert.equal(
      (await t.app.inject({ url: '/api/notifications/inbox?user=8', headers: t.asAdmin })).json().messages
        .length,
      0,
    );

    await sleep(100);
    // One receipt per stored message (the repeat fires one more for the same id; setting delivered_at is idempotent).
    assert.ok(receipts.length >= 1);
    assert.ok(
      receipts.every(
        ([messageId, at]) => messageId === first.providerMessageId && at === t.clock.now().toISOString(),
      ),
    );
    assert.deepEqual(senders.sms.states(), [{ provider: 'inbox', channel: 'sms', state: 'closed' }]);
    assert.deepEqual(channelHealth(senders).notify_sms, { status: 'ok', circuits: { inbox: 'closed' } });
    const exposed = await metrics.registry.metrics();
    assert.match(exposed, /notify_circuit_state\{provider="inbox",channel="email"\} 0/);
  } finally {
    for (const sender of Object.values(senders)) await sender.close();
  }
});

test('the notify retention job drops inbox messages older than a week', async () => {
  const inbox = inboxRepository(db);
  const provider = inboxSenders('0');
  await provider.email.send(email('0190a1b2-0000-7000-8000-00000000dead'));
  for (const sender of Object.values(provider)) await sender.close();
  const stored = (await inbox.list()).length;
  const tick = () => t.app.platform.scheduler.runTick('notify.retention', t.clock.now());
  t.clock.advance(INBOX_RETENTION_MS - 60_000);
  assert.equal(await tick(), true);
  assert.equal((await inbox.list()).length, stored, 'younger than the retention: kept');
  assert.equal(await metricValue(t.app, 'retention_lag_seconds', 'table="notify_inbox"'), 0);
  t.clock.advance(2 * 60_000);
  assert.equal(await tick(), true);
  assert.equal((await inbox.list()).length, 0);
  assert.equal(await metricValue(t.app, 'retention_rows_removed_total', 'table="notify_inbox"'), stored);
  assert.equal(await metricValue(t.app, 'retention_lag_seconds', 'table="notify_inbox"'), 0);
});

test("receipts webhook: a valid signature marks the provider's message delivered; a bad or stale one is 401 and changes nothing", async () => {
  const userId = `r-${randomUUID().slice(0, 8)}`;
  await t.setPreferences(userId, { email: `${userId}@example.com` });
  const { id } = (
    await t.send({ user_id: userId, type: 'order_update', channels: ['email'], data: { order_id: 'o-1' } })
  ).json();
  // The recording provider names its n-th message p-n.
  const providerMessageId = await eventually(async () => {
    const index = t.provider.sent.findIndex((message) => message.notificationId === id);
    return index >= 0 && `p-${index + 1}`;
  });
  const status = async () => (await t.inject(`/api/notifications/${id}`)).json().channels[0];
  await eventually(async () => (await status()).status === 'sent');
  const post = (
    request: { body: string; headers: Record<string, string> },
    provider = 'http',
    body = request.body,
  ) =>
    t.app.inject({
      method: 'POST',
      url: `/api/notifications/receipts/${provider}`,
      headers: request.headers,
      payload: body,
    });

  const deliveredAt = new Date(t.clock.now().getTime() - 5000);
  const tampered = receiptRequest(secret, 'p-0', deliveredAt, t.clock.now());
  const forged = await post(tampered, 'http', tampered.body.replace('p-0', providerMessageId));
  assert.equal(forged.statusCode, 401);
  assert.equal(forged.json().code, 'receipt_signature_invalid');
  const stale = await post(
    receiptRequest(secret, providerMessageId, deliveredAt, new Date(t.clock.now().getTime() - 6 * 60_000)),
  );
  assert.equal(stale.statusCode, 401);
  assert.equal(stale.json().code, 'receipt_timestamp_stale');
  assert.equal(
    (await post(receiptRequest('another-secret', providerMessageId, deliveredAt, t.clock.now()))).statusCode,
    401,
  );
  assert.equal(
    (await post(receiptRequest(secret, providerMessageId, deliveredAt, t.clock.now()), 'fax')).statusCode,
    404,
  );
  const malformedBody = JSON.stringify({ id: 'x', type: 'message.delivered', data: {} });
  const malformed = await post({
    body: malformedBody,
    headers: signReceipt(secret, malformedBody, t.clock.now()),
  });
  assert.equal(malformed.statusCode, 400);
  // A receipt for a message not recorded (yet: a carrier may report before the send is stored) is
  // a retryable 404, never a 200 that drops it.
  const early = await post(receiptRequest(secret, 'p-not-yet', deliveredAt, t.clock.now()));
  assert.equal(early.statusCode, 404, early.body);
  assert.equal(early.json().code, 'receipt_message_unknown');
  assert.equal(early.headers['retry-after'], '2');
  assert.equal((await status()).status, 'sent', 'no refused receipt changed the delivery');

  // No API key: the signature is the credential.
  const ok = await post(receiptRequest(secret, providerMessageId, deliveredAt, t.clock.now()));
  assert.equal(ok.statusCode, 200, ok.body);
  assert.deepEqual(ok.json(), { received: true, applied: true });
  const delivered = await status();
  assert.equal(delivered.status, 'delivered');
  assert.equal(delivered.delivered_at, deliveredAt.toISOString());
  // A repeat of a receipt already applied is received, and changes nothing.
  const again = await post(receiptRequest(secret, providerMessageId, deliveredAt, t.clock.now()));
  assert.equal(again.statusCode, 200, again.body);
  assert.deepEqual(again.json(), { received: true, applied: false });
});

test('provider selection is validated once at start', () => {
  assert.throws(
    () => readProviderSettings({ NOTIFY_EMAIL_PROVIDER: 'carrier-pigeon' }),
    /NOTIFY_EMAIL_PROVIDER must be one of inbox\|smtp/,
  );
  assert.throws(() => readProviderSettings({ NOTIFY_SMS_PROVIDER: 'http' }), /NOTIFY_SMS_URL is required/);
  assert.throws(() => readProviderSettings({ NOTIFY_SMS_FALLBACK: 'inbox' }), /must differ/);
  assert.throws(
    () => readProviderSettings({ NOTIFY_PUSH_PROVIDER: 'webpush', NODE_ENV: 'production' }),
    /NOTIFY_VAPID_PUBLIC_KEY/,
  );
  const settings = readProviderSettings({
    NOTIFY_EMAIL_PROVIDER: 'smtp',
    NOTIFY_SMTP_URL: 'smtp://127.0.0.1:2525',
    NOTIFY_EMAIL_FROM: 'tickets@cinema.test',
    NOTIFY_EMAIL_FALLBACK: 'inbox',
    NOTIFY_BREAKER_RESET_MS: '200',
  });
  // In-app has one provider, the user's feed.
  assert.deepEqual(settings.primary, { email: 'smtp', push: 'inbox', sms: 'inbox', in_app: 'feed' });
  assert.deepEqual(settings.fallback, { email: 'inbox' });
  assert.equal(settings.breaker.resetTimeoutMs, 200);
});

test('an ephemeral VAPID pair is generated (with a warning) when none is configured in development', async () => {
  const warnings: unknown[] = [];
  const log = { warn: (...args: unknown[]) => void warnings.push(args), info: () => {}, error: () => {} };
  const senders = createChannelSenders({
    env: { NOTIFY_PUSH_PROVIDER: 'webpush' },
    db,
    clock: t.clock,
    metrics,
    log,
  });
  assert.equal(warnings.length, 1);
  assert.match(JSON.stringify(warnings), /ephemeral VAPID/);
  assert.deepEqual(senders.push.states(), [{ provider: 'webpush', channel: 'push', state: 'closed' }]);
  // Browsers subscribe with the same ephemeral key the sender signs with.
  const logged = (warnings[0] as [{ publicKey: string }])[0].publicKey;
  assert.equal(readProviderSettings({ NOTIFY_PUSH_PROVIDER: 'webpush' }).webPush?.publicKey, logged);
  assert.match(logged, /^[A-Za-z0-9_-]{87}$/);
  // With the inbox for push there is no key to hand out.
  assert.equal((await t.app.inject({ url: '/api/notifications/push/vapid-public-key' })).statusCode, 404);
  for (const sender of Object.values(senders)) await sender.close();
});

test("the module's platform deps can be passed as they are", async () => {
  const got: string[] = [];
  const deps = {
    config: { env: { NOTIFY_INBOX_RECEIPT_DELAY_MS: '1' }, secret: 'a-test-secret-of-some-length' },
    database: { db },
    clock: t.clock,
    metrics,
    log: { warn: () => {}, info: () => {}, error: () => {} },
  } as unknown as PlatformDeps;
  const senders = createChannelSenders({ ...deps, onReceipt: (id) => void got.push(id) });
  try {
    const sent = await senders.sms.send({
      deliveryId: 'p1:sms',
      notificationId: 'p1',
      channel: 'sms',
      type: 'refund_update',
      recipient: { userId: '9', phone: '+15005550006' },
      message: { text: 'Refund 12.00 for BK-7: completed' },
    });
    await sleep(50);
    assert.deepEqual(got, [sent.providerMessageId]);
  } finally {
    for (const sender of Object.values(senders)) await sender.close();
  }
});

test('receipts of messages stored close together reach the core together', async () => {
  const got: { id: string; at: number }[] = [];
  const senders = inboxSenders('400', (id) => void got.push({ id, at: performance.now() }));
  try {
    // One after the other (two statements), well inside the 100 ms window even on a loaded machine.
    const first = await senders.email.send(email('0190a1b2-0000-7000-8000-0000000000a1'));
    const second = await senders.email.send(email('0190a1b2-0000-7000-8000-0000000000a2'));
    await sleep(700);
    assert.deepEqual(
      got.map((receipt) => receipt.id),
      [first.providerMessageId, second.providerMessageId],
    );
    // Stored apart, reported in one turn (one timer within the 100 ms window).
    assert.ok(got[1].at - got[0].at < 5, JSON.stringify(got));
  } finally {
    for (const sender of Object.values(senders)) await sender.close();
  }
});
