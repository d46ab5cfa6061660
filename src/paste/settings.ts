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
  return {
    anonymousCreates: read.rate('PASTE_RATE_ANON', '30/600', 'paste.create.anon'),
    keyCreates: read.rate('PASTE_RATE_KEY', '300/600', 'paste.create.key'),
    passwordAttempts: read.rate('PASTE_RATE_PASSWORD', '10/600', 'paste.password'),
    signups: read.rate('PASTE_RATE_SIGNUP', '10/3600', 'paste.signup'),
    viewFlushMs: read.int('PASTE_VIEW_FLUSH_MS', 5000, 100, 600_000),
    localCacheBytes: read.int('PASTE_LOCAL_CACHE_MB', 64, 1, 65_536) * 1024 * 1024,
  };
}
