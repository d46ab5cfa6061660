import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { BOOKING_MESSAGE_DATA } from '../../../test/support/notify.ts';
import { createTestApp, type TestApp } from '../../../test/support/platform.ts';
import type { Channel } from '../api.ts';
import { firstDefaults } from '../migrations/first-defaults.ts';
import { templateMigrations } from '../migrations/templates.ts';
import { defaultTemplates } from './defaults.ts';
import { createTemplateRenderer } from './service.ts';

/**
 * Every default template of every channel, rendered as booking sends it: a 19:30 show in Delhi
 * (14:00 UTC) for a reader whose own zone is Berlin (15:00 there), paid in rupees. People read the
 * venue's 19:30 with the zone named, and amounts with their currency.
 */
let t: TestApp;
before(async () => {
  t = await createTestApp({ services: ['notify'] });
});
after(() => t.close());

const SHOW_TIME = 'Fri 27 Nov 2026, 19:30 (Asia/Kolkata)';
/** The GSM 7-bit default alphabet: anything else makes an SMS UCS-2, 70 characters a segment. */
const GSM7 = /^[@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&'()*+,\-./0-9:;<=>?¡A-ZÄÖÑÜ§¿a-zäöñüà]*$/;

test('every default template of every channel shows the venue-zone time with its zone and money with its currency', async () => {
  const renderer = createTemplateRenderer(t.adapters.database.db);
  const seeds = defaultTemplates();
  assert.ok(seeds.length >= 18);
  for (const seed of seeds) {
    const [type, channel] = seed.id.split('.') as [string, Channel];
    const message = await renderer.render(type, channel, BOOKING_MESSAGE_DATA, { timeZone: 'Europe/Berlin' });
    const parts = [message.subject ?? '', message.text, message.html ?? ''];
    const source = `${seed.subject}\n${seed.body}\n${seed.html ?? ''}`;
    for (const part of parts) {
      // Never the UTC 14:00 nor the reader's 15:00 for the show, never a bare amount.
      if (source.includes('show_time')) assert.doesNotMatch(part, /\b1[45]:00\b/, `${seed.id}: ${part}`);
      assert.doesNotMatch(part, /(?<!₹|INR )900\.00/, `${seed.id}: a bare amount in ${part}`);
    }
    const shown = parts.join('\n');
    if (source.includes('show_time')) assert.ok(shown.includes(SHOW_TIME), `${seed.id}: ${shown}`);
    if (source.includes('occurred_at'))
      // The user's own sign-in: in the user's zone, named.
      assert.ok(shown.includes('Fri 27 Nov 2026, 15:00 (Europe/Berlin)'), `${seed.id}: ${shown}`);
    if (/total_paid|refund_amount/.test(source))
      assert.ok(shown.includes(channel === 'sms' ? 'INR 900.00' : '₹900.00'), `${seed.id}: ${shown}`);
    if (channel === 'sms') {
      assert.ok(message.text.length <= 160, `${seed.id}: ${message.text.length} characters: ${message.text}`);
      assert.match(message.text, GSM7, `${seed.id}: outside GSM 7-bit: ${message.text}`);
    }
  }
});

test("a sender without time_zone or currency still passes the check: the reader's zone and NOTIFY_CURRENCY", async () => {
  const renderer = createTemplateRenderer(t.adapters.database.db, { currency: 'EUR' });
  const { time_zone: _z, currency: _c, ...older } = BOOKING_MESSAGE_DATA;
  assert.deepEqual(await renderer.check('booking_confirmed', ['email', 'sms', 'push'], older), []);
  const message = await renderer.render('booking_confirmed', 'email', older, { timeZone: 'Europe/Berlin' });
  assert.match(message.text, /Fri 27 Nov 2026, 15:00 \(Europe\/Berlin\)/);
  assert.match(message.text, /Paid: €900\.00/);
  const sms = await renderer.render('booking_cancelled', 'sms', { ...older, currency: 'USD' });
  assert.match(sms.text, /Fri 27 Nov 2026, 14:00 \(UTC\)/);
  assert.match(sms.text, /Refund USD 900\.00/);
});

test("migration 101 brings untouched first defaults up to date and keeps an operator's edit", async () => {
  const db = t.adapters.database.db;
  const first = new Map(firstDefaults().map((seed) => [seed.id, seed]));
  const untouched = first.get('booking_confirmed.sms')!;
  await sql`update notify_templates set body = ${untouched.body} where id = 'booking_confirmed.sms'`.execute(
    db,
  );
  const edited = `${first.get('refund_update.email')!.body} Thanks!`;
  await sql`update notify_templates set body = ${edited} where id = 'refund_update.email'`.execute(db);
  await templateMigrations['101_notify_templates_zones_money'].up(db);
  const rows = await sql<{ id: string; body: string }>`
    select id, body from notify_templates where id in ('booking_confirmed.sms', 'refund_update.email')`.execute(
    db,
  );
  const body = Object.fromEntries(rows.rows.map((row) => [row.id, row.body]));
  assert.match(body['booking_confirmed.sms'], /datetime: time_zone/);
  assert.equal(body['refund_update.email'], edited);
});
