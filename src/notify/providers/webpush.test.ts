import assert from 'node:assert/strict';
import { createDecipheriv, createECDH, createPublicKey, hkdfSync, randomBytes, verify } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Agent, createServer, type Server } from 'node:https';
import { after, before, test } from 'node:test';
import { selfSignedCertificate } from '../../../test/support/notify-push.ts';
import { createOutboundGuard } from '../../platform/http/outbound.ts';
import type { OutboundMessage, PushSubscription } from '../ports.ts';
import { createWebPushProvider, generateVapidKeys } from './webpush.ts';

/** A local push service: records each request; the path decides the answer. */
const pushes: { path: string; headers: IncomingHttpHeaders; body: Buffer }[] = [];
let server: Server;
let base: string;
const vapid = generateVapidKeys();
let agent: Agent;
/** The local push service is on loopback: allowed explicitly, as OUTBOUND_ALLOW_HOSTS does for the app. */
const outbound = createOutboundGuard({ allow: ['127.0.0.1'] });
/** What a hostile push endpoint answers, hoping to see it echoed back in the notification's attempts. */
const SECRET = 'SECRET-FROM-THE-PUSH-ENDPOINT';

before(async () => {
  const tls = selfSignedCertificate('IP:127.0.0.1');
  agent = new Agent({ ca: tls.cert });
  server = createServer(tls, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      pushes.push({ path: request.url!, headers: request.headers, body: Buffer.concat(chunks) });
      const status =
        {
          '/push/gone': 410,
          '/push/missing': 404,
          '/push/busy': 429,
          '/push/broken': 502,
          '/push/leaky': 400,
          '/push/leaky-busy': 503,
        }[request.url!] ?? 201;
      response
        .writeHead(status, status === 201 ? { location: `${base}/messages/${pushes.length}` } : {})
        .end(request.url!.startsWith('/push/leaky') ? `${SECRET} ${'x'.repeat(100_000)}` : undefined);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `https://127.0.0.1:${(server.address() as { port: number }).port}`;
});
after(() => {
  agent.destroy();
  return new Promise((resolve) => server.close(resolve));
});

/** A browser's side of a subscription: its ECDH key pair and auth secret. */
function browserSubscription(path: string) {
  const ecdh = createECDH('prime256v1');
  const publicKey = ecdh.generateKeys();
  const auth = randomBytes(16);
  const subscription: PushSubscription = {
    endpoint: `${base}${path}`,
    keys: { p256dh: publicKey.toString('base64url'), auth: auth.toString('base64url') },
  };
  return { ecdh, publicKey, auth, subscription };
}

/** RFC 8291 / RFC 8188 decryption of an aes128gcm body with the user agent's private key. */
function decrypt(body: Buffer, browser: ReturnType<typeof browserSubscription>): string {
  const salt = body.subarray(0, 16);
  const recordSize = body.readUInt32BE(16);
  const keyIdLength = body[20];
  const serverPublic = body.subarray(21, 21 + keyIdLength);
  const ciphertext = body.subarray(21 + keyIdLength);
  assert.equal(keyIdLength, 65);
  assert.ok(ciphertext.length <= recordSize, 'a single record');
  const shared = browser.ecdh.computeSecret(serverPublic);
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), browser.publicKey, serverPublic]);
  const ikm = Buffer.from(hkdfSync('sha256', shared, browser.auth, keyInfo, 32));
  const cek = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16));
  const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12));
  const decipher = createDecipheriv('aes-128-gcm', cek, nonce);
  decipher.setAuthTag(ciphertext.subarray(-16));
  const padded = Buffer.concat([decipher.update(ciphertext.subarray(0, -16)), decipher.final()]);
  // The last record ends with the delimiter 0x02, then zero padding.
  let end = padded.length - 1;
  while (padded[end] === 0) end--;
  assert.equal(padded[end], 2);
  return padded.subarray(0, end).toString('utf8');
}

/** Checks the VAPID header: `vapid t=<ES256 JWT>, k=<public key>`, audience = push service origin. */
function verifyVapid(header: string | undefined) {
  const match = /^vapid t=([^,]+), k=(.+)$/.exec(header ?? '');
  assert.ok(match, header);
  const [, jwt, key] = match;
  assert.equal(key, vapid.publicKey);
  const [head, claims, signature] = jwt.split('.');
  const raw = Buffer.from(key, 'base64url');
  const publicKey = createPublicKey({
    key: {
      kty: 'EC',
      crv: 'P-256',
      x: raw.subarray(1, 33).toString('base64url'),
      y: raw.subarray(33).toString('base64url'),
    },
    format: 'jwk',
  });
  const signed = Buffer.from(`${head}.${claims}`);
  assert.ok(
    verify(
      'sha256',
      signed,
      { key: publicKey, dsaEncoding: 'ieee-p1363' },
      Buffer.from(signature, 'base64url'),
    ),
  );
  const payload = JSON.parse(Buffer.from(claims, 'base64url').toString());
  assert.equal(payload.aud, base);
  assert.equal(payload.sub, 'mailto:ops@cinema.test');
}

