import { type Env, envReader } from '../platform/env.ts';

const DAY_MS = 86_400_000;

/**
 * The webhook event ids must outlive the gateway's retries: a retry is signed afresh (so the
 * 5-minute timestamp check lets it through) and only its id, still on record, stops it being
 * applied twice. Stripe retries for up to 3 days (Standard Webhooks senders such as Svix for
 * about a day), hence at least 3 days, and 7 by default for a gateway that retries longer.
 */
export const MIN_EVENT_RETENTION_MS = 3 * DAY_MS;

export interface PaymentsSettings {
  /** How long a webhook event id is remembered (PAYMENTS_EVENT_RETENTION, default 7d). */
  eventRetentionMs: number;
}

/** The module's own settings from `config.env`; a bad value stops start-up naming the variable. */
export function loadPaymentsSettings(env: Env): PaymentsSettings {
  const { duration } = envReader(env);
  return {
    eventRetentionMs: duration('PAYMENTS_EVENT_RETENTION', '7d', MIN_EVENT_RETENTION_MS, 365 * DAY_MS),
  };
}
