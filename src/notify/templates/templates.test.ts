import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { createTestApp, type TestApp } from '../../../test/support/platform.ts';
import type { Db } from '../../platform/db/index.ts';
import { BOOKING_NOTIFICATION_TYPES, CHANNELS } from '../api.ts';
import { textEngine } from './engine.ts';
import { createTemplateRenderer, type TemplateStore } from './service.ts';

/**
 * The renderer on the app's database (the seeded defaults), and /api/templates as the notify
 * module serves it: its renderer is the one the routes invalidate, seen through the preview.
 */
let t: TestApp;
let db: Db;
let renderer: TemplateStore;
/** A renderer with nothing cached: what another process, or the next lookup after 5 s, reads. */
const fresh = () => createTemplateRenderer(db);
const booking = {
  booking_id: 'BK-42',
  movie_title: 'Alien <Romulus>',
  theater_name: 'Odeon',
  show_time: '2026-03-01T19:30:00Z',
  seats: ['C7', 'C8'],
  total_paid: 24,
  qr_code: 'v1.eyJiIjoiQkstNDIifQ.sig',
};

before(async () => {
  t = await createTestApp({ services: ['notify'] });
  db = t.adapters.database.db;
  renderer = createTemplateRenderer(db);
});
after(() => t.close());

describe('default templates', () => {
  test('every booking type has a template on every channel and needs exactly the variables booking sends', async () => {
    for (const [type, variables] of Object.entries(BOOKING_NOTIFICATION_TYPES)) {
      const data = Object.fromEntries(
        variables.map((name) => [name, booking[name as keyof typeof booking] ?? 'x']),
      );
      assert.deepEqual(await renderer.check(type, CHANNELS, data), [], type);
      const problems = await renderer.check(type, CHANNELS, {});
      // Every variable booking declares is used by at least one channel.
      const used = new Set(problems.flatMap((problem) => problem.missing ?? []));
      assert.deepEqual([...used].sort(), [...variables].sort(), type);
    }
    const types = await renderer.types();
    for (const type of [...Object.keys(BOOKING_NOTIFICATION_TYPES), 'security_alert', 'marketing']) {
      assert.ok(types.includes(type), type);
    }
  });

  test('booking_confirmed e-mail: text alternative, escaped HTML with a QR image, date in the user time zone', async () => {
    const message = await renderer.render('booking_confirmed', 'email', booking, {
      timeZone: 'Europe/Berlin',
    });
    assert.equal(message.subject, 'Your tickets for Alien <Romulus>');
    assert.match(message.text, /Booking BK-42 is confirmed/);
    assert.match(message.text, /Sun 1 Mar 2026, 20:30/); // 19:30 UTC is 20:30 in Berlin
    assert.match(message.text, /Seats: C7, C8\. Paid: ₹24\.00/); // NOTIFY_CURRENCY when booking names none
    assert.doesNotMatch(message.text, /data:image/);
    assert.match(message.html!, /<h1>Alien &lt;Romulus&gt;<\/h1>/);
    const qr = /src="(data:image\/png;base64,[^"]+)"/.exec(message.html!);
    assert.ok(qr, message.html);
    assert.ok(Buffer.from(qr[1].split(',')[1], 'base64').subarray(1, 4).toString() === 'PNG');
  });

  test('SMS stays within one segment with typical values and has no subject', async () => {
    const message = await renderer.render('booking_confirmed', 'sms', booking, {
      timeZone: 'America/New_York',
    });
    assert.equal(message.subject, undefined);
    assert.match(message.text, /Sun 1 Mar 2026, 14:30/);
    const typical = {
      ...booking,
      movie_title: 'Mission: Impossible - Dead Reckoning',
      theater_name: 'Odeon Leicester Square',
      seats: ['C7', 'C8', 'C9', 'C10'],
      hours_before: 3,
      refund_amount: 48.5,
      refund_status: 'completed',
      reason: 'the show was cancelled',
      event: 'a new sign-in from Chrome on Linux',
      occurred_at: '2026-01-05T12:00:00Z',
    };
    for (const type of [...Object.keys(BOOKING_NOTIFICATION_TYPES), 'security_alert']) {
      const { text } = await renderer.render(type, 'sms', typical, { timeZone: 'Europe/London' });
      assert.ok(text.length <= 160, `${type}: ${text.length} characters: ${text}`);
    }
  });

  test('a missing variable is reported by check() and fails render()', async () => {
    const { qr_code: _, ...withoutQr } = booking;
    assert.deepEqual(await renderer.check('booking_confirmed', ['email', 'sms'], withoutQr), [
      { channel: 'email', reason: 'missing_variables', missing: ['qr_code'] },
    ]);
    assert.deepEqual(await renderer.check('nope', ['push'], {}), [
      { channel: 'push', reason: 'unknown_type' },
    ]);
    await assert.rejects(renderer.render('booking_confirmed', 'email', withoutQr), {
      code: 'template_render_failed',
    });
    await assert.rejects(renderer.render('nope', 'push', {}), { code: 'template_not_found' });
  });
});

