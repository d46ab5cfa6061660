import { createHmac, createPrivateKey } from 'node:crypto';
import { ConfigError } from '../platform/config.ts';
import { type Env, envReader, pattern } from '../platform/env.ts';
import { parseAllowList } from '../platform/http/outbound.ts';
import { BOOKING_NOTIFICATION_TYPES, type Channel } from './api.ts';
import { generateVapidKeys } from './providers/webpush.ts';

export interface ChannelLimit {
  points: number;
  /** Fixed window length; windows are aligned to the epoch (UTC hours / days). */
  windowSec: number;
}

export interface NotifySettings {
  limits: Record<Channel, ChannelLimit>;
  /** A `queued` delivery the queue has not confirmed after this long is published again. */
  republishAfterMs: number;
  realtimeConcurrency: number;
  batchConcurrency: number;
  /** Under load, how long a worker's batch of deliveries waits for more before it is written. */
  workerLingerMs: number;
  /** Spec: attempts immediate, +1 min, +5 min, +30 min, +2 h (NOTIFY_RETRY_DELAYS_MS=60000,300000,... for tests). */
  retryDelaysMs: number[];
  /** Hosts and CIDRs a push endpoint may name although they are not public (OUTBOUND_ALLOW_HOSTS; tests). */
  outboundAllow: string[];
  /** Push subscriptions one user may hold. */
  maxPushSubscriptions: number;
  /**
   * How long a notification is kept with its deliveries and attempts once all of them are final
   * (NOTIFY_RETENTION, default 30d; notifications/retention.ts). Down to a minute for tests and
   * soak runs: below 24 h it also shortens the accept's deduplication window (the stored record
   * is what a repeated client id is compared with).
   */
  retentionMs: number;
  /** How far ahead `send_at` may be (NOTIFY_SEND_AT_MAX, default 30d). */
  sendAtMaxMs: number;
  /** ISO 4217 code of amounts whose sender names no `currency` (NOTIFY_CURRENCY, default INR). */
  currency: string;
  /**
   * Bulk (non-transactional) types: their e-mails carry List-Unsubscribe (one click, RFC 8058) and
   * a user's `email_marketing_enabled: false` skips them (NOTIFY_MARKETING_TYPES, default `marketing`).
   */
  marketingTypes: string[];
  /**
   * How often a live feed stream reads the feed although nothing was announced (NOTIFY_FEED_POLL_MS,
   * default 5000): the bound on how late an item whose announcement was lost shows live.
   */
  feedPollMs: number;
  /**
   * How long an in-app feed item is kept, read or not (NOTIFY_FEED_RETENTION, default 90d;
   * feed/retention.ts): a feed is what happened lately, and an item unread for three months is
   * not news any more.
   */
  feedRetentionMs: number;
  /**
   * How long an item is kept once archived (NOTIFY_FEED_ARCHIVED_RETENTION, default 30d from the
   * archiving): archiving is "done with it", and the archive view is for taking one back soon after.
   */
  feedArchivedRetentionMs: number;
}

/** Settings from the environment: NOTIFY_LIMIT_PUSH_PER_HOUR, NOTIFY_LIMIT_SMS_PER_DAY, NOTIFY_LIMIT_EMAIL_PER_DAY, ... */
export function loadNotifySettings(env: Env): NotifySettings {
  const { int, duration } = envReader(env);
  return {
    limits: {
      push: { points: int('NOTIFY_LIMIT_PUSH_PER_HOUR', 50, 1, 1_000_000), windowSec: 3600 },
      sms: { points: int('NOTIFY_LIMIT_SMS_PER_DAY', 5, 1, 1_000_000), windowSec: 86_400 },
      email: { points: int('NOTIFY_LIMIT_EMAIL_PER_DAY', 10, 1, 1_000_000), windowSec: 86_400 },
      in_app: { points: int('NOTIFY_LIMIT_IN_APP_PER_HOUR', 100, 1, 1_000_000), windowSec: 3600 },
    },
    republishAfterMs: int('NOTIFY_REPUBLISH_AFTER_SECONDS', 30, 1, 3600) * 1000,
    realtimeConcurrency: int('NOTIFY_WORKER_CONCURRENCY', 128, 1, 1000),
    batchConcurrency: int('NOTIFY_BATCH_CONCURRENCY', 4, 1, 1000),
    workerLingerMs: int('NOTIFY_WORKER_LINGER_MS', 10, 0, 1000),
    retryDelaysMs: delays(env, 'NOTIFY_RETRY_DELAYS_MS', [60_000, 300_000, 1_800_000, 7_200_000]),
    outboundAllow: readOutboundAllow(env),
    maxPushSubscriptions: MAX_PUSH_SUBSCRIPTIONS,
    retentionMs: duration('NOTIFY_RETENTION', '30d', 60_000, 3650 * 86_400_000),
    sendAtMaxMs: duration('NOTIFY_SEND_AT_MAX', '30d', 60_000, 3650 * 86_400_000),
    feedPollMs: int('NOTIFY_FEED_POLL_MS', 5000, 100, 600_000),
    feedRetentionMs: duration('NOTIFY_FEED_RETENTION', '90d', 60_000, 3650 * 86_400_000),
    feedArchivedRetentionMs: duration('NOTIFY_FEED_ARCHIVED_RETENTION', '30d', 60_000, 3650 * 86_400_000),
    currency: pattern('NOTIFY_CURRENCY', envReader(env).string('NOTIFY_CURRENCY', 'INR'), /^[A-Z]{3}$/),
    marketingTypes: readMarketingTypes(env),
  };
}

