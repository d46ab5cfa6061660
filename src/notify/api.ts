/**
 * The notification service's public interface: what other modules (booking) call in-process,
 * and the shape of `POST /api/notifications`. Other modules import types from this file only.
 */
/** `in_app`: the user's feed (feed/README section in README.md), stored here and shown live. */
export const CHANNELS = ['push', 'sms', 'email', 'in_app'] as const;
export type Channel = (typeof CHANNELS)[number];
export const isChannel = (name: string): name is Channel => (CHANNELS as readonly string[]).includes(name);

export type Priority = 'critical' | 'high' | 'normal' | 'low';

export interface NotificationRequest {
  /** Makes the request idempotent for 24 h (like an Idempotency-Key). */
  id?: string;
  user_id: string;
  /** A known type with templates, e.g. `booking_confirmed`. */
  type: string;
  channels: Channel[];
  /** Template variables. */
  data: Record<string, unknown>;
  priority?: Priority;
  /**
   * When to send (RFC 3339): the channels wait `scheduled` until then. Now or later (a minute's
   * skew allowed), at most NOTIFY_SEND_AT_MAX (30 days) ahead.
   */
  send_at?: string;
}

/** `digested`: the type is digestible, the event waits in its window's one message (digests/). */
export type ChannelOutcome = 'queued' | 'scheduled' | 'skipped' | 'rate_limited' | 'digested';

/** What cancelling a notification did (`NotifyApi.cancel`, `DELETE /api/notifications/{id}`). */
export type CancelOutcome =
  /** Its pending channels are `cancelled` now (or were already). */
  | 'cancelled'
  /** Nothing was pending: a channel is being sent or was sent. */
  | 'not_cancellable'
  | 'not_found';

export interface NotificationAccepted {
  id: string;
  status: 'accepted' | 'rate_limited';
  channels: { channel: Channel; status: ChannelOutcome; reason?: string; retry_after?: number }[];
}

export interface NotifyApi {
  send(request: NotificationRequest, options?: { idempotencyKey?: string }): Promise<NotificationAccepted>;
  /**
   * Takes back a notification that is still pending: the one this user got under the client id
   * `id` (the request's `id`). Channels being sent or sent stay as they are.
   */
  cancel(request: { user_id: string; id: string }): Promise<CancelOutcome>;
  /** Sets a user's addresses (booking knows them from checkout), keeping their other preferences. */
  setContact(userId: string, contact: { email?: string; phone?: string }): Promise<void>;
}

/**
 * Variables any notification may carry, which the renderer fills in when `data` has none, so a
 * sender that never heard of them still passes the accept's check: `time_zone`, the IANA zone the
 * message's times are shown in (booking sends its venue's; else the recipient's zone), and
 * `currency`, the ISO 4217 code of its amounts (booking sends the booking's; else NOTIFY_CURRENCY).
 */
export const CONTEXT_VARIABLES = ['time_zone', 'currency'] as const;

/**
 * Types other services send, with the template variables each needs. The notification module
 * ships default templates for every channel of these.
 */
export const BOOKING_NOTIFICATION_TYPES = {
  booking_confirmed: [
    'booking_id',
    'movie_title',
    'theater_name',
    'show_time',
    'seats',
    'total_paid',
    'qr_code',
  ],
  booking_reminder: ['booking_id', 'movie_title', 'theater_name', 'show_time', 'hours_before'],
  booking_cancelled: ['booking_id', 'movie_title', 'show_time', 'refund_amount', 'reason'],
  refund_update: ['booking_id', 'refund_amount', 'refund_status'],
} as const;
