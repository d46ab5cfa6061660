import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eventually, type NotifyTestApp, notifyTestApp } from '../../../test/support/notify.ts';
import { generateSecret } from '../../platform/auth/production.ts';
import { ProviderError } from '../ports.ts';
import { createInboxProvider } from '../providers/inbox.ts';
import { readProviderSettings, receiptRequest } from '../providers/index.ts';
import { redriveOutcome } from './routes.ts';

/**
 * The console pages as production serves them (no page signs anyone in by itself), on the notify
 * module with recording providers: one notification whose e-mail failed once, was sent on the
 * retry and then delivered; whose SMS failed for good (a dead letter); whose push was skipped. The
 * dev inbox holds a hostile e-mail.
 */
const key = generateSecret;
const ADMIN_KEY = key();
const PRODUCTION = {
  NODE_ENV: 'production',
  APP_SECRET: key(),
  ADMIN_API_KEY: ADMIN_KEY,
  SERVICE_KEYS: `backoffice notify:send ${key()}`,
  NOTIFY_RETRY_DELAYS_MS: '60000',
};
const USER = '7';

let t: NotifyTestApp;
let cookie = '';
let notificationId = '';
let smsFails = true;

const status = async () => (await t.inject(`/api/notifications/${notificationId}`)).json();
const channel = async (name: string) =>
  (await status()).channels.find((c: { channel: string }) => c.channel === name);
const deadLetters = async () =>
  (await t.inject('/api/notifications/dead-letters')).json().dead_letters as { id: string }[];

before(async () => {
  t = await notifyTestApp({ env: PRODUCTION, workers: true });
  const login = await t.app.inject({
    method: 'POST',
    url: '/sign-in',
    payload: { key: ADMIN_KEY, next: '/notify/inbox' },
  });
  cookie = String(login.headers['set-cookie']).split(';')[0];
  await t.setPreferences(USER, {
    email: 'ana@example.test',
    phone: '+15005550006',
    quiet_hours_start: '22:00',
    quiet_hours_end: '07:00',
    timezone: 'Europe/Berlin',
  });
  let emailTries = 0;
  t.provider.behaviour = (message) => {
    if (message.channel === 'sms' && smsFails) {
      return new ProviderError('invalid_number', 'SMS provider answered 400: <bad> number', {
        permanent: true,
      });
    }
    return message.channel === 'email' && ++emailTries === 1 ? 'transient' : 'ok';
  };
  const accepted = await t.inject({
    method: 'POST',
    url: '/api/notifications',
    payload: {
      user_id: USER,
      type: 'order_update',
      channels: ['email', 'sms', 'push'],
      data: { order_id: 'o-1' },
    },
  });
  assert.equal(accepted.statusCode, 202, accepted.body);
  notificationId = accepted.json().id;
  await eventually(async () => (await status()).attempts.length === 2 && (await deadLetters()).length === 1);
  t.clock.advance(60_000);
  await eventually(async () => (await channel('email')).status === 'sent');
  // The provider confirms through the signed receipts webhook (the recording provider's first id).
  const secret = readProviderSettings(t.config.env, t.config.secret).receiptSecret;
  const receipt = receiptRequest(secret, 'p-1', t.clock.now());
  await t.app.inject({
    method: 'POST',
    url: '/api/notifications/receipts/http',
    ...receipt,
    payload: receipt.body,
  });

  await createInboxProvider('email', { db: t.adapters.database.db, clock: t.clock }).send({
    deliveryId: `${notificationId}:email`,
    notificationId,
    channel: 'email',
    type: 'booking_confirmed',
    recipient: { userId: USER, email: 'ana@example.test' },
    message: {
      subject: 'Your tickets for <Dune>',
      text: 'Booking BK-1 is confirmed.',
      html: '<h1>Dune</h1><script>parent.document.title = "pwned"</script><p>"quoted" & more</p>',
    },
  });
});
after(() => t.close());

/** ISO timestamps in a page's text (tags and attribute values removed): there should be none. */
const visibleIsoTimes = (html: string) =>
  html
    .replace(/<script[\s\S]*?<\/script>/g, '')
    .replace(/<[^>]*>/g, ' ')
    .match(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/g) ?? [];

