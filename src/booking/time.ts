/** Local dates and times of a city, for listings ("shows on 2026-01-06 in Mumbai"). */

const formats = new Map<string, Intl.DateTimeFormat>();

/**
 * One formatter per use and zone: building one costs far more than formatting with it. Each
 * locale below serves one use only, so locale and zone name the formatter.
 */
function formatIn(locale: string, timeZone: string, options: Intl.DateTimeFormatOptions) {
  const key = `${locale} ${timeZone}`;
  let format = formats.get(key);
  if (!format) {
    format = new Intl.DateTimeFormat(locale, { timeZone, ...options });
    formats.set(key, format);
  }
  return format;
}

export function isTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone });
    return true;
  } catch {
    return false;
  }
}

/** `YYYY-MM-DD` of `at` in the time zone. */
export function localDate(at: Date, timeZone: string): string {
  return formatIn('en-CA', timeZone, { year: 'numeric', month: '2-digit', day: '2-digit' }).format(at);
}

/** `HH:MM` (24 h) of `at` in the time zone. */
export function localTime(at: Date, timeZone: string): string {
  return formatIn('en-GB', timeZone, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(at);
}

/** The instant a local wall-clock time happens in a time zone (a time skipped by a DST change gives the hour before). */
export function zonedInstant(date: string, time: string, timeZone: string): Date {
  const guess = new Date(`${date}T${time}:00Z`);
  const offset = offsetMs(guess, timeZone);
  const first = new Date(guess.getTime() - offset);
  const second = offsetMs(first, timeZone);
  return second === offset ? first : new Date(guess.getTime() - second);
}

function offsetMs(at: Date, timeZone: string): number {
  const format = formatIn('en-US', timeZone, {
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
  const parts = format.formatToParts(at);
  const get = (type: string) => Number(parts.find((part) => part.type === type)?.value);
  const asUtc = Date.UTC(
    get('year'),
    get('month') - 1,
    get('day'),
    get('hour'),
    get('minute'),
    get('second'),
  );
  return asUtc - Math.floor(at.getTime() / 1000) * 1000;
}

export function addDays(date: string, days: number): string {
  const at = new Date(`${date}T00:00:00Z`);
  at.setUTCDate(at.getUTCDate() + days);
  return at.toISOString().slice(0, 10);
}
