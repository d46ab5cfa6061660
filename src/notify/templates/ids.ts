import { CHANNELS, type Channel } from '../api.ts';

/** `{type}.{channel}[.{locale}]`, e.g. `booking_confirmed.email.de-AT`; at most 50 characters (spec). */
export const TEMPLATE_ID_PATTERN =
  '^[a-z][a-z0-9_]{0,19}\\.(push|sms|email|in_app)(\\.[a-z]{2,3}(-[A-Z]{2})?)?$';
const ID = new RegExp(TEMPLATE_ID_PATTERN);

export interface TemplateKey {
  type: string;
  channel: Channel;
  locale?: string;
}

export function parseTemplateId(id: string): TemplateKey | undefined {
  if (id.length > 50 || !ID.test(id)) return undefined;
  const [type, channel, locale] = id.split('.');
  if (!CHANNELS.includes(channel as Channel)) return undefined;
  return { type, channel: channel as Channel, locale };
}

/** Most specific first: `de-AT` → `t.email.de-AT`, `t.email.de`, `t.email`. */
export function candidateIds(type: string, channel: Channel, locale?: string): string[] {
  const base = `${type}.${channel}`;
  if (!locale) return [base];
  const language = locale.split('-')[0].toLowerCase();
  const ids = [`${base}.${locale}`, `${base}.${language}`, base];
  return [...new Set(ids)];
}