test('landing links the inbox, dead letters and lookups, for anyone', async () => {
  const page = await t.app.inject({ url: '/notify' });
  assert.equal(page.statusCode, 200);
  assert.match(page.headers['content-type'] as string, /text\/html/);
  for (const href of ['/notify/inbox', '/notify/dead-letters', 'action="/notify/notifications"']) {
    assert.ok(page.body.includes(href), href);
  }
  const lookup = await t.app.inject({ url: `/notify/notifications?id=${notificationId}` });
  assert.equal(lookup.statusCode, 303);
  assert.equal(lookup.headers.location, `/notify/notifications/${notificationId}`);
  const user = await t.app.inject({ url: `/notify/users?user=${USER}` });
  assert.equal(user.statusCode, 303);
  assert.equal(user.headers.location, `/notify/users/${USER}/preferences`);
});

test('the console pages need an admin page session: sign in once; the cookie holds a signed session, not the key', async () => {
  for (const url of [
    `/notify/inbox?user=${USER}`,
    '/notify/dead-letters',
    `/notify/users/${USER}/preferences`,
    `/notify/notifications/${notificationId}`,
  ]) {
    const bare = await t.app.inject({ url });
    assert.equal(bare.statusCode, 303, url);
    assert.equal(bare.headers.location, `/sign-in?next=${encodeURIComponent(url)}`);
  }
  const [letter] = await deadLetters();
  const post = await t.app.inject({
    method: 'POST',
    url: `/notify/dead-letters/${encodeURIComponent(letter.id)}/redrive`,
  });
  assert.equal(post.statusCode, 303);
  assert.match(post.headers.location as string, /^\/sign-in/);
  const form = await t.app.inject({
    method: 'POST',
    url: `/notify/users/${USER}/preferences`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'email=attacker%40example.test',
  });
  assert.equal(form.statusCode, 303);
  assert.equal(
    (await t.inject(`/api/users/${USER}/notification-preferences`)).json().email,
    'ana@example.test',
  );
  assert.deepEqual(await deadLetters(), [letter], 'nothing was re-driven');

  const wrong = await t.app.inject({
    method: 'POST',
    url: '/sign-in',
    payload: { key: 'guess', next: '/notify/inbox' },
  });
  assert.equal(wrong.statusCode, 401);
  assert.equal(wrong.headers['set-cookie'], undefined);
  const right = await t.app.inject({
    method: 'POST',
    url: '/sign-in',
    payload: { key: ADMIN_KEY, next: 'https://evil.example/' },
  });
  assert.equal(right.statusCode, 303);
  assert.equal(right.headers.location, '/', 'only paths of this site are followed');
  const setCookie = String(right.headers['set-cookie']);
  assert.match(setCookie, /HttpOnly; SameSite=Strict/);
  assert.ok(!setCookie.includes(ADMIN_KEY));
  assert.equal((await t.app.inject({ url: '/notify/inbox', headers: { cookie } })).statusCode, 200);
  const newest = await t.app.inject({
    url: `/notify/inbox/newest?user=${USER}&channel=email`,
    headers: { cookie },
  });
  assert.match(newest.json().id, /^[0-9a-f-]{36}$/);
  assert.deepEqual((await t.app.inject({ url: '/notify/inbox/newest?user=8', headers: { cookie } })).json(), {
    id: null,
  });
  assert.equal((await t.app.inject({ url: '/notify/inbox/newest' })).statusCode, 303);
  assert.equal(
    (await t.app.inject({ url: '/notify/inbox', headers: { cookie: 'staff_session=S1.forged.sig' } }))
      .statusCode,
    303,
  );
});

test("the preferences page's own API call carries the admin session: the JSON API takes it", async () => {
  const url = `/api/users/${USER}/notification-preferences`;
  const patch = (headers: Record<string, string>) =>
    t.app.inject({ method: 'PATCH', url, headers, payload: { locale: 'de' } });
  assert.equal((await patch({})).statusCode, 401);
  const saved = await patch({ cookie });
  assert.equal(saved.statusCode, 200, saved.body);
  assert.equal(saved.json().locale, 'de');
  await t.setPreferences(USER, { locale: null });
});

