import type { Generated, Kysely, Selectable } from 'kysely';
import type { Channel, ChannelOutcome, NotificationAccepted, Priority } from './api.ts';

/**
 * The notify service's tables (migrations/), as Kysely sees them. Type aliases, not interfaces:
 * Kysely needs each table to be indexable by column name.
 */
export type NotifyTables = {
  notify_preferences: PreferencesTable;
  notify_push_subscriptions: PushSubscriptionsTable;
  notifications: NotificationsTable;
  notification_deliveries: DeliveriesTable;
  notification_attempts: AttemptsTable;
  notify_templates: TemplatesTable;
  notify_inbox: InboxTable;
  notify_digest_types: DigestTypesTable;
  notify_digests: DigestsTable;
  notify_digest_items: DigestItemsTable;
  notify_feed: FeedTable;
};

export type NotifyDb = Kysely<NotifyTables>;

export type DeliveryStatus =
  | ChannelOutcome
  | 'sending'
  | 'sent'
  | 'delivered'
  | 'failed'
  | 'dead_lettered'
  /** Taken back by its sender while still pending (migration 005). */
  | 'cancelled';
export type Lane = 'realtime' | 'batch';

export type PreferencesTable = {
  user_id: string;
  push_enabled: Generated<boolean>;
  sms_enabled: Generated<boolean>;
  email_enabled: Generated<boolean>;
  /** The in-app feed (migration 300). */
  in_app_enabled: Generated<boolean>;
  /** Bulk types' e-mail (NOTIFY_MARKETING_TYPES); turned off by the one-click unsubscribe (migration 004). */
  email_marketing_enabled: Generated<boolean>;
  /** A `time`: `HH:MM:SS` as PostgreSQL prints it (selected `::text`). */
  quiet_hours_start: string | null;
  quiet_hours_end: string | null;
  timezone: Generated<string>;
  email: string | null;
  phone: string | null;
  locale: string | null;
  updated_at: Date;
  /** How many times the row was written (migration 003); not part of the preferences a user sees. */
  version: Generated<number>;
};

export type PushSubscriptionsTable = {
  user_id: string;
  endpoint: string;
  p256dh: string;
  auth: string;
  created_at: Date;
};

export type NotificationsTable = {
  id: string;
  user_id: string;
  /** The client's idempotency key (body `id` or `Idempotency-Key`), unique per user while set. */
  client_id: string | null;
  request_hash: string | null;
  type: string;
  priority: Priority;
  lane: Lane;
  batch_id: string | null;
  data: Record<string, unknown>;
  /** The 202 answer, given again to a replay. */
  accepted: NotificationAccepted;
  created_at: Date;
  /**
   * Who sent it (migration 007): `service:{name}` or `admin:{name}` over HTTP (platform/auth
   * `callerId`), `in-process` through NotifyApi.send; null before 007 and for a digest's own
   * message. Only its sender (or an admin) may cancel it.
   */
  sent_by: string | null;
};

export type DeliveriesTable = {
  notification_id: string;
  channel: Channel;
  user_id: string;
  lane: Lane;
  status: DeliveryStatus;
  reason: string | null;
  content: string | null;
  provider: string | null;
  provider_message_id: string | null;
  attempts: Generated<number>;
  /** `attempts` when the delivery was last redriven: its retry schedule counts the tries since. */
  attempt_base: Generated<number>;
  created_at: Date;
  scheduled_for: Date | null;
  /** Null until a worker claimed the delivery or the outbox sweep published it (notifications/outbox.ts). */
  published_at: Date | null;
  sent_at: Date | null;
  delivered_at: Date | null;
  updated_at: Date;
};

export type AttemptsTable = {
  id: Generated<string>;
  notification_id: string;
  channel: Channel;
  attempt: number;
  at: Date;
  error: string | null;
  provider: string | null;
};

export type TemplatesTable = {
  /** `{type}.{channel}[.{locale}]` (templates/ids.ts). */
  id: string;
  type: string;
  channel: Channel;
  locale: string | null;
  subject: Generated<string>;
  body: string;
  html_body: string | null;
  /** In-app templates only: where the feed item leads (migration 300). */
  link: string | null;
  updated_at: Generated<Date>;
};

/** What the dev inbox "sent": one row per delivery id (providers/inbox.ts). */
export type InboxTable = {
  id: string;
  delivery_id: string;
  notification_id: string;
  channel: Channel;
  type: string;
  user_id: string;
  address: string | null;
  subject: string | null;
  text: string;
  html: string | null;
  provider_message_id: string;
  created_at: Date;
};

/** A digestible type's window (migration 006): `every_seconds` or `daily_at` (`HH:MM`, the user's zone). */
export type DigestTypesTable = {
  type: string;
  every_seconds: number | null;
  daily_at: string | null;
  updated_at: Date;
};

/** One window of events for a user, type and channel: open until `flush_at`, then one message. */
export type DigestsTable = {
  id: string;
  user_id: string;
  type: string;
  channel: Channel;
  status: 'open' | 'closed' | 'sent';
  priority: Priority;
  events: Generated<number>;
  flush_at: Date;
  created_at: Date;
  closed_at: Date | null;
  /** The digest message (a notification with the events as `items`), once stored. */
  notification_id: string | null;
};

export type DigestItemsTable = {
  digest_id: string;
  /** The event's own notification; an item whose notification was never stored is left out. */
  notification_id: string;
  data: Record<string, unknown>;
  created_at: Date;
};

/**
 * The in-app channel's feed: one row per notification (its one in-app delivery), so a redelivered
 * message stores nothing more. `seq` orders a user's items (keyset pages, SSE event ids).
 */
export type FeedTable = {
  seq: Generated<string>;
  notification_id: string;
  user_id: string;
  type: string;
  title: string;
  body: string;
  link: string | null;
  created_at: Date;
  seen_at: Generated<Date | null>;
  read_at: Generated<Date | null>;
  archived_at: Generated<Date | null>;
};

export type PreferencesRow = Omit<Selectable<PreferencesTable>, 'updated_at' | 'version'> & {
  /** Read where a send compares it with the accept's snapshot (notifications/outbox.ts). */
  version?: number;
};
export type NotificationRow = Selectable<NotificationsTable>;
export type DeliveryRow = Omit<Selectable<DeliveriesTable>, 'updated_at' | 'attempt_base'>;
export type AttemptRow = Omit<Selectable<AttemptsTable>, 'id'>;
export type TemplateRow = Selectable<TemplatesTable>;
export type InboxRow = Selectable<InboxTable>;
export type FeedRow = Selectable<FeedTable>;