describe('/api/templates', () => {
  test('create, read, render with locale fallback, replace (cache invalidated), delete', async () => {
    const preview = async (id: string) =>
      (
        await t.app.inject({
          method: 'POST',
          url: `/api/templates/${id}/preview`,
          headers: t.asAdmin,
          payload: { data: { name: 'Ana' } },
        })
      ).json().text;
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/templates',
      headers: t.asAdmin,
      payload: { id: 'welcome.push.de', subject: 'Hallo {{ name }}', body: 'Willkommen, {{ name }}!' },
    });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.headers.location, '/api/templates/welcome.push.de');
    assert.deepEqual(created.json().variables, ['name']);
    assert.equal(created.json().channel, 'push');
    assert.equal(created.json().locale, 'de');

    const again = await t.app.inject({
      method: 'POST',
      url: '/api/templates',
      headers: t.asAdmin,
      payload: { id: 'welcome.push.de', body: 'x' },
    });
    assert.equal(again.statusCode, 409);
    assert.equal(again.json().code, 'template_exists');

    // de-AT falls back to de; no locale and an unknown one find no base template yet.
    assert.equal(
      (await fresh().render('welcome', 'push', { name: 'Ana' }, { locale: 'de-AT' })).text,
      'Willkommen, Ana!',
    );
    assert.deepEqual(await fresh().check('welcome', ['push'], { name: 'A' }, 'fr'), [
      { channel: 'push', reason: 'unknown_type' },
    ]);
    const base = await t.app.inject({
      method: 'PUT',
      url: '/api/templates/welcome.push',
      headers: t.asAdmin,
      payload: { subject: 'Hi', body: 'Welcome, {{ name }}!' },
    });
    assert.equal(base.statusCode, 201, base.body);
    assert.equal(
      (await fresh().render('welcome', 'push', { name: 'Ana' }, { locale: 'fr' })).text,
      'Welcome, Ana!',
    );

    // The module's renderer now holds the German row; a replace through the API drops it at once.
    assert.equal(await preview('welcome.push.de'), 'Willkommen, Ana!');
    t.clock.advance(1000);
    const replaced = await t.app.inject({
      method: 'PUT',
      url: '/api/templates/welcome.push.de',
      headers: t.asAdmin,
      payload: { subject: 'Hallo', body: 'Servus, {{ name }}!' },
    });
    assert.equal(replaced.statusCode, 200, replaced.body);
    assert.equal(await preview('welcome.push.de'), 'Servus, Ana!', 'not the cached row');
    assert.equal(
      (await fresh().render('welcome', 'push', { name: 'Ana' }, { locale: 'de-AT' })).text,
      'Servus, Ana!',
    );

    const read = await t.app.inject({ url: '/api/templates/welcome.push.de', headers: t.asAdmin });
    assert.equal(read.json().body, 'Servus, {{ name }}!');
    const list = await t.app.inject({ url: '/api/templates?type=welcome', headers: t.asAdmin });
    assert.deepEqual(
      list.json().templates.map((template: { id: string }) => template.id),
      ['welcome.push', 'welcome.push.de'],
    );

    assert.equal(
      (await t.app.inject({ method: 'DELETE', url: '/api/templates/welcome.push.de', headers: t.asAdmin }))
        .statusCode,
      204,
    );
    assert.equal(
      (await fresh().render('welcome', 'push', { name: 'Ana' }, { locale: 'de' })).text,
      'Welcome, Ana!',
    );
    const gone = await t.app.inject({ url: '/api/templates/welcome.push.de', headers: t.asAdmin });
    assert.equal(gone.statusCode, 404);
    assert.equal(gone.json().code, 'template_not_found');
    assert.match(gone.headers['content-type'] as string, /problem\+json/);
  });

  test('a template that does not parse, an unknown filter or a bad id is refused', async () => {
    const broken = await t.app.inject({
      method: 'PUT',
      url: '/api/templates/broken.sms',
      headers: t.asAdmin,
      payload: { body: 'Hello {% if name %}' },
    });
    assert.equal(broken.statusCode, 422);
    assert.equal(broken.json().code, 'template_invalid');
    assert.match(broken.json().detail, /tag .*if.* not closed/i);
    const filter = await t.app.inject({
      method: 'PUT',
      url: '/api/templates/broken.sms',
      headers: t.asAdmin,
      payload: { body: '{{ name | shout }}' },
    });
    assert.equal(filter.statusCode, 422);
    assert.match(filter.json().detail, /undefined filter: shout/);
    const badId = await t.app.inject({
      method: 'PUT',
      url: '/api/templates/Broken.fax',
      headers: t.asAdmin,
      payload: { body: 'x' },
    });
    assert.equal(badId.statusCode, 400);
    const mismatch = await t.app.inject({
      method: 'PUT',
      url: '/api/templates/ok.sms',
      headers: t.asAdmin,
      payload: { channel: 'email', body: 'x' },
    });
    assert.equal(mismatch.statusCode, 422);
    const noKey = await t.app.inject({ method: 'DELETE', url: '/api/templates/booking_confirmed.sms' });
    assert.equal(noKey.statusCode, 401);
    // Services may read templates, never change them (access.test.ts has the whole matrix).
    const service = t.asService;
    assert.equal((await t.app.inject({ url: '/api/templates', headers: service })).statusCode, 200);
    assert.equal((await t.app.inject({ url: '/api/templates' })).statusCode, 401);
    const serviceWrite = await t.app.inject({
      method: 'PUT',
      url: '/api/templates/ok.sms',
      headers: service,
      payload: { body: 'x' },
    });
    assert.equal(serviceWrite.statusCode, 401);
  });

  test('preview renders a stored template with sample data, or lists what is missing', async () => {
    const preview = await t.app.inject({
      method: 'POST',
      url: '/api/templates/refund_update.sms/preview',
      headers: t.asAdmin,
      payload: { data: { booking_id: 'BK-7', refund_amount: 12, refund_status: 'completed' } },
    });
    assert.equal(preview.statusCode, 200, preview.body);
    assert.deepEqual(preview.json(), { text: 'Refund INR 12.00 for BK-7: completed', missing: [] });
    const missing = await t.app.inject({
      method: 'POST',
      url: '/api/templates/refund_update.sms/preview',
      headers: t.asAdmin,
      payload: { data: { booking_id: 'BK-7' } },
    });
    assert.equal(missing.statusCode, 422);
    assert.deepEqual(missing.json().missing, ['refund_amount', 'refund_status']);
    // An unknown zone in a stale preference falls back to UTC rather than failing the send.
    const alert = await renderer.render(
      'security_alert',
      'sms',
      { event: 'a new sign-in', occurred_at: '2026-01-05T12:00:00Z' },
      { timeZone: 'Mars/Olympus' },
    );
    assert.match(alert.text, /at Mon 5 Jan 2026, 12:00 \(UTC\)/);
  });

  test('formatted dates are reused per value, format and zone, never across them', async () => {
    const render = (source: string, timeZone: string, show_time: unknown = booking.show_time) =>
      textEngine.parseAndRender(source, { show_time }, { globals: { timeZone } });
    const format = '{{ show_time | date: "%a %-d %b %Y, %H:%M" }}';
    for (let round = 0; round < 2; round++) {
      assert.equal(await render(format, 'Europe/Berlin'), 'Sun 1 Mar 2026, 20:30');
      assert.equal(await render(format, 'America/New_York'), 'Sun 1 Mar 2026, 14:30');
      assert.equal(await render(format, 'UTC'), 'Sun 1 Mar 2026, 19:30');
      assert.equal(await render('{{ show_time | date: "%H:%M" }}', 'Europe/Berlin'), '20:30');
      assert.equal(await render('{{ show_time | date: "%H:%M", "Asia/Tokyo" }}', 'Europe/Berlin'), '04:30');
      assert.equal(await render('{{ show_time | date: "%H:%M" }}', 'UTC', 1772393400), '19:30');
      assert.equal(await render('{{ show_time | date: "%H:%M" }}', 'UTC', '1772393400'), '19:30');
    }
    // `now` moves: never served from the cache.
    const year = String(new Date().getUTCFullYear());
    assert.equal(await render('{{ "now" | date: "%Y" }}', 'UTC'), year);
  });

  test('lookups: one query per template at a time; an expired one answers at once while one query reads it again', async () => {
    let queries = 0;
    const counting = db.withPlugin({
      transformQuery: (args) => {
        if (args.node.kind === 'SelectQueryNode') queries++;
        return args.node;
      },
      transformResult: async (args) => args.result,
    });
    // Long enough that a loaded machine does not expire it between two steps.
    const cold = createTemplateRenderer(counting, { rowTtlMs: 1000 });
    const renders = () =>
      Promise.all(
        Array.from({ length: 20 }, () =>
          cold.render('booking_reminder', 'email', { ...booking, hours_before: 3 }),
        ),
      );
    await renders();
    assert.equal(queries, 1, 'twenty renders on a cold cache read the template once');
    await renders();
    assert.equal(queries, 1, 'and then not again while it is fresh');
    await sleep(1100);
    await renders();
    assert.equal(queries, 2, 'expired: the renders did not each read it');
    await renders();
    assert.equal(queries, 2, 'read again once, fresh again');
  });

  test('an e-mail without html_body gets the text escaped as HTML paragraphs', async () => {
    await t.app.inject({
      method: 'PUT',
      url: '/api/templates/plain.email',
      headers: t.asAdmin,
      payload: { subject: 'S', body: 'Hi {{ name }},\n\nline one\nline two' },
    });
    const message = await renderer.render('plain', 'email', { name: '<b>Bo</b>' });
    assert.equal(message.text, 'Hi <b>Bo</b>,\n\nline one\nline two');
    assert.equal(message.html, '<p>Hi &lt;b&gt;Bo&lt;/b&gt;,</p>\n<p>line one<br>\nline two</p>');
  });
});

