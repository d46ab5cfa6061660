import { ConfigError } from '../platform/config.ts';
import { parseAllowList } from '../platform/http/outbound.ts';
import type { Channel } from './api.ts';

type Env = Readonly<Record<string, string | undefined>>;

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
}

/** Settings from the environment: NOTIFY_LIMIT_PUSH_PER_HOUR, NOTIFY_LIMIT_SMS_PER_DAY, NOTIFY_LIMIT_EMAIL_PER_DAY, ... */
export function loadNotifySettings(env: Env): NotifySettings {
  return {
    limits: {
      push: { points: int(env, 'NOTIFY_LIMIT_PUSH_PER_HOUR', 50, 1, 1_000_000), windowSec: 3600 },
      sms: { points: int(env, 'NOTIFY_LIMIT_SMS_PER_DAY', 5, 1, 1_000_000), windowSec: 86_400 },
      email: { points: int(env, 'NOTIFY_LIMIT_EMAIL_PER_DAY', 10, 1, 1_000_000), windowSec: 86_400 },
    },
    republishAfterMs: int(env, 'NOTIFY_REPUBLISH_AFTER_SECONDS', 30, 1, 3600) * 1000,
    realtimeConcurrency: int(env, 'NOTIFY_WORKER_CONCURRENCY', 128, 1, 1000),
    batchConcurrency: int(env, 'NOTIFY_BATCH_CONCURRENCY', 4, 1, 1000),
    workerLingerMs: int(env, 'NOTIFY_WORKER_LINGER_MS', 10, 0, 1000),
    retryDelaysMs: delays(env, 'NOTIFY_RETRY_DELAYS_MS', [60_000, 300_000, 1_800_000, 7_200_000]),
    outboundAllow: readOutboundAllow(env),
    maxPushSubscriptions: MAX_PUSH_SUBSCRIPTIONS,
  };
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
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