/**
 * Types that are never bulk mail: what booking sends (a confirmation, a refund) and security
 * alerts must reach the user whatever they unsubscribed from, and carry no unsubscribe link.
 */
export const TRANSACTIONAL_TYPES: readonly string[] = [
  ...Object.keys(BOOKING_NOTIFICATION_TYPES),
  'security_alert',
];

/** NOTIFY_MARKETING_TYPES: comma-separated notification types that are bulk mail. */
export function readMarketingTypes(env: Env): string[] {
  const name = 'NOTIFY_MARKETING_TYPES';
  const types = [
    ...new Set(
      envReader(env)
        .string(name, 'marketing')
        .split(',')
        .map((type) => type.trim())
        .filter(Boolean),
    ),
  ];
  for (const type of types) {
    if (!/^[a-z][a-z0-9_]{0,19}$/.test(type))
      throw new ConfigError(`${name} must list notification types (a-z, 0-9, _), got "${type}"`);
    if (TRANSACTIONAL_TYPES.includes(type))
      throw new ConfigError(`${name} must not name the transactional type "${type}"`);
  }
  return types;
}

/** A user's browsers and devices; more is a script filling the table or fanning out sends. */
export const MAX_PUSH_SUBSCRIPTIONS = 10;

/** OUTBOUND_ALLOW_HOSTS: comma-separated hosts or CIDRs that client-given URLs may reach although not public. */
export function readOutboundAllow(env: Env): string[] {
  const name = 'OUTBOUND_ALLOW_HOSTS';
  const entries = (env[name] ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  try {
    parseAllowList(entries);
  } catch (error) {
    throw new ConfigError(`${name}: ${(error as Error).message}`);
  }
  return entries;
}

function delays(env: Env, name: string, fallback: number[]): number[] {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const values = raw.split(',').map((part) => Number(part.trim()));
  if (values.some((value) => !Number.isInteger(value) || value < 0 || value > 86_400_000)) {
    throw new ConfigError(`${name} must be comma-separated milliseconds, got "${raw}"`);
  }
  return values;
}

/** Provider settings read once from the environment (config.env); a bad value stops the start. */
export const PROVIDER_KINDS = {
  email: ['inbox', 'smtp'],
  push: ['inbox', 'webpush'],
  sms: ['inbox', 'http'],
  // The feed is this service's own table: there is nothing to choose (providers/feed.ts).
  in_app: ['feed'],
} as const;
export type ProviderKind = 'inbox' | 'smtp' | 'webpush' | 'http' | 'feed';

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
  smtp?: SmtpProviderSettings;
  webPush?: { publicKey: string; privateKey: string; subject: string; ephemeral: boolean };
  sms?: { url: string; accountSid: string; authToken: string; from: string };
  /** Key of the receipts webhook signatures. */
  receiptSecret: string;
  /** APP_SECRET: signs the one-click unsubscribe links (preferences/unsubscribe.ts). */
  appSecret: string;
  /** The dev inbox reports "delivered" this long after storing a message (0 = never). */
  inboxReceiptDelayMs: number;
}

export interface SmtpProviderSettings {
  url: string;
  from: string;
  /** EHLO name (NOTIFY_SMTP_NAME). */
  name?: string;
  /** NOTIFY_SMTP_DKIM_DOMAIN, _SELECTOR, _PRIVATE_KEY: all three or none. */
  dkim?: { domain: string; selector: string; privateKey: string };
  /** NOTIFY_UNSUBSCRIBE_MAILTO: an address whose mail your system turns into an unsubscribe. */
  unsubscribeMailto?: string;
}

const HOSTNAME =
  /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** SMTP's optional settings; a bad one stops the start naming its variable. */
