import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createEdgeHarness, type EdgeHarness, PRODUCTION_KEYS } from '../edge-testing.ts';
import { createInboxProvider } from '../providers/inbox.ts';
import { notifyPages } from './index.ts';
import { fakePagesDeps } from './testing.ts';

let h: EdgeHarness;
let fake: ReturnType<typeof fakePagesDeps>;
let cookie = '';

before(async () => {
  // As production runs: no page signs anyone in by itself.
  h = await createEdgeHarness({ production: true });
  fake = fakePagesDeps(h.db);
  notifyPages(h.app, fake.deps);
  await h.app.ready();
  const login = await h.app.inject({
    method: 'POST',
    url: '/sign-in',
    payload: { key: PRODUCTION_KEYS.ADMIN_API_KEY, next: '/notify/inbox' },
  });
  cookie = String(login.headers['set-cookie']).split(';')[0];
  const inbox = createInboxProvider('email', { db: h.db, clock: h.clock });
  await inbox.send({
    deliveryId: `${fake.notification.id}:email`,
    notificationId: fake.notification.id,
    channel: 'email',
    type: 'booking_confirmed',
    recipient: { userId: '7', email: 'ana@example.test' },
    message: {
      subject: 'Your tickets for <Dune>',
      text: 'Booking BK-1 is confirmed.',
      html: '<h1>Dune</h1><script>parent.document.title = "pwned"</script><p>"quoted" & more</p>',
    },
  });
});
after(() => h.close());

test('landing links the inbox, dead letters and lookups', async () => {
  const page = await h.app.inject({ url: '/notify' });
  assert.equal(page.statusCode, 200);
  assert.match(page.headers['content-type'] as string, /text\/html/);
  for (const href of ['/notify/inbox', '/notify/dead-letters', 'action="/notify/notifications"']) {
    assert.ok(page.body.includes(href), href);
  }
  const lookup = await h.app.inject({ url: `/notify/notifications?id=${fake.notification.id}` });
  assert.equal(lookup.statusCode, 303);
  assert.equal(lookup.headers.location, `/notify/notifications/${fake.notification.id}`);
  const user = await h.app.inject({ url: '/notify/users?user=7' });
  assert.equal(user.statusCode, 303);
  assert.equal(user.headers.location, '/notify/users/7/preferences');
});

test('the console pages need an admin page session: sign in once; the cookie holds a signed session, not the key', async () => {
  for (const url of [
    '/notify/inbox?user=7',
    '/notify/dead-letters',
    '/notify/users/7/preferences',
    `/notify/notifications/${fake.notification.id}`,
  ]) {
    const bare = await h.app.inject({ url });
    assert.equal(bare.statusCode, 303, url);
    assert.equal(bare.headers.location, `/sign-in?next=${encodeURIComponent(url)}`);
  }
  const post = await h.app.inject({ method: 'POST', url: '/notify/dead-letters/x/redrive' });
  assert.equal(post.statusCode, 303);
  assert.deepEqual(fake.redriven, [], 'nothing was re-driven');
  const wrong = await h.app.inject({
    method: 'POST',
    url: '/sign-in',
    payload: { key: 'guess', next: '/notify/inbox' },
  });
  assert.equal(wrong.statusCode, 401);
  assert.equal(wrong.headers['set-cookie'], undefined);
  const right = await h.app.inject({
    method: 'POST',
    url: '/sign-in',
    payload: { key: PRODUCTION_KEYS.ADMIN_API_KEY, next: 'https://evil.example/' },
  });
  assert.equal(right.statusCode, 303);
  assert.equal(right.headers.location, '/', 'only paths of this site are followed');
  const setCookie = String(right.headers['set-cookie']);
  assert.match(setCookie, /HttpOnly; SameSite=Strict/);
  assert.ok(!setCookie.includes(PRODUCTION_KEYS.ADMIN_API_KEY));
  assert.equal((await h.app.inject({ url: '/notify/inbox', headers: { cookie } })).statusCode, 200);
  const newest = await h.app.inject({
    url: '/notify/inbox/newest?user=7&channel=email',
    headers: { cookie },
  });
  assert.match(newest.json().id, /^[0-9a-f-]{36}$/);
  assert.deepEqual((await h.app.inject({ url: '/notify/inbox/newest?user=8', headers: { cookie } })).json(), {
    id: null,
  });
  assert.equal((await h.app.inject({ url: '/notify/inbox/newest' })).statusCode, 303);
  assert.equal(
    (await h.app.inject({ url: '/notify/inbox', headers: { cookie: 'staff_session=S1.forged.sig' } }))
      .statusCode,
    303,
  );
});

