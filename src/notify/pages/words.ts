/**
 * What the console says instead of the core's codes and ISO timestamps: statuses, reasons and
 * provider errors in words, times in a named zone, and the preferences API's field errors as
 * sentences for the field they belong to.
 */

const STATUS: Record<string, string> = {
  queued: 'Queued',
  sending: 'Sending',
  scheduled: 'Scheduled',
  sent: 'Sent',
  delivered: 'Delivered',
  failed: 'Failed',
  dead_lettered: 'Gave up after every retry',
  skipped: 'Not sent',
  rate_limited: "Over the user's limit",
};

/** Reasons the core stores on a delivery, and the codes of provider errors (`code: message`). */
const REASON: Record<string, string> = {
  no_address: 'No address on file',
  channel_disabled: 'The user switched this channel off',
  unsubscribed: 'The user unsubscribed',
  provider_unavailable: 'The provider is unavailable; it will be tried again',
  redriven: 'Sent again from the dead letters',
  missing_variables: 'The data lacks what the template needs',
  unknown_type: 'No template for this type',
  render_failed: 'The template could not be rendered',
  invalid_number: 'Not a valid phone number',
  not_a_mobile_number: 'Not a mobile number',
  region_not_enabled: 'SMS to this region is not enabled',
  provider_auth: 'The provider refused our credentials',
  subscription_gone: 'Every push subscription is gone',
  push_subscription_invalid: 'The push subscription is not valid',
  push_endpoint_refused: 'The push endpoint is not allowed',
  push_unreachable: 'The push service could not be reached',
  sms_unreachable: 'The SMS provider could not be reached',
  timeout: 'The provider did not answer in time',
  malformed_answer: 'The provider answered something unreadable',
};

/** Problems the console shows after a redrive that could not run. */
const PROBLEM: Record<string, string> = {
  dead_letter_not_found: 'That dead letter is no longer there: it was sent again already, or it expired.',
};

export const statusWords = (status: string): string => STATUS[status] ?? humanize(status);

/** `http_503` → "The provider answered 503"; `smtp_550` → "The mail server answered 550". */
function codeWords(code: string): string | undefined {
  if (REASON[code]) return REASON[code];
  const status = /^(http|push|smtp)_(\d{3})$/.exec(code);
  if (!status) return undefined;
  const who = { http: 'The provider', push: 'The push service', smtp: 'The mail server' }[
    status[1] as 'http'
  ];
  return `${who} answered ${status[2]}`;
}

/**
 * A stored reason in words, with the provider's own text as detail: a delivery's reason is a code
 * (`no_address`) or a provider error (`invalid_number: SMS provider answered 400 …`).
 */
export function reasonWords(
  stored: string | null | undefined,
): { text: string; detail?: string } | undefined {
  if (!stored) return undefined;
  // A dead letter's error is the queue's description of what the handler threw: `PermanentError: …`.
  const reason = stored.replace(/^[A-Z][A-Za-z]*Error: /, '');
  const split = reason.indexOf(': ');
  const code = split < 0 ? reason : reason.slice(0, split);
  const words = /^[a-z0-9_]+$/.test(code) ? codeWords(code) : undefined;
  if (!words) return { text: reason };
  return split < 0 ? { text: words } : { text: words, detail: reason.slice(split + 2) };
}

export const problemWords = (code: string): string =>
  PROBLEM[code] ?? `It could not be sent again (${humanize(code).toLowerCase()}).`;

function humanize(code: string): string {
  const text = code.replaceAll('_', ' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

const formats = new Map<string, Intl.DateTimeFormat>();

/**
 * "27 Nov 2026, 12:31:05 (Europe/Berlin)": the zone is named, since a console lists users of
 * many zones. A zone Intl does not know (none is stored: the API checks) falls back to UTC.
 */
export function formatTime(iso: string | Date | null | undefined, zone: string | null | undefined): string {
  if (!iso) return '';
  const at = typeof iso === 'string' ? new Date(iso) : iso;
  if (Number.isNaN(at.getTime())) return String(iso);
  const timeZone = zone && isZone(zone) ? zone : 'UTC';
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-GB', { timeZone, dateStyle: 'medium', timeStyle: 'medium' });
    formats.set(timeZone, format);
  }
  return `${format.format(at)} (${timeZone})`;
}

function isZone(zone: string): boolean {
  if (formats.has(zone)) return true;
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** Every IANA zone this runtime knows, for the preferences form's picker. */
export const TIME_ZONES: readonly string[] = Intl.supportedValuesOf('timeZone');

/** The preferences form's fields as their labels say them. */
const LABELS: Record<string, string> = {
  push_enabled: 'Push',
  sms_enabled: 'SMS',
  email_enabled: 'E-mail',
  in_app_enabled: 'In-app feed',
  quiet_hours_start: 'Quiet hours from',
  quiet_hours_end: 'Quiet hours until',
  email: 'E-mail',
  phone: 'Phone',
  timezone: 'Time zone',
  locale: 'Language',
};

/** The API's field messages (preferences/service.ts and the schema) as sentences, by field. */
const FIELD_MESSAGES: Record<string, string> = {
  timezone: 'Choose a time zone from the list.',
  quiet_hours_start: 'Enter a time such as 22:00.',
  quiet_hours_end: 'Enter a time such as 07:00.',
  phone: 'Enter the number in international format: a + and the country code, e.g. +4915112345678.',
  email: 'Enter an e-mail address such as ana@example.com.',
  locale: 'Enter a language code such as en or en-GB.',
};
const QUIET_PAIR = 'Give both ends of the quiet hours, or leave both empty.';

export interface FieldError {
  field: string;
  message: string;
}

/**
 * The API's `errors` ({field, message}: `timezone` from the service's rules, `body.timezone` from
 * the schema) as sentences attached to the form's fields. "quiet_hours_start and quiet_hours_end
 * go together" is said at the end that is empty, since that is the one to fill in.
 */
export function fieldErrors(errors: readonly FieldError[], values: Record<string, string>): FieldError[] {
  const out = new Map<string, string>();
  for (const error of errors) {
    let field = error.field.replace(/^body\./, '');
    let message = FIELD_MESSAGES[field];
    if (/go together/.test(error.message)) {
      field = values.quiet_hours_start ? 'quiet_hours_end' : 'quiet_hours_start';
      message = QUIET_PAIR;
    }
    if (!LABELS[field]) {
      field = 'form';
      message = `${humanize(error.field)} ${error.message}.`;
    }
    if (!out.has(field)) out.set(field, message ?? `${LABELS[field]} ${error.message}.`);
  }
  return [...out].map(([field, message]) => ({ field, message }));
}

/** What the client module needs to say the same (it cannot import this file). */
export const FIELD_WORDS = { labels: LABELS, messages: FIELD_MESSAGES, quietPair: QUIET_PAIR };
