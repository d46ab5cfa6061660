import { ConfigError } from '../platform/config.ts';
import { type Env, envReader } from '../platform/env.ts';
import type { RatePolicy } from '../platform/ratelimit/index.ts';

export const MAX_CONTENT_BYTES = 10 * 1024 * 1024;
/** Expiry range: one minute to five years (the spec's retention). */
export const MIN_EXPIRES_IN = 60;
export const MAX_EXPIRES_IN = 5 * 365 * 86_400;

export interface PasteSettings {
  /** Creates per IP without an API key (DESIGN.md: 30 per 10 minutes). */
  anonymousCreates: RatePolicy;
  /** Creates per API key (DESIGN.md: 300 per 10 minutes). */
  keyCreates: RatePolicy;
  /** Wrong passwords per IP before further attempts are refused. */
  passwordAttempts: RatePolicy;
  /** Sign-ups per IP. */
  signups: RatePolicy;
  /** How often batched view counts are written. */
  viewFlushMs: number;
  /** Process-local cache of rendered responses, in bytes. */
  localCacheBytes: number;
}

/**
 * The service's own settings, from the environment the config was read from (`config.env`),
 * validated like the platform config: a bad value stops start-up with a message naming it.
 * Rates are `points/seconds`; an unset or empty variable takes its default.
 */
export function loadPasteSettings(env: Env): PasteSettings {
  const read = envReader(env);
  const rate = (name: string, fallback: string, policy: string) =>
    ratePolicy(name, read.string(name, fallback), policy);
  return {
    anonymousCreates: rate('PASTE_RATE_ANON', '30/600', 'paste.create.anon'),
    keyCreates: rate('PASTE_RATE_KEY', '300/600', 'paste.create.key'),
    passwordAttempts: rate('PASTE_RATE_PASSWORD', '10/600', 'paste.password'),
    signups: rate('PASTE_RATE_SIGNUP', '10/3600', 'paste.signup'),
    viewFlushMs: read.int('PASTE_VIEW_FLUSH_MS', 5000, 100, 600_000),
    localCacheBytes: read.int('PASTE_LOCAL_CACHE_MB', 64, 1, 65_536) * 1024 * 1024,
  };
}

function ratePolicy(name: string, raw: string, policy: string): RatePolicy {
  const match = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(raw);
  const points = Number(match?.[1]);
  const durationSec = Number(match?.[2]);
  if (!match || points < 1 || durationSec < 1 || points > 1e9 || durationSec > 86_400 * 30) {
    throw new ConfigError(`${name} must look like POINTS/SECONDS (e.g. 30/600), got "${raw}"`);
  }
  return { name: policy, points, durationSec };
}
