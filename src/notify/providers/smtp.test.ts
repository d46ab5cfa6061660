import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, test } from 'node:test';
import { dkimVerify } from 'mailauth';
import { createTestApp, type TestApp } from '../../../test/support/platform.ts';
import { type ReceivedMail, startSmtpSink } from '../../../test/support/smtp.ts';
import type { OutboundMessage } from '../ports.ts';
import { readProviderSettings } from '../settings.ts';
import { createTemplateRenderer } from '../templates/service.ts';
import { createChannelSenders } from './index.ts';
import { createSmtpProvider } from './smtp.ts';

/** A real SMTP server on a local port (support/smtp.ts). */
let sink: Awaited<ReturnType<typeof startSmtpSink>>;
let received: ReceivedMail[];
let port: number;
/** The notify module's database: the default templates the message is rendered from. */
let t: TestApp;

before(async () => {
  sink = await startSmtpSink();
  ({ received, port } = sink);
  t = await createTestApp({ services: ['notify'] });
});
after(async () => {
  await sink.close();
  await t.close();
});

/** The leaf parts of a (nested) multipart message by content type, decoded (quoted-printable or base64). */
function mimeParts(raw: string): Record<string, string> {
  const boundaries = [...raw.matchAll(/boundary="?([^";\r\n]+)"?/g)].map((match) => match[1]);
  assert.ok(boundaries.length, raw);
  const parts: Record<string, string> = {};
  for (const boundary of boundaries) {
    const section = raw.split(`--${boundary}--`)[0];
    for (const chunk of section.split(`--${boundary}\r\n`).slice(1)) {
      const [head, ...rest] = chunk.split('\r\n\r\n');
      const type = /content-type:\s*([^;\r\n]+)/i.exec(head)?.[1];
      if (!type || type.startsWith('multipart/') || parts[type]) continue;
      const body = rest.join('\r\n\r\n').trim();
      const encoding = /content-transfer-encoding:\s*(\S+)/i.exec(head)?.[1].toLowerCase();
      parts[type] =
        encoding === 'base64'
          ? Buffer.from(body, 'base64').toString(type.startsWith('text/') ? 'utf8' : 'latin1')
          : encoding === 'quoted-printable'
            ? Buffer.from(
                body
                  .replace(/=\r\n/g, '')
                  .replace(/=([0-9A-F]{2})/g, (_m, hex) => String.fromCharCode(Number.parseInt(hex, 16))),
                'latin1',
              ).toString('utf8')
            : body;
    }
  }
  return parts;
}

const email = (to: string | undefined, message: OutboundMessage['message']): OutboundMessage => ({
  deliveryId: '0190a1b2-0000-7000-8000-00000000abcd:email',
  notificationId: '0190a1b2-0000-7000-8000-00000000abcd',
  channel: 'email',
  type: 'booking_confirmed',
  recipient: { userId: '7', email: to },
  message,
});

test('delivers the rendered template over SMTP: subject, text and HTML parts, Message-ID from the delivery id', async () => {
  const renderer = createTemplateRenderer(t.adapters.database.db);
  const rendered = await renderer.render(
    'booking_confirmed',
    'email',
    {
      booking_id: 'BK-9',
      movie_title: 'Dune',
      theater_name: 'Odeon',
      show_time: '2026-03-01T19:30:00Z',
      seats: ['C7'],
      total_paid: '12.50',
      qr_code: 'ticket-token-123',
    },
    { timeZone: 'Europe/London' },
  );
  const provider = createSmtpProvider({
    url: `smtp://127.0.0.1:${port}`,
    from: '"Cinema" <tickets@cinema.test>',
  });
  try {
    const result = await provider.send(email('ana@example.test', rendered));
    assert.deepEqual(result, {
      providerMessageId: '<0190a1b2-0000-7000-8000-00000000abcd.email@cinema.test>',
      provider: 'smtp',
    });
    assert.equal(received.length, 1);
    const [mail] = received;
    assert.equal(mail.from, 'tickets@cinema.test');
    assert.deepEqual(mail.to, ['ana@example.test']);
    assert.match(mail.raw, /^Subject: Your tickets for Dune\r$/m);
    assert.match(mail.raw, /^Message-ID: <0190a1b2-0000-7000-8000-00000000abcd\.email@cinema\.test>\r$/im);
    const parts = mimeParts(mail.raw);
    assert.match(parts['text/plain'], /Booking BK-9 is confirmed\./);
    assert.match(parts['text/plain'], /Sun 1 Mar 2026, 19:30/);
    assert.match(parts['text/html'], /<h1>Dune<\/h1>/);
    // The QR data: URL travels as an inline attachment (cid:), which mail clients show.
    const cid = /src="cid:([^"]+)"/.exec(parts['text/html'])?.[1];
    assert.ok(cid, parts['text/html']);
    assert.ok(mail.raw.includes(`Content-ID: <${cid}>`), 'the image part carries that Content-ID');
    assert.equal(parts['image/png'].slice(1, 4), 'PNG');
  } finally {
    await provider.close?.();
  }
});

test('5xx is permanent, 4xx and connection errors are transient', async () => {
  const provider = createSmtpProvider({ url: `smtp://127.0.0.1:${port}`, from: 'tickets@cinema.test' });
  const message = { subject: 'S', text: 'T' };
  try {
    await assert.rejects(provider.send(email('bounce@example.test', message)), {
      code: 'smtp_550',
      permanent: true,
    });
    await assert.rejects(provider.send(email('busy@example.test', message)), {
      code: 'smtp_451',
      permanent: false,
    });
    await assert.rejects(provider.send(email(undefined, message)), { code: 'no_address', permanent: true });
  } finally {
    await provider.close?.();
  }
  const down = createSmtpProvider({
    url: 'smtp://127.0.0.1:1',
    from: 'tickets@cinema.test',
    timeoutMs: 2000,
  });
  try {
    await assert.rejects(down.send(email('ana@example.test', message)), { permanent: false });
  } finally {
    await down.close?.();
  }
});

