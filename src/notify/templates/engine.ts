import {
  type FilterImplOptions,
  type FS,
  filters,
  LayoutTag,
  Liquid,
  type Template,
  toValueSync,
} from 'liquidjs';
import { parseTemplateId } from './ids.ts';

type FilterHandler = Extract<FilterImplOptions, (...args: never[]) => unknown>;

import { LRUCache } from 'lru-cache';
import QRCode from 'qrcode';

/** Formatted dates by (value, format, zone), shared by both engines: a booking's show time renders once per zone. */
const dates = new LRUCache<string, { value: unknown }>({ max: 10_000 });

/**
 * Where `{% include %}`, `{% render %}` and `{% layout %}` look: the stored templates, by id, and
 * never the disk (liquid's default file system would read any file of the working directory,
 * `.env` included). The names are ids, so no path is ever joined or resolved.
 */
const PARTIALS_ROOT = 'notify_templates';

/** A file system with no files: the engines that only parse and check use it. */
export const NO_FILES: FS = storedTemplateFs(async () => undefined);

/**
 * liquid's file system over the stored templates: `source(id)` is the template's text for this
 * engine, undefined when there is none. Only the async calls answer: a template that includes
 * another renders asynchronously (see `partialReferences`), and the sync ones find nothing.
 */
export function storedTemplateFs(source: (id: string) => Promise<string | undefined>): FS {
  const isId = (file: string) => parseTemplateId(file) !== undefined;
  return {
    sep: '/',
    resolve: (_dir, file) => file,
    contains: async (_root, file) => isId(file),
    containsSync: (_root, file) => isId(file),
    exists: async (file) => isId(file) && (await source(file)) !== undefined,
    existsSync: () => false,
    async readFile(file) {
      const text = isId(file) ? await source(file) : undefined;
      if (text === undefined) throw new Error(`ENOENT: "${file}" is not a stored template`);
      return text;
    },
    readFileSync(file) {
      throw new Error(`ENOENT: "${file}" is not a stored template`);
    },
  };
}

/**
 * Two LiquidJS engines with the same filters: text parts render values as they are; the HTML
 * part escapes every output, so a movie title like `<script>` shows up as text in the e-mail.
 * strictVariables: a missing variable is an error (accept-time `check()` catches it first);
 * strictFilters: a typo in a filter name fails when the template is saved, not at send time.
 * Partials come from `fs` only: names are not relative paths, and there is no other root.
 */