test('inbox lists messages and shows the HTML e-mail escaped inside a sandboxed srcdoc iframe', async () => {
  const list = await t.app.inject({ url: `/notify/inbox?user=${USER}&channel=email`, headers: { cookie } });
  assert.equal(list.statusCode, 200, list.body);
  assert.ok(list.body.includes('Your tickets for &lt;Dune&gt;'));
  const id = /data-message="([0-9a-f-]{36})"/.exec(list.body)?.[1];
  assert.ok(id);
  const view = await t.app.inject({ url: `/notify/inbox?user=${USER}&message=${id}`, headers: { cookie } });
  const iframe = /<iframe[^>]*>/.exec(view.body)?.[0] ?? '';
  assert.match(iframe, /sandbox=""/);
  assert.ok(iframe.includes('srcdoc="&lt;h1&gt;Dune&lt;/h1&gt;&lt;script&gt;'), iframe);
  assert.ok(iframe.includes('&quot;quoted&quot; &amp; more'), iframe);
  assert.ok(!view.body.includes('<script>parent'), 'the e-mail markup never reaches the page unescaped');
  assert.match(view.body, /<pre data-text>Booking BK-1 is confirmed\.<\/pre>/);
  const other = await t.app.inject({ url: '/notify/inbox?user=8', headers: { cookie } });
  assert.match(other.body, /No messages for user 8/);
  assert.equal(
    (await t.app.inject({ url: '/notify/inbox?channel=fax', headers: { cookie } })).statusCode,
    400,
  );
});

test('timeline shows each channel in time order with attempts, errors and receipts', async () => {
  const page = await t.app.inject({ url: `/notify/notifications/${notificationId}`, headers: { cookie } });
  assert.equal(page.statusCode, 200);
  const section = (name: string) => {
    const start = page.body.indexOf(`data-channel="${name}"`);
    const end = page.body.indexOf('data-channel=', start + 1);
    return page.body.slice(start, end < 0 ? undefined : end);
  };
  const email = section('email');
  const order = [
    'Accepted',
    'Attempt 1 failed',
    'The provider did not answer in time: provider timed out',
    'Attempt 2 handed over via fake-email',
    'Sent via fake-email',
    'Delivered',
  ];
  let at = 0;
  for (const label of order) {
    const next = email.indexOf(label, at);
    assert.ok(next > at, `${label} after position ${at}: ${email}`);
    at = next;
  }
  assert.match(email, /data-status="delivered">Delivered</);
  const sms = section('sms');
  assert.ok(sms.includes('Not a valid phone number: SMS provider answered 400: &lt;bad&gt; number'), sms);
  assert.match(sms, /data-status="failed">Failed</);
  assert.match(section('push'), /Reason: No address on file/);
  assert.doesNotMatch(section('push'), /no_address/);
  // Times in the user's zone (Europe/Berlin), named; never the raw ISO text.
  assert.match(
    page.body,
    /<time datetime="[^"]+">\d{1,2} \w{3} \d{4}, \d{2}:\d{2}:\d{2} \(Europe\/Berlin\)<\/time>/,
  );
  assert.deepEqual(visibleIsoTimes(page.body), []);
  assert.doesNotMatch(email, /invalid_number/, 'each channel shows only its own attempts');
  const missing = await t.app.inject({ url: '/notify/notifications/nope', headers: { cookie } });
  assert.equal(missing.statusCode, 404);
});

test('dead letters: sending a permanent failure again says it failed again (a refused number, then no address); a second time says it is gone', async () => {
  const [letter] = await deadLetters();
  const action = `/notify/dead-letters/${encodeURIComponent(letter.id)}/redrive`;
  const page = await t.app.inject({ url: '/notify/dead-letters', headers: { cookie } });
  assert.ok(page.body.includes(`action="${action}"`), page.body);
  assert.ok(page.body.includes('Not a valid phone number'), 'the last error in words');
  assert.deepEqual(visibleIsoTimes(page.body), []);

  // The carrier still refuses the number: the redrive is queued, the worker fails it again at once.
  const redrive = await t.app.inject({ method: 'POST', url: action, headers: { cookie } });
  assert.equal(redrive.statusCode, 303);
  assert.equal(
    redrive.headers.location,
    `/notify/dead-letters?${new URLSearchParams({ redriven: letter.id, notification: notificationId, channel: 'sms' })}`,
  );
  await eventually(
    async () => (await channel('sms')).status === 'failed' && (await deadLetters()).length === 1,
  );
  const failed = await t.app.inject({ url: redrive.headers.location as string, headers: { cookie } });
  assert.match(
    failed.body,
    /role="alert" data-redrive-outcome>Sent again — it failed again: not a valid phone number\./,
  );
  assert.doesNotMatch(failed.body, /message ok/, 'no success notice');
  assert.match(failed.body, /class="failed-again"[\s\S]*Failed again after the redrive/);
  assert.doesNotMatch(failed.body, /dead-letters\.js/, 'the outcome is known: nothing to watch');

  // The number removed meanwhile: the worker finds no address and sends nothing.
  // The same queue message died again, so it is listed under the same id.
  const [second] = await deadLetters();
  smsFails = false;
  await t.setPreferences(USER, { phone: null });
  const again = await t.app.inject({
    method: 'POST',
    url: `/notify/dead-letters/${encodeURIComponent(second.id)}/redrive`,
    headers: { cookie },
  });
  await eventually(async () => (await channel('sms')).status === 'skipped');
  const skipped = await t.app.inject({ url: again.headers.location as string, headers: { cookie } });
  assert.match(skipped.body, /Sent again — it failed again: no address on file\./);
  assert.match(skipped.body, /Nothing here/);
  await t.setPreferences(USER, { phone: '+15005550006' });

  const gone = await t.app.inject({ method: 'POST', url: action, headers: { cookie } });
  assert.equal(gone.headers.location, '/notify/dead-letters?error=dead_letter_not_found');
  const told = await t.app.inject({ url: gone.headers.location as string, headers: { cookie } });
  assert.match(
    told.body,
    /role="alert">That dead letter is no longer there: it was sent again already, or it expired\.</,
  );
  const crafted = await t.app.inject({ url: '/notify/dead-letters?error=Call+us+now', headers: { cookie } });
  assert.equal(crafted.statusCode, 400, 'a link cannot put its own text on the page');
});

