import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import { card, dumpDatabase, paymentsApi } from '../../test/support/payments.ts';
import {
  createTestAdapters,
  type TestAdapters,
  type TestApp,
  testConfig,
} from '../../test/support/platform.ts';
import { type App, buildApp } from '../app.ts';
import { createTestClock } from '../platform/clock.ts';
import { type PaymentsApi, TEST_CARDS } from './api.ts';

/**
 * The full card number must never be stored or logged (last four only). This runs every path a
 * number travels (success, decline, invalid, timeout, webhook, idempotent replay, 500s) with
 * request logging on at trace level, then searches every log line and every table for it.
 */
let app: App;
let adapters: TestAdapters;
let api: PaymentsApi;
let logs = '';
const clock = createTestClock();
const config = testConfig({ PAYMENT_TIMEOUT_MS: '50', LOG_LEVEL: 'trace', LOG_REQUESTS: 'true' });

before(async () => {
  adapters = await createTestAdapters(config, clock);
  const stream = new Writable({
    write(chunk, _encoding, done) {
      logs += chunk.toString();
      done();
    },
  });
  app = await buildApp(config, adapters, { logger: { level: 'trace', stream }, modules: ['payments'] });
  await app.ready();
  api = paymentsApi(app);
});
after(async () => {
  await app.close();
  await adapters.close();
});

const NUMBERS = [TEST_CARDS.success, TEST_CARDS.declined, TEST_CARDS.noAnswer, '4242424242424241'];

const payload = (number: string) => ({
  payment_method: 'CARD',
  payment_details: card(number.replace(/(\d{4})/g, '$1 ').trim()),
});

function pay(id: string, number: string, headers: Record<string, string> = {}) {
  return app.inject({ method: 'POST', url: `/api/v1/payments/${id}/pay`, headers, payload: payload(number) });
}

test('no full card number in any table or log line, whatever the outcome', async () => {
  const create = () =>
    api.createPayment({ purpose: 'parking', reference: 't', amountMinor: 400, description: 'Parking' });
  const paid = await create();
  assert.equal((await pay(paid.id, TEST_CARDS.success, { 'idempotency-key': 'k1' })).statusCode, 200);
  assert.equal((await pay(paid.id, TEST_CARDS.success, { 'idempotency-key': 'k1' })).statusCode, 200);
  assert.equal((await pay((await create()).id, TEST_CARDS.declined)).statusCode, 402);
  assert.equal((await pay((await create()).id, '4242424242424241')).statusCode, 422);
  const slow = await create();
  assert.equal((await pay(slow.id, TEST_CARDS.noAnswer)).statusCode, 202);
  await api.sandbox.settle(slow.id, 'succeeded');
  await api.refund(paid.id, { reason: 'test' });
  // A database outage mid-payment: a 500/503 is logged with its error, never with the body.
  const broken = await create();
  await adapters.database.db.schema.alterTable('payments_sandbox_charges').renameTo('gone').execute();
  assert.ok((await pay(broken.id, TEST_CARDS.success)).statusCode >= 500);
  await adapters.database.db.schema.alterTable('gone').renameTo('payments_sandbox_charges').execute();

  assert.match(logs, /incoming request/, 'request logging was on');
  assert.match(logs, /payment gateway/, 'payment paths logged');
  const dump = await dumpDatabase({ adapters } as TestApp);
  assert.match(dump, /"card_last4":"4242"/, 'the last four are kept');
  for (const number of NUMBERS) {
    const spaced = number.replace(/(\d{4})/g, '$1 ').trim();
    for (const form of [number, spaced]) {
      assert.equal(logs.includes(form), false, `a log line contains ${form}`);
      assert.equal(dump.includes(form), false, `the database contains ${form}`);
    }
  }
  // The idempotency record fingerprints the body with a keyed hash: a plain SHA-256 of a body
  // holding a card number could be brute-forced back to the number.
  const plain = createHash('sha256')
    .update(`POST /api/v1/payments/${paid.id}/pay\n${JSON.stringify(payload(TEST_CARDS.success))}`)
    .digest('base64url');
  assert.match(dump, /"request_hash":/);
  assert.equal(dump.includes(plain), false, 'the idempotency record holds an unkeyed hash of the card');
  assert.doesNotMatch(logs, /"(cvc|card_number|payment_details)":/, 'no request body in the logs');
});