describe('partials: other stored templates, never files', () => {
  const put = (id: string, payload: Record<string, unknown>) =>
    t.app.inject({ method: 'PUT', url: `/api/templates/${id}`, headers: t.asAdmin, payload });

  test('include, render and layout of a file, a path or a computed name are 422 and store nothing', async () => {
    const refused: [string, Record<string, unknown>, RegExp][] = [
      ['leak_env.sms', { body: "{% include '.env' %}" }, /"\.env" is not a stored template/],
      ['leak_pkg.sms', { body: "x {% render '../package.json' %}" }, /"\.\.\/package\.json" is not/],
      ['leak_abs.push', { subject: "{% include '/etc/passwd' %}", body: 'x' }, /"\/etc\/passwd" is not/],
      ['leak_layout.sms', { body: "{% layout 'package.json' %}x" }, /"package\.json" is not/],
      ['leak_html.email', { subject: 's', body: 'b', html_body: "{% include '.env' %}" }, /"\.env"/],
      ['leak_nested.sms', { body: "{% if a %}{% liquid\ninclude '.env'\n%}{% endif %}" }, /"\.env"/],
      ['leak_var.sms', { body: '{% include file %}' }, /in quotes/],
      ['leak_dyn.sms', { body: "{% render 'x{{ name }}.sms' %}" }, /in quotes/],
      ['leak_none.sms', { body: "{% include 'nothing.sms' %}" }, /"nothing\.sms" is not a stored template/],
      ['leak_self.sms', { body: "{% include 'leak_self.sms' %}" }, /is not a stored template|itself/],
    ];
    for (const [id, payload, detail] of refused) {
      for (const response of [
        await put(id, payload),
        await t.app.inject({
          method: 'POST',
          url: '/api/templates',
          headers: t.asAdmin,
          payload: { id, ...payload },
        }),
      ]) {
        assert.equal(response.statusCode, 422, `${id}: ${response.body}`);
        assert.equal(response.json().code, 'template_partial_refused', id);
        assert.match(response.json().detail, detail, id);
      }
      assert.equal(
        (await t.app.inject({ url: `/api/templates/${id}`, headers: t.asAdmin })).statusCode,
        404,
        id,
      );
    }
    // Replacing a stored template with one that includes itself is refused too.
    assert.equal((await put('loop.sms', { body: 'once' })).statusCode, 201);
    const loop = await put('loop.sms', { body: "{% include 'loop.sms' %}" });
    assert.equal(loop.statusCode, 422);
    assert.match(loop.json().detail, /cannot include itself/);
    assert.equal(
      (await t.app.inject({ url: '/api/templates/loop.sms', headers: t.asAdmin })).json().body,
      'once',
    );
  });

  test('another stored template can be included, rendered or used as a layout', async () => {
    assert.equal(
      (
        await put('footer.email', {
          subject: '-',
          body: 'Thanks, {{ name }}.',
          html_body: '<p>Thanks, {{ name }}.</p>',
        })
      ).statusCode,
      201,
    );
    const saved = await put('partial_demo.email', {
      subject: "Hello {% include 'footer.email' %}",
      body: "Hi\n{% include 'footer.email' %}",
      html_body: "<div>{% render 'footer.email', name: name %}</div>",
    });
    assert.equal(saved.statusCode, 201, saved.body);
    const message = await renderer.render('partial_demo', 'email', { name: '<Bo>' });
    assert.equal(message.subject, 'Hello Thanks, <Bo>.');
    assert.equal(message.text, 'Hi\nThanks, <Bo>.');
    assert.equal(message.html, '<div><p>Thanks, &lt;Bo&gt;.</p></div>');
    // The accept-time check knows the variables the partials use.
    assert.deepEqual(await renderer.check('partial_demo', ['email'], {}), [
      { channel: 'email', reason: 'missing_variables', missing: ['name'] },
    ]);
    assert.equal((await put('framed.sms', { body: "{% layout 'frame.sms' %}ignored" })).statusCode, 422);
    assert.equal((await put('frame.sms', { body: '[{% block %}{% endblock %}]' })).statusCode, 201);
    assert.equal(
      (await put('framed.sms', { body: "{% layout 'frame.sms' %}{% block %}hi{% endblock %}" })).statusCode,
      201,
    );
    assert.equal((await renderer.render('framed', 'sms', {})).text, '[hi]');
  });

  test('a template stored without the check (straight into the table) renders no file', async () => {
    const secret = `SECRET_${Math.random().toString(36).slice(2)}`;
    const dir = mkdtempSync(join(tmpdir(), 'liquid-'));
    mkdirSync(join(dir, 'app'));
    writeFileSync(join(dir, 'app', '.env'), `APP_SECRET=${secret}\n`);
    writeFileSync(join(dir, 'app', 'package.json'), `{"secret": "${secret}"}`);
    writeFileSync(join(dir, 'package.json'), `{"secret": "${secret}"}`);
    const rows = {
      'raw_env.sms': "a {% include '.env' %} b",
      'raw_pkg.sms': "a {% render '../package.json' %} b",
      'raw_local.sms': "a {% include 'package.json' %} b",
      'raw_layout.sms': "{% layout '.env' %}x",
      'raw_abs.sms': `a {% include '${join(dir, 'app', '.env')}' %} b`,
      'raw_var.sms': 'a {% include file %} b',
    };
    for (const [id, body] of Object.entries(rows)) {
      await sql`insert into notify_templates (id, type, channel, locale, subject, body, html_body, updated_at)
        values (${id}, ${id.split('.')[0]}, 'sms', null, '', ${body}, null, now())`.execute(db);
    }
    // The server's working directory holds the files the templates name.
    const cwd = process.cwd();
    process.chdir(join(dir, 'app'));
    try {
      for (const id of Object.keys(rows)) {
        const type = id.split('.')[0];
        await assert.rejects(
          renderer.render(type, 'sms', { file: '.env' }),
          (error: Error & { code: string }) => {
            assert.equal(error.code, 'template_render_failed', id);
            assert.ok(!error.message.includes(secret), error.message);
            return true;
          },
        );
        const preview = await t.app.inject({
          method: 'POST',
          url: `/api/templates/${id}/preview`,
          headers: t.asAdmin,
          payload: { data: { file: '.env' } },
        });
        assert.equal(preview.statusCode, 422, `${id}: ${preview.body}`);
        assert.ok(!preview.body.includes(secret), preview.body);
      }
    } finally {
      process.chdir(cwd);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
