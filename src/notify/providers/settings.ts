import { createHmac } from 'node:crypto';
import { ConfigError } from '../../platform/config.ts';
import type { Channel } from '../api.ts';
import { generateVapidKeys } from './webpush.ts';

/** Provider settings read once from the environment (config.env); a bad value stops the start. */
export const PROVIDER_KINDS = {
  email: ['inbox', 'smtp'],
  push: ['inbox', 'webpush'],
  sms: ['inbox', 'http'],
} as const;
export type ProviderKind = 'inbox' | 'smtp' | 'webpush' | 'http';

export interface BreakerSettings {
  /** A provider call slower than this fails (transient) and counts against the breaker. */
  timeoutMs: number;
  /** Opens at this failure percentage within the rolling window… */
  errorThresholdPercentage: number;
  /** …once at least this many calls were made in it. */
  volumeThreshold: number;
  rollingWindowMs: number;
  /** Time open before one half-open probe is let through. */
  resetTimeoutMs: number;
}

export interface ProviderSettings {
  primary: Record<Channel, ProviderKind>;
  fallback: Partial<Record<Channel, ProviderKind>>;
  breaker: BreakerSettings;
  smtp?: { url: string; from: string };
  webPush?: { publicKey: string; privateKey: string; subject: string; ephemeral: boolean };
  sms?: { url: string; accountSid: string; authToken: string; from: string };
  /** Key of the receipts webhook signatures. */
  receiptSecret: string;
  /** The dev inbox reports "delivered" this long after storing a message (0 = never). */
  inboxReceiptDelayMs: number;
}

type Env = Readonly<Record<string, string | undefined>>;

export function readProviderSettings(env: Env, appSecret?: string): ProviderSettings {
  const production = env.NODE_ENV === 'production';
  const kind = (channel: Channel, name: string, fallback?: ProviderKind) => {
    const raw = env[name] ?? fallback;
    if (raw === undefined || raw === '') return undefined;
    const allowed: readonly string[] = PROVIDER_KINDS[channel];
    if (!allowed.includes(raw))
      throw new ConfigError(`${name} must be one of ${allowed.join('|')}, got "${raw}"`);
    return raw as ProviderKind;
  };
  const primary = {
    email: kind('email', 'NOTIFY_EMAIL_PROVIDER', 'inbox')!,
    push: kind('push', 'NOTIFY_PUSH_PROVIDER', 'inbox')!,
    sms: kind('sms', 'NOTIFY_SMS_PROVIDER', 'inbox')!,
  };
  const fallback: ProviderSettings['fallback'] = {};
  for (const channel of ['email', 'push', 'sms'] as const) {
    const value = kind(channel, `NOTIFY_${channel.toUpperCase()}_FALLBACK`);
    if (value && value === primary[channel]) {
      throw new ConfigError(`NOTIFY_${channel.toUpperCase()}_FALLBACK must differ from the primary provider`);
    }
    if (value) fallback[channel] = value;
  }
  const uses = (k: ProviderKind) => Object.values(primary).includes(k) || Object.values(fallback).includes(k);
  const required = (name: string) => {
    const value = env[name];
    if (!value) throw new ConfigError(`${name} is required by the configured notification provider`);
    return value;
  };
  const secret = appSecret ?? env.APP_SECRET ?? 'dev-secret-change-me-in-production';
  return {
    primary,
    fallback,
    breaker: {
      timeoutMs: int(env, 'NOTIFY_BREAKER_TIMEOUT_MS', 10_000, 10, 120_000),
      errorThresholdPercentage: int(env, 'NOTIFY_BREAKER_ERROR_PERCENT', 50, 1, 100),
      volumeThreshold: int(env, 'NOTIFY_BREAKER_VOLUME', 10, 1, 10_000),
      rollingWindowMs: int(env, 'NOTIFY_BREAKER_WINDOW_MS', 10_000, 100, 600_000),
      resetTimeoutMs: int(env, 'NOTIFY_BREAKER_RESET_MS', 30_000, 10, 3_600_000),
    },
    smtp: uses('smtp')
      ? { url: required('NOTIFY_SMTP_URL'), from: required('NOTIFY_EMAIL_FROM') }
      : undefined,
    webPush: uses('webpush') ? vapid(env, production) : undefined,
    sms: uses('http')
      ? {
          url: required('NOTIFY_SMS_URL').replace(/\/$/, ''),
          accountSid: required('NOTIFY_SMS_ACCOUNT_SID'),
          authToken: required('NOTIFY_SMS_AUTH_TOKEN'),
          from: required('NOTIFY_SMS_FROM'),
        }
      : undefined,
    receiptSecret:
      env.NOTIFY_RECEIPT_SECRET || createHmac('sha256', secret).update('notify.receipts').digest('base64url'),
    inboxReceiptDelayMs: int(env, 'NOTIFY_INBOX_RECEIPT_DELAY_MS', 1000, 0, 3_600_000),
  };
}

function vapid(env: Env, production: boolean): ProviderSettings['webPush'] {
  const { NOTIFY_VAPID_PUBLIC_KEY: publicKey, NOTIFY_VAPID_PRIVATE_KEY: privateKey } = env;
  const subject = env.NOTIFY_VAPID_SUBJECT ?? 'mailto:notifications@example.invalid';
  if (publicKey && privateKey) return { publicKey, privateKey, subject, ephemeral: false };
  // Subscriptions are bound to the public key: an ephemeral pair breaks them at every restart.
  if (production)
    throw new ConfigError('NOTIFY_VAPID_PUBLIC_KEY and NOTIFY_VAPID_PRIVATE_KEY are required in production');
  // One pair per process, so the senders and the key route (what browsers subscribe with) agree.
  processVapid ??= generateVapidKeys();
  return { ...processVapid, subject, ephemeral: true };
}

let processVapid: { publicKey: string; privateKey: string } | undefined;

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}