function createEngine(html: boolean, fs: FS): Liquid {
  const liquid = new Liquid({
    strictVariables: true,
    strictFilters: true,
    ownPropertyOnly: true,
    outputEscape: html ? 'escape' : undefined,
    cache: false,
    fs,
    root: [PARTIALS_ROOT],
    partials: [PARTIALS_ROOT],
    layouts: [PARTIALS_ROOT],
    relativeReference: false,
    extname: '',
  });
  // `date` in the recipient's time zone: an explicit zone argument still wins.
  liquid.registerFilter('date', function (value: unknown, format?: string, zone?: string | number) {
    const timeZone = zone ?? (this.context.globals as { timeZone?: string }).timeZone ?? 'UTC';
    // liquid's date builds Intl.DateTimeFormats for every call (two to find the zone's offset, one
    // per month or weekday name): most of a worker's render time. The answer depends only on these
    // arguments, except for the moving `now`/`today`.
    const cacheable =
      (typeof value === 'string' && value !== 'now' && value !== 'today') || typeof value === 'number';
    if (!cacheable) return (filters.date as FilterHandler).call(this, value, format, timeZone);
    const key = `${typeof value}\u0000${value}\u0000${format}\u0000${typeof timeZone}\u0000${timeZone}`;
    const hit = dates.get(key);
    if (hit) {
      // What liquid's date would have counted against the render's memory limit.
      this.context.memoryLimit.use(String(value).length + String(format ?? '').length);
      return hit.value;
    }
    const formatted = (filters.date as FilterHandler).call(this, value, format, timeZone);
    dates.set(key, { value: formatted });
    return formatted;
  });
  // `datetime`: a time as people read it, with the zone named ("Fri 27 Nov 2026, 19:30 (Asia/Kolkata)").
  // The zone is the event's (booking sends its venue's as `time_zone`), else the recipient's: a
  // 19:30 show in Delhi is 19:30 for a reader in Berlin too, and the name says which 19:30.
  liquid.registerFilter('datetime', function (value: unknown, zone?: unknown) {
    const recipient = (this.context.globals as { timeZone?: string }).timeZone ?? 'UTC';
    const timeZone = typeof zone === 'string' && zone ? knownTimeZone(zone, recipient) : recipient;
    return formatDateTime(value, timeZone);
  });
  // Money arrives as a number with two decimals (or its string). With an ISO 4217 code it reads as
  // people expect it, "₹900.00"; `money: currency, "code"` gives "INR 900.00", ASCII only, for SMS
  // (₹ is not in the GSM 7-bit alphabet and would halve the segment to 70 characters). Without a
  // currency it is the bare amount, 24 → 24.00, as operators' older templates expect.
  liquid.registerFilter('money', (value: unknown, currency?: unknown, display?: unknown) => {
    const amount = typeof value === 'number' ? value : Number(value);
    if (typeof value === 'boolean' || value === '' || !Number.isFinite(amount)) return value;
    if (typeof currency !== 'string' || !currency) return amount.toFixed(2);
    return formatMoney(amount, currency, display === 'code');
  });
  // A data: URL of the value as a QR code, for an <img src> in the HTML part (the ticket token).
  liquid.registerFilter('qr', (value: unknown) =>
    QRCode.toDataURL(String(value), { errorCorrectionLevel: 'M', margin: 1, width: 200 }),
  );
  return liquid;
}

/**
 * Whether a template can render with liquid's `renderSync`: only the `qr` filter is async, and a
 * source without the two letters cannot call it. Rendering synchronously skips liquid's promise
 * machinery for every tag and output.
 */
export function rendersSync(sources: (string | null | undefined)[]): boolean {
  return sources.every((source) => !source?.includes('qr'));
}

export const textEngine = createEngine(false, NO_FILES);
export const htmlEngine = createEngine(true, NO_FILES);

export interface Engines {
  text: Liquid;
  html: Liquid;
}

/** A renderer's own engines, whose partials are its stored templates (`storedTemplateFs`). */
export function createEngines(fs: { text: FS; html: FS }): Engines {
  return { text: createEngine(false, fs.text), html: createEngine(true, fs.html) };
}

const PARTIAL_TAGS = new Set(['include', 'render', 'layout']);

export interface PartialReferences {
  /** Template ids named literally by include, render and layout tags. */
  names: Set<string>;
  /** A tag whose partial is an expression (`{% include file %}`): only known at render time. */
  dynamic: boolean;
}

/**
 * The partials the parsed parts name, found through liquid's public template tree (`children`,
 * `partialScope`): what the save-time check and the renderer's choice of render path go by.
 */
export function partialReferences(parts: Template[][]): PartialReferences {
  const found: PartialReferences = { names: new Set(), dynamic: false };
  const visit = (templates: Template[]) => {
    for (const template of templates) {
      const tag = (template.token as { name?: string }).name;
      if (tag && PARTIAL_TAGS.has(tag)) {
        const name = template.partialScope?.()?.name;
        if (name !== undefined) found.names.add(name);
        // `{% layout none %}` names no file; any other unnamed partial is an expression.
        else if (!(template instanceof LayoutTag && template.file === undefined)) found.dynamic = true;
      }
      if (template.children) visit(toValueSync(template.children(false, true)) as Template[]);
    }
  };
  for (const part of parts) visit(part);
  return found;
}

/** Operator-written templates: bound the work one render may do. */
export const RENDER_LIMITS = { renderLimit: 2000, templateLimit: 10_000, memoryLimit: 10_000_000 };

