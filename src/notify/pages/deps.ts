import type { Channel } from '../api.ts';
import type { AnyDb } from '../templates/repository.ts';

/**
 * What the pages need from the delivery core, as plain functions so the lead can wire them to
 * the core's service (and tests to fakes). Shapes follow the JSON API (snake_case, ISO strings).
 */
export interface NotificationAttemptView {
  attempt: number;
  at: string;
  /** e.g. sent, failed, unavailable (circuit open), permanent_failure. */
  outcome: string;
  provider?: string | null;
  error?: string | null;
}

export interface ChannelStatusView {
  channel: Channel;
  /** queued, sending, sent, delivered, failed, dead_lettered, skipped, rate_limited, scheduled. */
  status: string;
  reason?: string | null;
  created_at: string;
  sent_at?: string | null;
  delivered_at?: string | null;
  provider?: string | null;
  provider_message_id?: string | null;
  next_attempt_at?: string | null;
  attempts?: NotificationAttemptView[];
}

/** GET /api/notifications/{id} */
export interface NotificationView {
  id: string;
  user_id: string;
  type: string;
  priority?: string;
  created_at: string;
  channels: ChannelStatusView[];
}

export interface DeadLetterView {
  id: string;
  notification_id: string;
  user_id: string;
  type: string;
  channel: Channel;
  attempts: number;
  error?: string | null;
  dead_lettered_at: string;
}

/** GET /api/users/{id}/notification-preferences */
export interface PreferencesView {
  user_id: string;
  push_enabled: boolean;
  sms_enabled: boolean;
  email_enabled: boolean;
  quiet_hours_start: string | null;
  quiet_hours_end: string | null;
  email?: string | null;
  phone?: string | null;
  timezone?: string | null;
}

export type PreferencesPatch = Partial<Omit<PreferencesView, 'user_id'>>;

export interface NotifyPagesDeps {
  /** The dev inbox table (notify_inbox) lives in this database. */
  db: AnyDb;
  getNotification(id: string): Promise<NotificationView | undefined>;
  listDeadLetters(): Promise<DeadLetterView[]>;
  /** Throws an AppError (404, 409) when the item cannot be re-driven. */
  redrive(id: string): Promise<void>;
  getPreferences(userId: string): Promise<PreferencesView | undefined>;
  /** The no-JavaScript form posts here; the page's client module PATCHes the JSON API instead. */
  updatePreferences(userId: string, patch: PreferencesPatch): Promise<PreferencesView>;
}