test('the outcome of a redrive still open is "Queued again", watched by the page\'s script', () => {
  assert.deepEqual(redriveOutcome({ channel: 'sms', status: 'queued', reason: 'redriven' }), {
    tone: 'info',
    text: 'Queued again: a worker sends it shortly.',
    open: true,
  });
  assert.equal(redriveOutcome({ channel: 'sms', status: 'delivered' }).text, 'Sent again: delivered.');
});

test("a user's history page: their notifications newest first, each channel's status in words and its timeline", async () => {
  const url = `/notify/users/${USER}/history`;
  const bare = await t.app.inject({ url });
  assert.equal(bare.statusCode, 303);
  assert.equal(bare.headers.location, `/sign-in?next=${encodeURIComponent(url)}`);
  const second = await t.inject({
    method: 'POST',
    url: '/api/notifications',
    payload: { user_id: USER, type: 'order_update', channels: ['push'], data: { order_id: 'o-2' } },
  });
  const page = await t.app.inject({ url, headers: { cookie } });
  assert.equal(page.statusCode, 200, page.body);
  const ids = [...page.body.matchAll(/data-notification="([0-9a-f-]{36})"/g)].map((m) => m[1]);
  assert.deepEqual(ids.slice(0, 2), [second.json().id, notificationId], 'newest first');
  const first = page.body.slice(page.body.indexOf(`data-notification="${notificationId}"`));
  assert.match(first, /data-channel="email"[\s\S]*data-status="delivered">Delivered</);
  assert.match(first, /data-channel="push"[\s\S]*Reason: No address on file/);
  assert.match(first, /Accepted[\s\S]*Sent via fake-email[\s\S]*Delivered \(provider receipt\)/);
  assert.match(page.body, /Times are in the user's time zone, Europe\/Berlin/);
  assert.ok(page.body.includes(`href="/notify/notifications/${notificationId}"`), 'links the full timeline');
  assert.deepEqual(visibleIsoTimes(page.body), []);

  const other = await t.app.inject({ url: '/notify/users/nobody-here/history', headers: { cookie } });
  assert.equal(other.statusCode, 200);
  assert.match(other.body, /No notifications for user nobody-here/);
  const badCursor = await t.app.inject({ url: `${url}?cursor=nonsense`, headers: { cookie } });
  assert.equal(badCursor.statusCode, 400);
});

test('preferences form shows the values and saves without JavaScript', async () => {
  const page = await t.app.inject({ url: `/notify/users/${USER}/preferences`, headers: { cookie } });
  assert.equal(page.statusCode, 200);
  assert.match(page.body, /name="push_enabled" checked/);
  assert.match(page.body, /name="in_app_enabled" checked/);
  assert.match(page.body, /name="quiet_hours_start" value="22:00"/);
  assert.match(page.body, /src="\/static\/notify\/preferences.js"/);
  const saved = await t.app.inject({
    method: 'POST',
    url: `/notify/users/${USER}/preferences`,
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    payload:
      'sms_enabled=on&quiet_hours_start=&quiet_hours_end=&email=bo%40example.test&phone=%2B4915112345678&timezone=Europe%2FParis',
  });
  assert.equal(saved.statusCode, 303);
  assert.equal(saved.headers.location, `/notify/users/${USER}/preferences?saved=1`);
  const stored = (await t.inject(`/api/users/${USER}/notification-preferences`)).json();
  assert.deepEqual(
    {
      push_enabled: stored.push_enabled,
      sms_enabled: stored.sms_enabled,
      email_enabled: stored.email_enabled,
      in_app_enabled: stored.in_app_enabled,
      quiet_hours_start: stored.quiet_hours_start,
      quiet_hours_end: stored.quiet_hours_end,
      email: stored.email,
      phone: stored.phone,
      timezone: stored.timezone,
      locale: stored.locale,
    },
    {
      push_enabled: false,
      sms_enabled: true,
      email_enabled: false,
      in_app_enabled: false,
      quiet_hours_start: null,
      quiet_hours_end: null,
      email: 'bo@example.test',
      phone: '+4915112345678',
      timezone: 'Europe/Paris',
      locale: null,
    },
  );
  const script = await t.app.inject({ url: '/static/notify/preferences.js' });
  assert.equal(script.statusCode, 200);
  assert.match(script.body, /notification-preferences/);
});

test('preferences without JavaScript: a refusal shows each problem in words at its field, the first one focused, nothing stored', async () => {
  const before = (await t.inject(`/api/users/${USER}/notification-preferences`)).json();
  const refused = await t.app.inject({
    method: 'POST',
    url: `/notify/users/${USER}/preferences`,
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    payload: 'sms_enabled=on&quiet_hours_start=22%3A00&quiet_hours_end=&phone=12345&timezone=Mars%2FOlympus',
  });
  assert.equal(refused.statusCode, 422, refused.body);
  const field = (name: string) =>
    new RegExp(`<(input|select)[^>]*id="${name}"[^>]*>`).exec(refused.body)?.[0] ?? '';
  assert.match(
    field('quiet_hours_end'),
    /aria-describedby="quiet_hours_end-error" aria-invalid="true" autofocus/,
  );
  assert.match(field('phone'), /aria-invalid="true"/);
  assert.doesNotMatch(field('phone'), /autofocus/, 'only the first invalid field takes focus');
  assert.match(field('timezone'), /aria-invalid="true"/);
  assert.doesNotMatch(field('email'), /aria-invalid/);
  const message = (name: string) =>
    new RegExp(`id="${name}-error" data-error-for="${name}">([^<]*)<`).exec(refused.body)?.[1];
  assert.equal(message('quiet_hours_end'), 'Give both ends of the quiet hours, or leave both empty.');
  assert.equal(
    message('phone'),
    'Enter the number in international format: a + and the country code, e.g. +4915112345678.',
  );
  assert.equal(message('timezone'), 'Choose a time zone from the list.');
  assert.doesNotMatch(refused.body, /is not an IANA time zone|go together/, 'no raw API text');
  // Shown as sent, so nothing typed is lost.
  assert.match(field('phone'), /value="12345"/);
  assert.deepEqual((await t.inject(`/api/users/${USER}/notification-preferences`)).json(), before);
});

test('the time zone is a picker of every IANA zone, the stored one chosen', async () => {
  await t.setPreferences(USER, { timezone: 'Asia/Kolkata' });
  const page = await t.app.inject({ url: `/notify/users/${USER}/preferences`, headers: { cookie } });
  const select = /<select id="timezone" name="timezone"[^>]*>([\s\S]*?)<\/select>/.exec(page.body);
  assert.ok(select, 'a select, not a text field');
  assert.match(select[0], /data-suggest-zone="no"/);
  const options = [...select[1].matchAll(/<option( selected)?>([^<]+)<\/option>/g)];
  // Intl lists ICU's names (Asia/Calcutta); the stored alias the API took stays choosable, first.
  assert.deepEqual(
    options.map((o) => o[2]),
    ['Asia/Kolkata', ...Intl.supportedValuesOf('timeZone')],
  );
  assert.deepEqual(
    options.filter((o) => o[1]).map((o) => o[2]),
    ['Asia/Kolkata'],
  );
  assert.match(page.body, /<script type="application\/json" data-field-words>\{"labels"/);
  const fresh = await t.app.inject({ url: '/notify/users/never-seen/preferences', headers: { cookie } });
  assert.match(
    fresh.body,
    /data-suggest-zone="yes"/,
    "a user who never chose gets the browser's zone suggested",
  );
});
