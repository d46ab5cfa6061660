import type { Db } from '../../platform/db/index.ts';
import type { Channel } from '../api.ts';

/**
 * What the pages need from the delivery core, as plain functions (module.ts wires them to the
 * core's service). The shapes are those of the core's JSON answers
 * (snake_case, ISO strings), so `getNotification: (id) => service.status(id)` fits as it is.
 */

/** One channel's delivery in `GET /api/notifications/{id}`. */
export interface ChannelStatusView {
  channel: Channel | string;
  /** queued, sending, sent, delivered, failed, dead_lettered, skipped, rate_limited, scheduled. */
  status: string;
  reason?: string | null;
  provider?: string | null;
  /** Attempts made so far. */
  attempts?: number;
  scheduled_for?: string | null;
  sent_at?: string | null;
  delivered_at?: string | null;
}

export interface AttemptView {
  channel: Channel | string;
  attempt: number;
  at: string;
  provider?: string | null;
  /** null when the attempt handed the message to the provider. */
  error?: string | null;
}

/** `GET /api/notifications/{id}` */
export interface NotificationView {
  id: string;
  user_id: string;
  type: string;
  priority?: string;
  lane?: string;
  created_at: string;
  sent_at?: string | null;
  delivered_at?: string | null;
  channels: ChannelStatusView[];
  attempts?: AttemptView[];
}

/** An item of `GET /api/notifications/dead-letters`. */
export interface DeadLetterView {
  /** What `redrive` takes. */
  id: string;
  topic?: string;
  notification_id: string;
  channel: Channel | string;
  user_id: string;
  attempts: number;
  error?: string | null;
  dead_at: string;
}

/** `GET /api/users/{id}/notifications`: newest first, each without its attempts. */
export interface HistoryView {
  notifications: NotificationView[];
  next_cursor: string | null;
}

/** `POST /api/notifications/dead-letters/{id}/redrive`: the delivery is queued again, not yet sent. */
export interface RedriveView {
  id: string;
  notification_id: string;
  channel: Channel | string;
  status: string;
}

/** `GET /api/users/{id}/notification-preferences` */
export interface PreferencesView {
  push_enabled: boolean;
  sms_enabled: boolean;
  email_enabled: boolean;
  in_app_enabled?: boolean;
  quiet_hours_start: string | null;
  quiet_hours_end: string | null;
  timezone?: string | null;
  email?: string | null;
  phone?: string | null;
  locale?: string | null;
}

export type PreferencesPatch = Partial<PreferencesView>;

export interface NotifyPagesDeps {
  /** The dev inbox table (notify_inbox) lives in this database. */
  db: Db;
  /** undefined, or a thrown 404 AppError, for an unknown id. */
  getNotification(id: string): Promise<NotificationView | undefined>;
  listDeadLetters(): Promise<DeadLetterView[]>;
  /** Throws an AppError (404, 409) when the item cannot be re-driven. */
  redrive(id: string): Promise<RedriveView>;
  /** A user's notifications (`GET /api/users/{id}/notifications`); a bad cursor throws 400. */
  history(userId: string, limit: number, cursor?: string): Promise<HistoryView>;
  /** The stored time zones of these users; users without preferences are left out (UTC). */
  timeZones(userIds: readonly string[]): Promise<Map<string, string>>;
  /** undefined, or a thrown 404 AppError, for an unknown user. */
  getPreferences(userId: string): Promise<PreferencesView | undefined>;
  /** The no-JavaScript form posts here; the page's client module PATCHes the JSON API instead. */
  updatePreferences(userId: string, patch: PreferencesPatch): Promise<unknown>;
}
