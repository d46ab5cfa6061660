import type { Clock } from '../../platform/clock.ts';
import { platformError } from '../../platform/errors.ts';
import { type OutboundGuard, OutboundRefused } from '../../platform/http/outbound.ts';
import type { Channel } from '../api.ts';
import { err } from '../errors.ts';
import type { PushSubscription } from '../ports.ts';
import type { PreferencesRow } from '../tables.ts';
import type { PreferencesRepository } from './repository.ts';

/** Preferences as the API shows them (`quiet_hours_*` as local "HH:MM"). */
export interface Preferences {
  push_enabled: boolean;
  sms_enabled: boolean;
  email_enabled: boolean;
  in_app_enabled: boolean;
  email_marketing_enabled: boolean;
  quiet_hours_start: string | null;
  quiet_hours_end: string | null;
  timezone: string;
  email: string | null;
  phone: string | null;
  locale: string | null;
}

export const DEFAULT_PREFERENCES: Preferences = {
  push_enabled: true,
  sms_enabled: true,
  email_enabled: true,
  in_app_enabled: true,
  email_marketing_enabled: true,
  quiet_hours_start: null,
  quiet_hours_end: null,
  timezone: 'UTC',
  email: null,
  phone: null,
  locale: null,
};

/** Any string id up to 64 characters (booking passes UUIDs; the spec's 64-bit integers fit). */
export const USER_ID = /^[A-Za-z0-9_-]{1,64}$/;
export const E164 = /^\+[1-9][0-9]{6,14}$/;
const HHMM = /^([01][0-9]|2[0-3]):[0-5][0-9]$/;

export function toPreferences(row: PreferencesRow | undefined): Preferences {
  if (!row) return { ...DEFAULT_PREFERENCES };
  const { user_id: _, version: _version, ...rest } = row;
  return {
    ...rest,
    quiet_hours_start: row.quiet_hours_start?.slice(0, 5) ?? null,
    quiet_hours_end: row.quiet_hours_end?.slice(0, 5) ?? null,
  };
}

/** Zones Intl accepted (only real zones, so it stays small): a DateTimeFormat per check showed in profiles. */
const validZones = new Set<string>();

export function isTimeZone(zone: string): boolean {
  if (validZones.has(zone)) return true;
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    validZones.add(zone);
    return true;
  } catch {
    return false;
  }
}

/** Rules a schema cannot say: a real IANA zone, both quiet-hour ends or neither. */
export function checkPreferences(p: Preferences): void {
  const errors: { field: string; message: string }[] = [];
  if (!isTimeZone(p.timezone)) errors.push({ field: 'timezone', message: 'is not an IANA time zone' });
  if ((p.quiet_hours_start === null) !== (p.quiet_hours_end === null))
    errors.push({ field: 'quiet_hours_end', message: 'quiet_hours_start and quiet_hours_end go together' });
  for (const field of ['quiet_hours_start', 'quiet_hours_end'] as const) {
    const value = p[field];
    if (value !== null && !HHMM.test(value)) errors.push({ field, message: 'must be HH:MM' });
  }
  if (p.phone !== null && !E164.test(p.phone))
    errors.push({ field: 'phone', message: 'must be E.164, e.g. +4915112345678' });
  if (errors.length) {
    throw err('invalid_preferences', {
      detail: errors.map((e) => `${e.field} ${e.message}`).join('; '),
      extras: { errors },
    });
  }
}

/** The in-process `setContact` gets the same checks as the HTTP API. */
export function checkContact(userId: string, contact: { email?: string; phone?: string }): void {
  const errors: { field: string; message: string }[] = [];
  if (!USER_ID.test(userId))
    errors.push({ field: 'userId', message: 'must be 1-64 characters of A-Z, a-z, 0-9, _ or -' });
  if (contact.phone !== undefined && !E164.test(contact.phone))
    errors.push({ field: 'phone', message: 'must be E.164' });
  if (contact.email !== undefined && !/^[^\s@]{1,64}@[^\s@]{1,253}$/.test(contact.email))
    errors.push({ field: 'email', message: 'is not an e-mail address' });
  if (errors.length) throw platformError('validation_failed', { extras: { errors } });
}

/** Minutes since local midnight in `timeZone`, and the seconds into the current minute. */
export function localClock(now: Date, timeZone: string): { minutes: number; seconds: number } {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone,
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(now);
  const get = (type: string) => Number(parts.find((part) => part.type === type)?.value ?? 0);
  return { minutes: get('hour') * 60 + get('minute'), seconds: get('second') };
}

