import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { after, before, test } from 'node:test';
import type { OutboundMessage } from '../ports.ts';
import { createSmsHttpProvider } from './sms-http.ts';

/** A local fake of Twilio's Messages API: records each request and answers by the To number. */
interface Recorded {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  form: Record<string, string>;
}
const requests: Recorded[] = [];
let server: Server;
let base: string;
const SID = 'AC0123456789abcdef';
const TOKEN = 'secret-token';

before(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const form = Object.fromEntries(new URLSearchParams(body));
      requests.push({ method: request.method!, url: request.url!, headers: request.headers, form });
      const answer = (status: number, json: object) =>
        response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json));
      const expectedAuth = `Basic ${Buffer.from(`${SID}:${TOKEN}`).toString('base64')}`;
      if (request.headers.authorization !== expectedAuth) {
        return answer(401, { code: 20003, message: 'Authenticate', status: 401 });
      }
      switch (form.To) {
        case '+15005550001':
          return answer(400, {
            code: 21211,
            message: "The 'To' number is not a valid phone number.",
            status: 400,
          });
        case '+15005550009':
          return answer(400, {
            code: 21610,
            message: 'Attempt to send to unsubscribed recipient',
            status: 400,
          });
        case '+15005550429':
          return answer(429, { code: 20429, message: 'Too Many Requests', status: 429 });
        case '+15005550500':
          return answer(503, { message: 'Service unavailable' });
        default:
          return answer(201, { sid: `SM${requests.length.toString().padStart(32, '0')}`, status: 'queued' });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
after(() => new Promise((resolve) => server.close(resolve)));

const sms = (phone: string | undefined, deliveryId = 'n1:sms'): OutboundMessage => ({
  deliveryId,
  notificationId: deliveryId.split(':')[0],
  channel: 'sms',
  type: 'booking_confirmed',
  recipient: { userId: '7', phone },
  message: { text: 'Booked: Dune 20:30, seats C7. Ref BK-1' },
});

test('sends the exact Twilio request and returns the message sid', async () => {
  const provider = createSmsHttpProvider({
    url: base,
    accountSid: SID,
    authToken: TOKEN,
    from: '+15005550000',
  });
  requests.length = 0;
  const result = await provider.send(sms('+15005550006', '0190a1b2-0000-7000-8000-000000000001:sms'));
  assert.equal(result.provider, 'http');
  assert.match(result.providerMessageId, /^SM\d{32}$/);
  assert.equal(requests.length, 1);
  const [request] = requests;
  assert.equal(request.method, 'POST');
  assert.equal(request.url, `/2010-04-01/Accounts/${SID}/Messages.json`);
  assert.equal(request.headers['content-type'], 'application/x-www-form-urlencoded');
  assert.equal(request.headers['i-twilio-idempotency-token'], '0190a1b2-0000-7000-8000-000000000001:sms');
  assert.deepEqual(request.form, {
    To: '+15005550006',
    From: '+15005550000',
    Body: 'Booked: Dune 20:30, seats C7. Ref BK-1',
  });
});

test('each error answer maps to permanent or transient', async () => {
  const provider = createSmsHttpProvider({
    url: base,
    accountSid: SID,
    authToken: TOKEN,
    from: '+15005550000',
  });
  const cases: [string, string, boolean][] = [
    ['+15005550001', 'invalid_number', true],
    ['+15005550009', 'unsubscribed', true],
    ['+15005550429', 'http_429', false],
    ['+15005550500', 'http_503', false],
  ];
  for (const [phone, code, permanent] of cases) {
    await assert.rejects(provider.send(sms(phone)), { name: 'ProviderError', code, permanent }, phone);
  }
  await assert.rejects(provider.send(sms(undefined)), { code: 'no_address', permanent: true });
  const wrongToken = createSmsHttpProvider({ url: base, accountSid: SID, authToken: 'nope', from: '+1' });
  await assert.rejects(wrongToken.send(sms('+15005550006')), { code: 'provider_auth', permanent: true });
});

test('an unreachable provider is a transient error', async () => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as { port: number }).port;
  await new Promise((resolve) => closed.close(resolve));
  const provider = createSmsHttpProvider({
    url: `http://127.0.0.1:${port}`,
    accountSid: SID,
    authToken: TOKEN,
    from: '+1',
  });
  await assert.rejects(provider.send(sms('+15005550006')), { code: 'sms_unreachable', permanent: false });
});
