import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually, realTimeClock } from '../../../test/support/notify.ts';
import { createTestApp, type TestApp } from '../../../test/support/platform.ts';
import type { Db } from '../../platform/db/index.ts';
import { type OutboundMessage, ProviderUnavailable } from '../ports.ts';
import { createChannelSenders, inboxRepository, readProviderSettings, receiptRequest } from './index.ts';

/**
 * Config-driven wiring end to end: SMS over HTTP (a local fake of the Twilio API that sends a
 * signed delivery receipt to the app's webhook after each message) with the dev inbox as fallback,
 * breakers tuned to open after 3 failures and probe after 200 ms. The notify module is built from
 * this configuration; the breaker tests build senders of their own from it.
 */
let t: TestApp;
let db: Db;
let fake: Server;
let appUrl: string;
let secret: string;
let failing = false;
let sids = 0;
/** Requests the fake carrier received (a fail-fast send must not add one). */
let carrierRequests = 0;
const env = {
  APP_SECRET: 'channel-senders-test-secret',
  NOTIFY_SMS_PROVIDER: 'http',
  NOTIFY_SMS_FALLBACK: 'inbox',
  NOTIFY_SMS_ACCOUNT_SID: 'AC1',
  NOTIFY_SMS_AUTH_TOKEN: 'token',
  NOTIFY_SMS_FROM: '+15005550000',
  NOTIFY_BREAKER_VOLUME: '3',
  NOTIFY_BREAKER_RESET_MS: '200',
  NOTIFY_BREAKER_TIMEOUT_MS: '2000',
  NOTIFY_INBOX_RECEIPT_DELAY_MS: '0',
};
let settingsEnv: Record<string, string>;
let closing = false;

async function deliverReceipt(sid: string) {
  for (let attempt = 0; attempt < 40 && !closing; attempt++) {
    await sleep(attempt === 0 ? 10 : 250);
    const receipt = receiptRequest(secret, sid, new Date());
    const answer = await fetch(`${appUrl}/api/notifications/receipts/http`, {
      method: 'POST',
      ...receipt,
    }).catch(() => undefined);
    if (answer?.ok) return;
  }
}

before(async () => {
  fake = createServer((request, response) => {
    carrierRequests++;
    request.resume();
    request.on('end', () => {
      if (failing)
        return response.writeHead(503, { 'content-type': 'application/json' }).end('{"message":"down"}');
      const sid = `SM${++sids}`;
      response
        .writeHead(201, { 'content-type': 'application/json' })
        .end(JSON.stringify({ sid, status: 'queued' }));
      // The carrier confirms a moment later, through the signed receipts webhook, and sends the
      // receipt again while the app answers non-2xx (it may arrive before the send is recorded).
      void deliverReceipt(sid);
    });
  });
  await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
  settingsEnv = { ...env, NOTIFY_SMS_URL: `http://127.0.0.1:${(fake.address() as { port: number }).port}` };
  // Receipts are signed with the fake's real time: the app checks them against real time too.
  t = await createTestApp({ services: ['notify'], env: settingsEnv, workers: true, clock: realTimeClock() });
  db = t.adapters.database.db;
  secret = readProviderSettings(t.config.env, t.config.secret).receiptSecret;
  appUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
after(async () => {
  closing = true;
  await new Promise((resolve) => fake.close(resolve));
  await t.close();
});

let n = 0;
const sms = (): OutboundMessage => ({
  deliveryId: `c${++n}:sms`,
  notificationId: `c${n}`,
  channel: 'sms',
  type: 'refund_update',
  recipient: { userId: '5', phone: '+15005550006' },
  message: { text: `Refund 12.00 for BK-${n}: completed` },
});

test("the module sends an SMS through the HTTP provider; the carrier's signed receipt marks it delivered", async () => {
  const userId = `cs-${randomUUID().slice(0, 8)}`;
  const contact = await t.app.inject({
    method: 'PATCH',
    url: `/api/users/${userId}/notification-preferences`,
    headers: t.asService,
    payload: { phone: '+15005550006' },
  });
  assert.equal(contact.statusCode, 200, contact.body);
  const accepted = await t.app.inject({
    method: 'POST',
    url: '/api/notifications',
    headers: t.asService,
    payload: {
      user_id: userId,
      type: 'refund_update',
      channels: ['sms'],
      data: { booking_id: 'BK-1', refund_amount: 12, refund_status: 'completed' },
    },
  });
  assert.equal(accepted.statusCode, 202, accepted.body);
  const url = `/api/notifications/${accepted.json().id}`;
  // The queue's worker, the carrier and its receipt all on real timers: a loaded machine takes a while.
  const delivered = await eventually(async () => {
    const channel = (await t.app.inject({ url, headers: t.asService })).json().channels[0];
    return channel.status === 'delivered' && channel;
  }, 30_000);
  assert.equal(delivered.provider, 'http');
});

test('http provider; open circuit → inbox fallback; probe → back to http', async () => {
  const log = { warn: () => {}, info: () => {}, error: () => {} };
  const senders = createChannelSenders({
    env: settingsEnv,
    db,
    clock: t.clock,
    metrics: t.app.platform.metrics,
    log,
  });
  try {
    const first = await senders.sms.send(sms());
    assert.equal(first.provider, 'http');
    assert.match(first.providerMessageId, /^SM\d+$/);

    failing = true;
    // 1 success + 2 failures in the window: ≥ 3 calls at 67 % failures opens the circuit.
    for (let i = 0; i < 2; i++) await assert.rejects(senders.sms.send(sms()), { code: 'http_503' });
    assert.deepEqual(
      senders.sms.states().map((s) => s.state),
      ['open', 'closed'],
    );
    const routed = await senders.sms.send(sms());
    assert.equal(routed.provider, 'inbox');
    const stored = await inboxRepository(db).list({ userId: '5', channel: 'sms' });
    assert.equal(stored.length, 1);
    assert.equal(stored[0].text, `Refund 12.00 for BK-${n}: completed`);

    failing = false;
    await sleep(250);
    const probe = await senders.sms.send(sms());
    assert.equal(probe.provider, 'http');
    assert.deepEqual(
      senders.sms.states().map((s) => s.state),
      ['closed', 'closed'],
    );
  } finally {
    for (const sender of Object.values(senders)) await sender.close();
  }
});

test('without a fallback an open circuit fails fast with the time left until the probe', async () => {
  const log = { warn: () => {}, info: () => {}, error: () => {} };
  const { NOTIFY_SMS_FALLBACK: _, ...noFallback } = settingsEnv;
  // A probe time no loaded machine reaches between the failures and the next send.
  const senders = createChannelSenders({
    env: { ...noFallback, NOTIFY_BREAKER_RESET_MS: '60000' },
    db,
    clock: t.clock,
    metrics: t.app.platform.metrics,
    log,
  });
  try {
    failing = true;
    for (let i = 0; i < 3; i++) await assert.rejects(senders.sms.send(sms()), { code: 'http_503' });
    const contacted = carrierRequests;
    const error = await senders.sms.send(sms()).catch((e) => e);
    assert.ok(error instanceof ProviderUnavailable, String(error));
    assert.ok(error.retryAfterMs > 0 && error.retryAfterMs <= 60_000, String(error.retryAfterMs));
    assert.equal(carrierRequests, contacted, 'fails fast: the carrier is not called');
  } finally {
    failing = false;
    for (const sender of Object.values(senders)) await sender.close();
  }
});
