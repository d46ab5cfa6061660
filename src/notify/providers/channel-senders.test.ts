import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { systemClock } from '../../platform/clock.ts';
import { createEdgeHarness, type EdgeHarness } from '../edge-testing.ts';
import { type OutboundMessage, ProviderUnavailable } from '../ports.ts';
import {
  createChannelSenders,
  inboxRepository,
  providerRoutes,
  readProviderSettings,
  receiptRequest,
} from './index.ts';

/**
 * Config-driven wiring end to end: SMS over HTTP (a local fake of the Twilio API that sends a
 * signed delivery receipt to the app's webhook after each message) with the dev inbox as fallback,
 * breakers tuned to open after 3 failures and probe after 200 ms.
 */
let h: EdgeHarness;
let fake: Server;
let appUrl: string;
let failing = false;
let sids = 0;
const receipts: [string, Date][] = [];
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

before(async () => {
  h = await createEdgeHarness();
  const onReceipt = (id: string, at: Date) => void receipts.push([id, at]);
  fake = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      if (failing)
        return response.writeHead(503, { 'content-type': 'application/json' }).end('{"message":"down"}');
      const sid = `SM${++sids}`;
      response
        .writeHead(201, { 'content-type': 'application/json' })
        .end(JSON.stringify({ sid, status: 'queued' }));
      // The carrier confirms a moment later, through the signed receipts webhook.
      const secret = readProviderSettings(settingsEnv).receiptSecret;
      const receipt = receiptRequest(secret, sid, new Date());
      setTimeout(() => {
        fetch(`${appUrl}/api/notifications/receipts/http`, { method: 'POST', ...receipt }).catch(() => {});
      }, 10);
    });
  });
  await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
  settingsEnv = { ...env, NOTIFY_SMS_URL: `http://127.0.0.1:${(fake.address() as { port: number }).port}` };
  // The harness clock is a test clock; receipts are checked against real time here.
  await providerRoutes(h.app, {
    env: settingsEnv,
    db: h.db,
    clock: systemClock,
    onReceipt,
  });
  appUrl = await h.app.listen({ port: 0, host: '127.0.0.1' });
});
after(async () => {
  await new Promise((resolve) => fake.close(resolve));
  await h.close();
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

test('http provider with receipts; open circuit → inbox fallback; probe → back to http', async () => {
  const log = { warn: () => {}, info: () => {}, error: () => {} };
  const senders = createChannelSenders({
    env: settingsEnv,
    db: h.db,
    clock: h.clock,
    metrics: h.metrics,
    log,
  });
  try {
    const first = await senders.sms.send(sms());
    assert.deepEqual(first, { providerMessageId: 'SM1', provider: 'http' });
    for (let i = 0; i < 50 && receipts.length === 0; i++) await sleep(20);
    assert.deepEqual(
      receipts.map(([id]) => id),
      ['SM1'],
    );

    failing = true;
    // 1 success + 2 failures in the window: ≥ 3 calls at 67 % failures opens the circuit.
    for (let i = 0; i < 2; i++) await assert.rejects(senders.sms.send(sms()), { code: 'http_503' });
    assert.deepEqual(
      senders.sms.states().map((s) => s.state),
      ['open', 'closed'],
    );
    const routed = await senders.sms.send(sms());
    assert.equal(routed.provider, 'inbox');
    const stored = await inboxRepository(h.db).list({ userId: '5', channel: 'sms' });
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
  const senders = createChannelSenders({
    env: noFallback,
    db: h.db,
    clock: h.clock,
    metrics: h.metrics,
    log,
  });
  try {
    failing = true;
    for (let i = 0; i < 3; i++) await assert.rejects(senders.sms.send(sms()), { code: 'http_503' });
    const started = Date.now();
    const error = await senders.sms.send(sms()).catch((e) => e);
    assert.ok(error instanceof ProviderUnavailable, String(error));
    assert.ok(error.retryAfterMs > 0 && error.retryAfterMs <= 200, String(error.retryAfterMs));
    assert.ok(Date.now() - started < 50, 'fails fast');
  } finally {
    failing = false;
    for (const sender of Object.values(senders)) await sender.close();
  }
});
