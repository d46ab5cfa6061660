import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import ICAL from 'ical.js';
import { SMTPServer } from 'smtp-server';
import { type BookingTestApp, book, bookingTestApp, hold, seedShow } from '../../../test/support/booking.ts';
import { TEST_CARDS } from '../../payments/api.ts';
import { calendarFile, offsetMinutes } from './calendar.ts';

/**
 * The confirmation's `ticket.ics`: checked line by line against RFC 5545's rules (CRLF, 75-octet
 * folding, one VEVENT with the required properties, TZID with its VTIMEZONE), then read by ical.js
 * (Mozilla's parser), whose instants — computed from our VTIMEZONE alone — must be the show's.
 */

/** The RFC 5545 rules a consumer relies on, strictly; returns the unfolded content lines. */
function strictLines(ics: string): string[] {
  assert.ok(ics.endsWith('\r\n'), 'the file ends with CRLF');
  assert.doesNotMatch(ics.replace(/\r\n/g, ''), /[\r\n]/, 'every line break is CRLF');
  const physical = ics.slice(0, -2).split('\r\n');
  for (const line of physical) {
    assert.ok(Buffer.byteLength(line) <= 75, `longer than 75 octets: ${line}`);
  }
  const lines: string[] = [];
  for (const line of physical) {
    if (line.startsWith(' ')) lines[lines.length - 1] += line.slice(1);
    else lines.push(line);
  }
  const stack: string[] = [];
  for (const line of lines) {
    assert.match(line, /^[A-Z-]+(;[A-Z-]+=[^;:]+)*:/, `a content line: ${line}`);
    if (line.startsWith('BEGIN:')) stack.push(line.slice(6));
    if (line.startsWith('END:')) assert.equal(stack.pop(), line.slice(4), 'components nest');
  }
  assert.equal(stack.length, 0);
  assert.equal(lines[0], 'BEGIN:VCALENDAR');
  assert.ok(lines.includes('VERSION:2.0') && lines.some((l) => l.startsWith('PRODID:')));
  assert.equal(lines.filter((l) => l === 'BEGIN:VEVENT').length, 1);
  const vevent = lines.slice(lines.indexOf('BEGIN:VEVENT'), lines.indexOf('END:VEVENT'));
  for (const name of ['UID', 'DTSTAMP', 'DTSTART', 'DTEND', 'SUMMARY', 'LOCATION']) {
    assert.equal(vevent.filter((l) => l.startsWith(`${name}:`) || l.startsWith(`${name};`)).length, 1, name);
  }
  assert.match(vevent.find((l) => l.startsWith('DTSTAMP:'))!, /^DTSTAMP:\d{8}T\d{6}Z$/);
  const start = vevent.find((l) => l.startsWith('DTSTART'))!;
  const tzid = /^DTSTART;TZID=([^:]+):\d{8}T\d{6}$/.exec(start)?.[1];
  if (tzid) assert.ok(lines.includes(`TZID:${tzid}`), 'a VTIMEZONE for that zone');
  else assert.match(start, /^DTSTART:\d{8}T\d{6}Z$/, 'a zone, or UTC');
  return lines;
}

/** The event as ical.js reads it, with only the file's own VTIMEZONE to go by. */
function parsed(ics: string) {
  const calendar = new ICAL.Component(ICAL.parse(ics));
  // ical.js resolves a TZID through its registry: only this file's zone is in it (replaced per file).
  for (const zone of calendar.getAllSubcomponents('vtimezone')) {
    ICAL.TimezoneService.register(new ICAL.Timezone(zone));
  }
  const event = new ICAL.Event(calendar.getFirstSubcomponent('vevent')!);
  assert.ok(event.startDate.zone?.tzid && event.startDate.zone.tzid !== 'floating', 'a zoned start');
  return { event, start: event.startDate.toJSDate(), end: event.endDate.toJSDate() };
}

function event(timeZone: string, start: string, minutes = 150) {
  return {
    uid: 'booking-0190a1b2-0000-7000-8000-00000000abcd@tickets.example',
    stamp: new Date('2026-11-20T10:00:00Z'),
    start: new Date(start),
    end: new Date(new Date(start).getTime() + minutes * 60_000),
    timeZone,
    summary: 'Monsoon Wedding Bells (seats C7, C8)',
    location: 'PVR Select City, Screen 2, New Delhi',
    description: 'Booking 0190a1b2. Seats C7, C8; show the QR code at the door.',
    url: 'https://tickets.example/bookings/0190a1b2-0000-7000-8000-00000000abcd',
  };
}