/** A header's value as received, its folded continuation lines joined. */
function header(raw: string, name: string): string | undefined {
  const head = raw.split('\r\n\r\n')[0].replace(/\r\n[ \t]+/g, ' ');
  return new RegExp(`^${name}: (.*)$`, 'im').exec(head)?.[1];
}

test('configured from the environment: Auto-Submitted on every mail, List-Unsubscribe one-click on bulk types only, DKIM-Signature, the EHLO name', async () => {
  const { privateKey, publicKey: key } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const publicKey = key.export({ type: 'spki', format: 'der' }).toString('base64');
  const env = {
    NOTIFY_EMAIL_PROVIDER: 'smtp',
    NOTIFY_SMTP_URL: `smtp://127.0.0.1:${port}`,
    NOTIFY_EMAIL_FROM: '"Cinema" <tickets@cinema.test>',
    NOTIFY_SMTP_NAME: 'mailer.cinema.test',
    NOTIFY_SMTP_DKIM_DOMAIN: 'cinema.test',
    NOTIFY_SMTP_DKIM_SELECTOR: 'mail2026',
    // As it sits in an env file: one line, its line breaks written \n.
    NOTIFY_SMTP_DKIM_PRIVATE_KEY: (privateKey.export({ type: 'pkcs8', format: 'pem' }) as string).replace(
      /\n/g,
      '\\n',
    ),
    NOTIFY_UNSUBSCRIBE_MAILTO: 'unsubscribe@cinema.test',
  };
  const senders = createChannelSenders({
    env,
    secret: 'a-test-secret-of-32-characters!!',
    baseUrl: 'https://tickets.cinema.test',
    db: t.adapters.database.db,
    clock: t.clock,
    metrics: t.app.platform.metrics,
    log: { warn() {}, error() {}, info() {} },
  });
  const message = { subject: 'Diwali offers', text: 'Two for one.' };
  try {
    received.length = 0;
    await senders.email.send({ ...email('ana@example.test', message), type: 'marketing' });
    await senders.email.send({ ...email('ana@example.test', message), deliveryId: 'd2:email' });
  } finally {
    await senders.email.close();
  }
  assert.equal(received.length, 2);
  const [bulk, transactional] = received;
  for (const mail of received) {
    assert.equal(header(mail.raw, 'Auto-Submitted'), 'auto-generated');
    assert.equal(mail.ehlo, 'mailer.cinema.test');
    const dkim = header(mail.raw, 'DKIM-Signature');
    assert.ok(dkim, mail.raw);
    assert.match(dkim, /\bd=cinema\.test;/);
    assert.match(dkim, /\bs=mail2026;/);
    assert.match(dkim, /\bh=[^;]*auto-submitted/i);
    // As a receiving server checks it: the key published at mail2026._domainkey.cinema.test.
    const verified = await dkimVerify(mail.raw, {
      resolver: async (name: string, type: string) => {
        assert.equal(`${name} ${type}`, 'mail2026._domainkey.cinema.test TXT');
        return [[`v=DKIM1; k=rsa; p=${publicKey}`]];
      },
    });
    assert.deepEqual(
      verified.results.map((result) => result.status.result),
      ['pass'],
      verified.results.map((result) => result.info).join('; '),
    );
  }
  const unsubscribe = header(bulk.raw, 'List-Unsubscribe');
  assert.match(
    unsubscribe ?? '',
    /^<https:\/\/tickets\.cinema\.test\/notify\/unsubscribe\/7\.[\w-]{43}>, <mailto:unsubscribe@cinema\.test\?subject=unsubscribe>$/,
  );
  assert.equal(header(bulk.raw, 'List-Unsubscribe-Post'), 'List-Unsubscribe=One-Click');
  // RFC 8058 §4: the signature must cover both headers.
  assert.match(header(bulk.raw, 'DKIM-Signature')!, /\bh=[^;]*list-unsubscribe:[^;]*list-unsubscribe-post/i);
  // A booking confirmation offers no unsubscribe.
  assert.equal(header(transactional.raw, 'List-Unsubscribe'), undefined);
  assert.equal(header(transactional.raw, 'List-Unsubscribe-Post'), undefined);
});

test('SMTP settings that cannot work stop the start, naming the variable', () => {
  const smtp = {
    NOTIFY_EMAIL_PROVIDER: 'smtp',
    NOTIFY_SMTP_URL: 'smtp://127.0.0.1:2525',
    NOTIFY_EMAIL_FROM: 'tickets@cinema.test',
  };
  assert.throws(
    () => readProviderSettings({ ...smtp, NOTIFY_SMTP_DKIM_DOMAIN: 'cinema.test' }),
    /NOTIFY_SMTP_DKIM_SELECTOR is required/,
  );
  assert.throws(
    () =>
      readProviderSettings({
        ...smtp,
        NOTIFY_SMTP_DKIM_DOMAIN: 'cinema.test',
        NOTIFY_SMTP_DKIM_SELECTOR: 's1',
        NOTIFY_SMTP_DKIM_PRIVATE_KEY: 'not a key',
      }),
    /NOTIFY_SMTP_DKIM_PRIVATE_KEY must be an RSA private key/,
  );
  assert.throws(() => readProviderSettings({ ...smtp, NOTIFY_SMTP_NAME: 'bad name!' }), /NOTIFY_SMTP_NAME/);
  assert.equal(
    readProviderSettings({ ...smtp, NOTIFY_SMTP_NAME: 'mx1.cinema.test' }).smtp?.name,
    'mx1.cinema.test',
  );
});