test('inbox lists messages and shows the HTML e-mail escaped inside a sandboxed srcdoc iframe', async () => {
  const list = await h.app.inject({ url: '/notify/inbox?user=7&channel=email', headers: { cookie } });
  assert.equal(list.statusCode, 200, list.body);
  assert.ok(list.body.includes('Your tickets for &lt;Dune&gt;'));
  const id = /data-message="([0-9a-f-]{36})"/.exec(list.body)?.[1];
  assert.ok(id);
  const view = await h.app.inject({ url: `/notify/inbox?user=7&message=${id}`, headers: { cookie } });
  const iframe = /<iframe[^>]*>/.exec(view.body)?.[0] ?? '';
  assert.match(iframe, /sandbox=""/);
  assert.ok(iframe.includes('srcdoc="&lt;h1&gt;Dune&lt;/h1&gt;&lt;script&gt;'), iframe);
  assert.ok(iframe.includes('&quot;quoted&quot; &amp; more'), iframe);
  assert.ok(!view.body.includes('<script>parent'), 'the e-mail markup never reaches the page unescaped');
  assert.match(view.body, /<pre data-text>Booking BK-1 is confirmed\.<\/pre>/);
  const other = await h.app.inject({ url: '/notify/inbox?user=8', headers: { cookie } });
  assert.match(other.body, /No messages for user 8/);
  assert.equal(
    (await h.app.inject({ url: '/notify/inbox?channel=fax', headers: { cookie } })).statusCode,
    400,
  );
});

test('timeline shows each channel in time order with attempts, errors and receipts', async () => {
  const page = await h.app.inject({
    url: `/notify/notifications/${fake.notification.id}`,
    headers: { cookie },
  });
  assert.equal(page.statusCode, 200);
  const email = page.body.slice(
    page.body.indexOf('data-channel="email"'),
    page.body.indexOf('data-channel="sms"'),
  );
  const order = [
    'Accepted',
    'Attempt 1 failed via smtp',
    'smtp_451: Try again later',
    'Attempt 2 handed over via inbox',
    'Sent via inbox',
    'Delivered',
  ];
  let at = 0;
  for (const label of order) {
    const next = email.indexOf(label, at);
    assert.ok(next > at, `${label} after position ${at}`);
    at = next;
  }
  assert.ok(page.body.includes('invalid_number: &lt;bad&gt; number'));
  assert.match(page.body, /data-status>dead lettered</);
  assert.match(page.body, /Reason: no_address/);
  assert.doesNotMatch(email, /invalid_number/, 'each channel shows only its own attempts');
  const missing = await h.app.inject({ url: '/notify/notifications/nope', headers: { cookie } });
  assert.equal(missing.statusCode, 404);
});

test('dead letters: the redrive button re-drives and comes back with a notice; a second time shows the error', async () => {
  const page = await h.app.inject({ url: '/notify/dead-letters', headers: { cookie } });
  assert.match(page.body, /action="\/notify\/dead-letters\/notifications\.sms%3Adl-1\/redrive"/);
  const redrive = await h.app.inject({
    method: 'POST',
    url: '/notify/dead-letters/notifications.sms:dl-1/redrive',
    headers: { cookie },
  });
  assert.equal(redrive.statusCode, 303);
  assert.equal(redrive.headers.location, '/notify/dead-letters?redriven=notifications.sms%3Adl-1');
  assert.deepEqual(fake.redriven, ['notifications.sms:dl-1']);
  const after = await h.app.inject({ url: redrive.headers.location as string, headers: { cookie } });
  assert.match(after.body, /Re-driven: notifications.sms:dl-1/);
  assert.match(after.body, /Nothing here/);
  const again = await h.app.inject({
    method: 'POST',
    url: '/notify/dead-letters/notifications.sms:dl-1/redrive',
    headers: { cookie },
  });
  assert.match(again.headers.location as string, /error=No\+dead\+letter\+notifications\.sms%3Adl-1/);
});

test('preferences form shows the values and saves through updatePreferences without JavaScript', async () => {
  const page = await h.app.inject({ url: '/notify/users/7/preferences', headers: { cookie } });
  assert.equal(page.statusCode, 200);
  assert.match(page.body, /name="push_enabled" checked/);
  assert.match(page.body, /name="sms_enabled">/);
  assert.match(page.body, /name="quiet_hours_start" value="22:00"/);
  assert.match(page.body, /src="\/static\/notify\/preferences.js"/);
  const saved = await h.app.inject({
    method: 'POST',
    url: '/notify/users/7/preferences',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    payload:
      'sms_enabled=on&quiet_hours_start=&quiet_hours_end=&email=bo%40example.test&phone=%2B4915112345678&timezone=Europe%2FParis',
  });
  assert.equal(saved.statusCode, 303);
  assert.deepEqual(fake.updates.at(-1), [
    '7',
    {
      push_enabled: false,
      sms_enabled: true,
      email_enabled: false,
      quiet_hours_start: null,
      quiet_hours_end: null,
      email: 'bo@example.test',
      phone: '+4915112345678',
      timezone: 'Europe/Paris',
      locale: null,
    },
  ]);
  assert.equal(
    (await h.app.inject({ url: '/notify/users/nobody/preferences', headers: { cookie } })).statusCode,
    404,
  );
  const script = await h.app.inject({ url: '/static/notify/preferences.js' });
  assert.equal(script.statusCode, 200);
  assert.match(script.body, /notification-preferences/);
});