/** Variables a template expects from `data` (not those it assigns or loops over itself). */
export function templateVariables(parts: Template[][]): string[] {
  const names = new Set<string>();
  // Only the parts' own variables: partials are looked up by the renderer (they need its database).
  for (const part of parts)
    for (const name of textEngine.globalVariablesSync(part, { partials: false })) names.add(name);
  return [...names].sort();
}

/** The user's zone when Intl knows it, else UTC: a stale preference must not make a message unsendable. */
export function knownTimeZone(timeZone: string | undefined, fallback = 'UTC'): string {
  if (!timeZone) return fallback;
  if (validZones.has(timeZone)) return timeZone;
  try {
    new Intl.DateTimeFormat('en', { timeZone });
    validZones.add(timeZone);
    return timeZone;
  } catch {
    return fallback;
  }
}
/** Zones Intl accepted: building a DateTimeFormat per render showed in worker profiles (only real zones, so it stays small). */
const validZones = new Set<string>();

/** Escapes text and keeps its line breaks: the HTML part of an e-mail that has no html_body. */
export function textToHtml(text: string): string {
  const escaped = text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
  return escaped
    .split(/\n{2,}/)
    .map((paragraph) => `<p>${paragraph.replaceAll('\n', '<br>\n')}</p>`)
    .join('\n');
}

/** Formatted times and amounts by their arguments: Intl formatters are dear to build (see `dates`). */
const dateTimes = new LRUCache<string, string>({ max: 10_000 });
const dateTimeFormats = new Map<string, Intl.DateTimeFormat>();
const moneyFormats = new Map<string, Intl.NumberFormat | null>();

/**
 * "Fri 27 Nov 2026, 19:30 (Asia/Kolkata)": English, 24-hour, and the IANA name rather than an
 * abbreviation, which Intl gives only for some zones and locales ("GMT+5:30" for India in English)
 * and which is ambiguous where it exists (IST is also Irish and Israel time). A value that is not a
 * time comes back as it was, as liquid's `date` does. Numbers are Unix seconds, as for `date`.
 */
export function formatDateTime(value: unknown, timeZone: string): unknown {
  const key = `${typeof value}\u0000${String(value)}\u0000${timeZone}`;
  const hit = dateTimes.get(key);
  if (hit !== undefined) return hit;
  const at =
    value instanceof Date
      ? value
      : typeof value === 'number' || (typeof value === 'string' && /^\d+$/.test(value))
        ? new Date(Number(value) * 1000)
        : typeof value === 'string'
          ? new Date(value)
          : undefined;
  if (!at || Number.isNaN(at.getTime())) return value;
  let format = dateTimeFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-GB', {
      timeZone,
      weekday: 'short',
      day: 'numeric',
      month: 'short',
      year: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    dateTimeFormats.set(timeZone, format);
  }
  const part = Object.fromEntries(format.formatToParts(at).map((p) => [p.type, p.value]));
  const text = `${part.weekday} ${part.day} ${part.month} ${part.year}, ${part.hour}:${part.minute} (${timeZone})`;
  if (!(value instanceof Date)) dateTimes.set(key, text);
  return text;
}

/** "₹900.00", "€12.50", or with `code` "INR 900.00"; a code Intl does not know: "900.00 XYZ". */
export function formatMoney(amount: number, currency: string, code: boolean): string {
  const key = `${currency}\u0000${code}`;
  let format = moneyFormats.get(key);
  if (format === undefined) {
    try {
      format = new Intl.NumberFormat('en', {
        style: 'currency',
        currency,
        currencyDisplay: code ? 'code' : 'symbol',
      });
    } catch {
      format = null;
    }
    moneyFormats.set(key, format);
  }
  // Intl puts a no-break space after a code; SMS and plain text want a plain one.
  return format ? format.format(amount).replace(/\u00a0/g, ' ') : `${amount.toFixed(2)} ${currency}`;
}