const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/**
 * When the user's quiet period ends if `now` falls inside it (start inclusive, end exclusive,
 * possibly across midnight), else null. Counted in wall-clock minutes of the user's zone: on a
 * DST change night the send may be an hour off, which quiet hours can tolerate.
 */
export function quietUntil(p: Preferences, now: Date): Date | null {
  if (!p.quiet_hours_start || !p.quiet_hours_end) return null;
  const start = minutesOf(p.quiet_hours_start);
  const end = minutesOf(p.quiet_hours_end);
  if (start === end) return null;
  const { minutes, seconds } = localClock(now, p.timezone);
  const inside = start < end ? minutes >= start && minutes < end : minutes >= start || minutes < end;
  if (!inside) return null;
  const untilEnd = (end - minutes + 1440) % 1440;
  return new Date(now.getTime() + untilEnd * 60_000 - seconds * 1000 - now.getUTCMilliseconds());
}

export function enabled(p: Preferences, channel: Channel): boolean {
  switch (channel) {
    case 'push':
      return p.push_enabled;
    case 'sms':
      return p.sms_enabled;
    case 'email':
      return p.email_enabled;
    case 'in_app':
      // A row read before migration 300 (or a cached one) has no such field: on, the default.
      return p.in_app_enabled !== false;
  }
}

/**
 * A bulk (marketing) type's e-mail to a user who unsubscribed from it: skipped as `unsubscribed`.
 * Transactional types never ask (settings.ts TRANSACTIONAL_TYPES cannot be marketing types).
 */
export function unsubscribed(p: Preferences, channel: Channel, marketing: boolean): boolean {
  return marketing && channel === 'email' && !p.email_marketing_enabled;
}

/** Where the channel would go: an e-mail address, a phone number, a push subscription; the feed always is. */
export function hasAddress(p: Preferences, channel: Channel, subscriptions: readonly unknown[]): boolean {
  if (channel === 'in_app') return true;
  return channel === 'email'
    ? Boolean(p.email)
    : channel === 'sms'
      ? Boolean(p.phone)
      : subscriptions.length > 0;
}

export function createPreferencesService(deps: {
  repo: PreferencesRepository;
  clock: Clock;
  /** Checks push endpoints before they are stored (the sender checks them again at send time). */
  outbound: OutboundGuard;
  maxPushSubscriptions: number;
}) {
  const { repo, clock, outbound, maxPushSubscriptions } = deps;
  async function checkEndpoint(endpoint: string) {
    try {
      await outbound.check(endpoint);
    } catch (error) {
      if (!(error instanceof OutboundRefused)) throw error;
      if (error.transient) {
        throw err('push_endpoint_unresolved', {
          detail: `Push endpoint: ${error.message}`,
          headers: { 'Retry-After': '30' },
        });
      }
      throw err('push_endpoint_refused', { detail: `Push endpoint refused: ${error.message}` });
    }
  }

  const get = async (userId: string) => toPreferences(await repo.preferences(userId));
  const save = async (userId: string, p: Preferences) => {
    checkPreferences(p);
    await repo.savePreferences({ user_id: userId, ...p }, clock.now());
    return p;
  };
  return {
    get,
    /** PUT: every field not given goes back to its default. */
    replace: (userId: string, body: Partial<Preferences>) =>
      save(userId, { ...DEFAULT_PREFERENCES, ...body }),
    /** PATCH: only the given fields change. */
    async update(userId: string, body: Partial<Preferences>) {
      return save(userId, { ...(await get(userId)), ...body });
    },

    /** Idempotent for an endpoint the user has; a new one needs a free place (at most `maxPushSubscriptions`). */
    async addSubscription(userId: string, subscription: PushSubscription) {
      await checkEndpoint(subscription.endpoint);
      if (!(await repo.addSubscription(userId, subscription, clock.now(), maxPushSubscriptions))) {
        throw err('push_subscriptions_limit', {
          detail: `A user holds at most ${maxPushSubscriptions} push subscriptions; remove one first`,
          extras: { limit: maxPushSubscriptions },
        });
      }
    },
    async deleteSubscription(userId: string, endpoint: string) {
      if (!(await repo.deleteSubscription(userId, endpoint))) throw err('push_subscription_not_found');
    },
  };
}

export type PreferencesService = ReturnType<typeof createPreferencesService>;