describe('calendarFile', () => {
  test('a show in Delhi: local times with TZID and a VTIMEZONE that gives the right instants', () => {
    const ics = calendarFile(event('Asia/Kolkata', '2026-11-27T14:00:00Z'));
    const lines = strictLines(ics);
    assert.ok(lines.includes('DTSTART;TZID=Asia/Kolkata:20261127T193000'), ics);
    assert.ok(lines.includes('DTEND;TZID=Asia/Kolkata:20261127T220000'), ics);
    assert.ok(lines.includes('TZOFFSETTO:+0530'));
    assert.ok(lines.includes('SUMMARY:Monsoon Wedding Bells (seats C7\\, C8)'), 'commas escaped');
    const { event: read, start, end } = parsed(ics);
    assert.equal(start.toISOString(), '2026-11-27T14:00:00.000Z');
    assert.equal(end.toISOString(), '2026-11-27T16:30:00.000Z');
    assert.equal(read.uid, 'booking-0190a1b2-0000-7000-8000-00000000abcd@tickets.example');
    assert.equal(read.summary, 'Monsoon Wedding Bells (seats C7, C8)');
    assert.equal(read.location, 'PVR Select City, Screen 2, New Delhi');
  });

  test('zones with daylight saving: instants right on both sides of a change', () => {
    for (const [zone, iso] of [
      ['Europe/London', '2026-03-28T19:30:00Z'], // the evening before the clocks go forward
      ['Europe/London', '2026-03-29T18:30:00Z'], // BST
      // 01:30 EDT and 01:30 EST, the two 01:30s of the night clocks go back (written in UTC).
      ['America/New_York', '2026-11-01T05:30:00Z'],
      ['America/New_York', '2026-11-01T06:30:00Z'],
      ['Australia/Sydney', '2026-04-05T08:00:00Z'],
    ] as const) {
      const ics = calendarFile(event(zone, iso, 90));
      strictLines(ics);
      assert.match(ics, /BEGIN:DAYLIGHT/, zone);
      const { start, end } = parsed(ics);
      assert.equal(start.toISOString(), new Date(iso).toISOString(), `${zone} ${iso}\n${ics}`);
      assert.equal(end.getTime() - start.getTime(), 90 * 60_000, `${zone} ${iso}`);
    }
    assert.match(
      calendarFile(event('America/New_York', '2026-11-01T05:30:00Z')),
      /^DTSTART:20261101T053000Z\r$/m,
    );
    assert.match(
      calendarFile(event('America/New_York', '2026-11-01T12:00:00Z')),
      /^DTSTART;TZID=America\/New_York:20261101T070000\r$/m,
    );
    assert.equal(offsetMinutes('America/New_York', new Date('2026-07-01T12:00:00Z')), -240);
  });

  test('long and non-ASCII lines fold at 75 octets between characters, and unfold to the same text', () => {
    const summary = `${'Écran géant — ड्रीम '.repeat(8)}(seats A1, A2)`;
    const ics = calendarFile({ ...event('Asia/Kolkata', '2026-11-27T14:00:00Z'), summary });
    const lines = strictLines(ics);
    assert.ok(ics.split('\r\n').filter((line) => line.startsWith(' ')).length >= 3, 'it was folded');
    assert.equal(parsed(ics).event.summary, summary);
    assert.ok(lines.some((line) => line.startsWith('SUMMARY:')));
  });
});

describe('the confirmation e-mail over SMTP', () => {
  const received: string[] = [];
  let server: SMTPServer;
  let t: BookingTestApp;

  before(async () => {
    server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onData(stream, _session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          received.push(Buffer.concat(chunks).toString('utf8'));
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.server.address() as { port: number }).port;
    t = await bookingTestApp({
      notify: 'real',
      env: {
        NOTIFY_EMAIL_PROVIDER: 'smtp',
        NOTIFY_SMTP_URL: `smtp://127.0.0.1:${port}`,
        NOTIFY_EMAIL_FROM: '"Cinema" <tickets@cinema.test>',
      },
    });
    await t.app.platform.startWorkers();
  });
  after(async () => {
    await t.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  test('carries ticket.ics: the show in its venue zone, the booking as UID', async () => {
    const { showId } = await seedShow(t);
    const held = (await hold(t, showId, ['C7', 'C8'])).json();
    const booked = await book(t, held, TEST_CARDS.success, undefined, {
      contact: { email: 'rahul@example.com' },
    });
    assert.equal(booked.statusCode, 201, booked.body);
    const booking = booked.json();
    const deadline = Date.now() + 20_000;
    while (!received.some((raw) => raw.includes(booking.booking_id)) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const raw = received.find((mail) => mail.includes('text/calendar'));
    assert.ok(raw, `no e-mail with a calendar arrived (${received.length} e-mails)`);
    const headers = /Content-Type: text\/calendar[\s\S]*?\r\n\r\n/i.exec(raw)?.[0] ?? '';
    assert.match(headers, /charset=utf-8/i);
    assert.match(headers, /method=PUBLISH/i);
    assert.match(headers, /filename=ticket\.ics/);
    const body = raw.slice(raw.indexOf(headers) + headers.length).split(/\r\n--/)[0];
    const encoding = /Content-Transfer-Encoding:\s*(\S+)/i.exec(headers)?.[1].toLowerCase();
    const ics =
      encoding === 'base64'
        ? Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8')
        : encoding === 'quoted-printable'
          ? Buffer.from(
              body
                .replace(/=\r\n/g, '')
                .replace(/=([0-9A-F]{2})/g, (_m, hex) => String.fromCharCode(Number.parseInt(hex, 16))),
              'latin1',
            ).toString('utf8')
          : body;
    const lines = strictLines(ics);
    assert.ok(
      lines.some((line) => line.startsWith('DTSTART;TZID=Asia/Kolkata:')),
      ics,
    );
    const { event: read, start, end } = parsed(ics);
    assert.equal(start.toISOString(), booking.show.show_time.replace(/(\.\d{3})?Z$/, '.000Z'));
    assert.equal(end.toISOString(), booking.show.end_time.replace(/(\.\d{3})?Z$/, '.000Z'));
    assert.match(read.uid, new RegExp(`^booking-${booking.booking_id}@`));
    assert.match(read.summary, /C7, C8/);
    assert.match(read.location, /^Test Theater \d+, Screen 1, Testville \d+$/);
  });
});