function smtpSettings(
  optional: (name: string) => string | undefined,
  url: string,
  from: string,
): SmtpProviderSettings {
  const name = optional('NOTIFY_SMTP_NAME');
  if (name !== undefined) pattern('NOTIFY_SMTP_NAME', name, HOSTNAME);
  const dkimNames = ['NOTIFY_SMTP_DKIM_DOMAIN', 'NOTIFY_SMTP_DKIM_SELECTOR', 'NOTIFY_SMTP_DKIM_PRIVATE_KEY'];
  const given = dkimNames.filter((variable) => optional(variable) !== undefined);
  let dkim: SmtpProviderSettings['dkim'];
  if (given.length > 0) {
    const missing = dkimNames.find((variable) => optional(variable) === undefined);
    if (missing)
      throw new ConfigError(`${missing} is required when ${given.join(', ')} is set (DKIM signing)`);
    const domain = pattern('NOTIFY_SMTP_DKIM_DOMAIN', optional(dkimNames[0])!, HOSTNAME);
    const selector = pattern(
      'NOTIFY_SMTP_DKIM_SELECTOR',
      optional(dkimNames[1])!,
      /^[A-Za-z0-9]([A-Za-z0-9._-]{0,62})$/,
    );
    // A PEM in one environment line usually arrives with its line breaks written as \n.
    const privateKey = optional(dkimNames[2])!.replace(/\\n/g, '\n');
    try {
      const key = createPrivateKey(privateKey);
      if (key.asymmetricKeyType !== 'rsa') throw new Error(`an ${key.asymmetricKeyType} key`);
    } catch (error) {
      throw new ConfigError(
        `NOTIFY_SMTP_DKIM_PRIVATE_KEY must be an RSA private key in PEM (${(error as Error).message})`,
      );
    }
    dkim = { domain, selector, privateKey };
  }
  const mailto = optional('NOTIFY_UNSUBSCRIBE_MAILTO');
  if (mailto !== undefined)
    pattern('NOTIFY_UNSUBSCRIBE_MAILTO', mailto, /^[^\s@<>,]{1,64}@[^\s@<>,]{1,253}$/);
  return { url, from, name, dkim, unsubscribeMailto: mailto };
}

export function readProviderSettings(env: Env, appSecret?: string): ProviderSettings {
  const { int, optional } = envReader(env);
  const production = optional('NODE_ENV') === 'production';
  const kind = (channel: Channel, name: string, fallback?: ProviderKind) => {
    const raw = optional(name) ?? fallback;
    if (raw === undefined) return undefined;
    const allowed: readonly string[] = PROVIDER_KINDS[channel];
    if (!allowed.includes(raw))
      throw new ConfigError(`${name} must be one of ${allowed.join('|')}, got "${raw}"`);
    return raw as ProviderKind;
  };
  const primary = {
    email: kind('email', 'NOTIFY_EMAIL_PROVIDER', 'inbox')!,
    push: kind('push', 'NOTIFY_PUSH_PROVIDER', 'inbox')!,
    sms: kind('sms', 'NOTIFY_SMS_PROVIDER', 'inbox')!,
    in_app: 'feed' as const,
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
    const value = optional(name);
    if (!value) throw new ConfigError(`${name} is required by the configured notification provider`);
    return value;
  };
  const secret = appSecret ?? optional('APP_SECRET') ?? 'dev-secret-change-me-in-production';
  return {
    primary,
    fallback,
    breaker: {
      timeoutMs: int('NOTIFY_BREAKER_TIMEOUT_MS', 10_000, 10, 120_000),
      errorThresholdPercentage: int('NOTIFY_BREAKER_ERROR_PERCENT', 50, 1, 100),
      volumeThreshold: int('NOTIFY_BREAKER_VOLUME', 10, 1, 10_000),
      rollingWindowMs: int('NOTIFY_BREAKER_WINDOW_MS', 10_000, 100, 600_000),
      resetTimeoutMs: int('NOTIFY_BREAKER_RESET_MS', 30_000, 10, 3_600_000),
    },
    smtp: uses('smtp')
      ? smtpSettings(optional, required('NOTIFY_SMTP_URL'), required('NOTIFY_EMAIL_FROM'))
      : undefined,
    webPush: uses('webpush') ? vapid(optional, production) : undefined,
    sms: uses('http')
      ? {
          url: required('NOTIFY_SMS_URL').replace(/\/$/, ''),
          accountSid: required('NOTIFY_SMS_ACCOUNT_SID'),
          authToken: required('NOTIFY_SMS_AUTH_TOKEN'),
          from: required('NOTIFY_SMS_FROM'),
        }
      : undefined,
    appSecret: secret,
    receiptSecret:
      optional('NOTIFY_RECEIPT_SECRET') ||
      createHmac('sha256', secret).update('notify.receipts').digest('base64url'),
    inboxReceiptDelayMs: int('NOTIFY_INBOX_RECEIPT_DELAY_MS', 1000, 0, 3_600_000),
  };
}

function vapid(
  optional: (name: string) => string | undefined,
  production: boolean,
): ProviderSettings['webPush'] {
  const publicKey = optional('NOTIFY_VAPID_PUBLIC_KEY');
  const privateKey = optional('NOTIFY_VAPID_PRIVATE_KEY');
  const subject = optional('NOTIFY_VAPID_SUBJECT') ?? 'mailto:notifications@example.invalid';
  if (publicKey && privateKey) return { publicKey, privateKey, subject, ephemeral: false };
  // Subscriptions are bound to the public key: an ephemeral pair breaks them at every restart.
  if (production)
    throw new ConfigError('NOTIFY_VAPID_PUBLIC_KEY and NOTIFY_VAPID_PRIVATE_KEY are required in production');
  // One pair per process, so the senders and the key route (what browsers subscribe with) agree.
  processVapid ??= generateVapidKeys();
  return { ...processVapid, subject, ephemeral: true };
}

let processVapid: { publicKey: string; privateKey: string } | undefined;
