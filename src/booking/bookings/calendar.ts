/**
 * A booking as an iCalendar event (RFC 5545), attached to the confirmation e-mail as `ticket.ics`.
 * Times are local times of the venue's zone (`DTSTART;TZID=Asia/Kolkata:20261127T193000`) with a
 * VTIMEZONE describing that zone around the show, so a calendar shows 19:30 in Delhi wherever its
 * owner is, and converts correctly when they travel.
 */

export interface CalendarEvent {
  /** Globally unique and stable: a re-sent confirmation updates the same event. */
  uid: string;
  /** When the event was made (the booking's confirmation). */
  stamp: Date;
  start: Date;
  end: Date;
  timeZone: string;
  summary: string;
  location: string;
  description: string;
  url?: string;
}

const CRLF = '\r\n';

export function calendarFile(event: CalendarEvent): string {
  const lines = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//four-services//seat booking//EN',
    'CALSCALE:GREGORIAN',
    'METHOD:PUBLISH',
    ...timeZoneLines(event.timeZone, event.start, event.end),
    'BEGIN:VEVENT',
    `UID:${text(event.uid)}`,
    `DTSTAMP:${utc(event.stamp)}`,
    dateTime('DTSTART', event.start, event.timeZone),
    dateTime('DTEND', event.end, event.timeZone),
    `SUMMARY:${text(event.summary)}`,
    `LOCATION:${text(event.location)}`,
    `DESCRIPTION:${text(event.description)}`,
    ...(event.url ? [`URL:${event.url}`] : []),
    'STATUS:CONFIRMED',
    'TRANSP:OPAQUE',
    'END:VEVENT',
    'END:VCALENDAR',
  ];
  return lines.map(fold).join(CRLF) + CRLF;
}

/**
 * `DTSTART;TZID=…:local` — or UTC (`DTSTART:…Z`) when that local time names two instants (the hour
 * repeated when clocks go back): RFC 5545 means the first of them, but calendars differ (ical.js
 * takes the second), so an ambiguous time is written as the one instant it is.
 */
function dateTime(name: string, date: Date, timeZone: string): string {
  const offset = offsetMinutes(timeZone, date);
  const wall = date.getTime() + offset * 60_000;
  const offsets = new Set([
    offsetMinutes(timeZone, new Date(date.getTime() - 12 * 3_600_000)),
    offset,
    offsetMinutes(timeZone, new Date(date.getTime() + 12 * 3_600_000)),
  ]);
  const instants = [...offsets].filter(
    (candidate) => offsetMinutes(timeZone, new Date(wall - candidate * 60_000)) === candidate,
  );
  return instants.length === 1 ? `${name};TZID=${timeZone}:${local(date, timeZone)}` : `${name}:${utc(date)}`;
}

/** TEXT values (§3.3.11): backslash, semicolon, comma and line breaks escaped. */
function text(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/;/g, '\\;').replace(/,/g, '\\,').replace(/\r?\n/g, '\\n');
}

/**
 * §3.1: lines longer than 75 octets are folded (CRLF and one space); never inside a UTF-8
 * character, so each continuation starts at a character boundary.
 */
export function fold(line: string): string {
  const parts: string[] = [];
  let current = '';
  let octets = 0;
  for (const char of line) {
    const size = Buffer.byteLength(char);
    // The first line holds 75 octets; continuations 74 after their leading space.
    const limit = parts.length === 0 ? 75 : 74;
    if (octets + size > limit) {
      parts.push(current);
      current = '';
      octets = 0;
    }
    current += char;
    octets += size;
  }
  parts.push(current);
  return parts.join(`${CRLF} `);
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

function utc(date: Date): string {
  return (
    `${date.getUTCFullYear()}${pad(date.getUTCMonth() + 1)}${pad(date.getUTCDate())}` +
    `T${pad(date.getUTCHours())}${pad(date.getUTCMinutes())}${pad(date.getUTCSeconds())}Z`
  );
}

/** The wall-clock time of `date` in `timeZone`, as a DATE-TIME without zone (`20261127T193000`). */
function local(date: Date, timeZone: string): string {
  return utc(new Date(date.getTime() + offsetMinutes(timeZone, date) * 60_000)).slice(0, -1);
}

const offsetFormats = new Map<string, Intl.DateTimeFormat>();

/** The zone's UTC offset at an instant, in minutes (+330 for Asia/Kolkata). */
export function offsetMinutes(timeZone: string, date: Date): number {
  let format = offsetFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' });
    offsetFormats.set(timeZone, format);
  }
  const name = format.formatToParts(date).find((part) => part.type === 'timeZoneName')?.value ?? 'GMT';
  const match = /GMT([+-])(\d{2}):(\d{2})/.exec(name);
  if (!match) return 0;
  const minutes = Number(match[2]) * 60 + Number(match[3]);
  return match[1] === '-' ? -minutes : minutes;
}

function offsetText(minutes: number): string {
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  return `${sign}${pad(Math.floor(abs / 60))}${pad(abs % 60)}`;
}

const DAY = 86_400_000;

/** The instants the zone's offset changes between `from` and `to` (to the minute). */
function transitions(
  timeZone: string,
  from: number,
  to: number,
): { at: number; before: number; after: number }[] {
  const found: { at: number; before: number; after: number }[] = [];
  let previous = offsetMinutes(timeZone, new Date(from));
  for (let day = from + DAY; day <= to; day += DAY) {
    const offset = offsetMinutes(timeZone, new Date(day));
    if (offset === previous) continue;
    // Narrow the change down inside the day (offsets change at most once a day).
    let low = day - DAY;
    let high = day;
    while (high - low > 60_000) {
      const middle = low + Math.floor((high - low) / 120_000) * 60_000;
      if (offsetMinutes(timeZone, new Date(middle)) === previous) low = middle;
      else high = middle;
    }
    found.push({ at: high, before: previous, after: offset });
    previous = offset;
  }
  return found;
}

/**
 * The VTIMEZONE (§3.6.5) for the event: the observance in effect at its start and every change of
 * offset from a year before it to a year after it, each as its own observance with an explicit
 * DTSTART (local time before the change) rather than a rule guessed from two samples. A zone without
 * changes in that span (Asia/Kolkata) is one STANDARD observance.
 */
function timeZoneLines(timeZone: string, start: Date, end: Date): string[] {
  const from = start.getTime() - 366 * DAY;
  const changes = transitions(timeZone, from, end.getTime() + 366 * DAY);
  const observance = (kind: string, startLocal: string, before: number, after: number) => [
    `BEGIN:${kind}`,
    `DTSTART:${startLocal}`,
    `TZOFFSETFROM:${offsetText(before)}`,
    `TZOFFSETTO:${offsetText(after)}`,
    `END:${kind}`,
  ];
  const lines = ['BEGIN:VTIMEZONE', `TZID:${timeZone}`];
  const initial = offsetMinutes(timeZone, new Date(from));
  // The offset in effect from the start of the span (before any change in it).
  const firstKind = changes.length > 0 && initial > changes[0].after ? 'DAYLIGHT' : 'STANDARD';
  lines.push(...observance(firstKind, '19700101T000000', initial, initial));
  for (const change of changes) {
    const kind = change.after > change.before ? 'DAYLIGHT' : 'STANDARD';
    const startLocal = utc(new Date(change.at + change.before * 60_000)).slice(0, -1);
    lines.push(...observance(kind, startLocal, change.before, change.after));
  }
  lines.push('END:VTIMEZONE');
  return lines;
}