const push = (subscriptions: PushSubscription[]): OutboundMessage => ({
  deliveryId: 'n1:push',
  notificationId: 'n1',
  channel: 'push',
  type: 'booking_confirmed',
  recipient: { userId: '42', pushSubscriptions: subscriptions },
  message: { subject: 'Booking confirmed', text: 'Dune, Sun 1 Mar 20:30, seats C7 C8.' },
});

test('the push service receives an aes128gcm payload that decrypts to the rendered message', async () => {
  const gone: [string, string][] = [];
  const provider = createWebPushProvider(
    { ...vapid, subject: 'mailto:ops@cinema.test', agent, outbound },
    (userId, endpoint) => void gone.push([userId, endpoint]),
  );
  const phone = browserSubscription('/push/phone');
  const old = browserSubscription('/push/gone');
  pushes.length = 0;
  const result = await provider.send(push([phone.subscription, old.subscription]));
  assert.equal(result.provider, 'webpush');
  assert.match(result.providerMessageId, /\/messages\/\d$/);
  const received = pushes.find((p) => p.path === '/push/phone')!;
  assert.equal(received.headers['content-encoding'], 'aes128gcm');
  assert.equal(received.headers.ttl, '86400');
  assert.match(received.headers.topic as string, /^[A-Za-z0-9_-]{32}$/);
  verifyVapid(received.headers.authorization);
  assert.deepEqual(JSON.parse(decrypt(received.body, phone)), {
    title: 'Booking confirmed',
    body: 'Dune, Sun 1 Mar 20:30, seats C7 C8.',
    notificationId: 'n1',
    type: 'booking_confirmed',
  });
  // The gone subscription is reported so the core deletes it; the message still counts as sent.
  assert.deepEqual(gone, [['42', `${base}/push/gone`]]);
});

test('404/410 on every subscription is permanent; 429 and 5xx are transient', async () => {
  const provider = createWebPushProvider({ ...vapid, subject: 'mailto:ops@cinema.test', agent, outbound });
  const at = (path: string) => browserSubscription(path).subscription;
  await assert.rejects(provider.send(push([at('/push/gone'), at('/push/missing')])), {
    code: 'subscription_gone',
    permanent: true,
  });
  await assert.rejects(provider.send(push([at('/push/busy')])), { code: 'push_429', permanent: false });
  await assert.rejects(provider.send(push([at('/push/broken'), at('/push/gone')])), {
    code: 'push_502',
    permanent: false,
  });
  await assert.rejects(provider.send(push([])), { code: 'no_address', permanent: true });
});

test("an endpoint's answer is never part of the error: a status and a few words", async () => {
  const provider = createWebPushProvider({ ...vapid, subject: 'mailto:ops@cinema.test', agent, outbound });
  const at = (path: string) => browserSubscription(path).subscription;
  await assert.rejects(provider.send(push([at('/push/leaky')])), (error: Error & { code: string }) => {
    assert.equal(error.code, 'push_400');
    assert.equal(error.message, 'push endpoint answered 400');
    return true;
  });
  await assert.rejects(provider.send(push([at('/push/leaky-busy')])), {
    code: 'push_503',
    message: 'push endpoint answered 503',
    permanent: false,
  });
});

test('without the allow-list a loopback endpoint is refused for good and never contacted', async () => {
  const provider = createWebPushProvider({ ...vapid, subject: 'mailto:ops@cinema.test', agent });
  pushes.length = 0;
  await assert.rejects(provider.send(push([browserSubscription('/push/phone').subscription])), {
    code: 'push_endpoint_refused',
    message: 'push endpoint refused: 127.0.0.1 is a loopback address',
    permanent: true,
  });
  assert.equal(pushes.length, 0);
});

test('keys that make no encryption key fail for good, before any request', async () => {
  const provider = createWebPushProvider({ ...vapid, subject: 'mailto:ops@cinema.test', agent, outbound });
  pushes.length = 0;
  const broken = { endpoint: `${base}/push/phone`, keys: { p256dh: 'k', auth: 'a' } };
  await assert.rejects(provider.send(push([broken])), { code: 'push_subscription_invalid', permanent: true });
  assert.equal(pushes.length, 0);
});
