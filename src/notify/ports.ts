import type { Channel } from './api.ts';
import type { InboxRow } from './tables.ts';

/**
 * The seams inside the notification module: the delivery core (accept → queue → worker)
 * renders through a `TemplateRenderer` and hands messages to a `Provider` per channel.
 * Providers (dev inbox, SMTP, Web Push, SMS over HTTP) and templates live behind these.
 */

export interface PushSubscription {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

/** Where a message goes; the core fills it from the user's preferences at send time. */
export interface Recipient {
  userId: string;
  email?: string;
  /** E.164. */
  phone?: string;
  pushSubscriptions?: PushSubscription[];
}

export interface RenderedMessage {
  /** E-mail subject, push title; absent for SMS. */
  subject?: string;
  /** Plain text: the SMS body, the push body, the e-mail's text alternative. */
  text: string;
  /** E-mail only: the HTML part. */
  html?: string;
  /** In-app only: where the feed item leads. */
  link?: string;
  /** E-mail only: files sent with it (the notification's `data.attachments`, see README). */
  attachments?: Attachment[];
}

/** A small text file sent with an e-mail, e.g. a booking's `ticket.ics`. */
export interface Attachment {
  filename: string;
  /** e.g. `text/calendar; charset=utf-8; method=PUBLISH` */
  content_type: string;
  content: string;
}

export interface OutboundMessage {
  /** `{notificationId}:{channel}`: the provider-side idempotency key (24 h dedup end to end). */
  deliveryId: string;
  notificationId: string;
  channel: Channel;
  type: string;
  recipient: Recipient;
  message: RenderedMessage;
}

export interface SendResult {
  /** The provider's id for the message, used to match delivery receipts. */
  providerMessageId: string;
  /** Name of the provider that took it (the fallback's name when the breaker routed there). */
  provider: string;
}

/**
 * Thrown by a provider. `permanent` errors (invalid address, unsubscribed push endpoint,
 * rejected content) are not retried; the others (timeouts, 5xx, 429) are.
 */
export class ProviderError extends Error {
  override name = 'ProviderError';
  readonly permanent: boolean;
  readonly code: string;
  constructor(code: string, message: string, options: { permanent: boolean }) {
    super(message);
    this.code = code;
    this.permanent = options.permanent;
  }
}

/** Thrown when a provider's circuit is open: the core re-schedules without spending an attempt. */
export class ProviderUnavailable extends Error {
  override name = 'ProviderUnavailable';
  readonly retryAfterMs: number;
  constructor(provider: string, retryAfterMs: number) {
    super(`${provider} circuit is open`);
    this.retryAfterMs = retryAfterMs;
  }
}

/** A message as the dev inbox keeps it (table `notify_inbox`). */
export type StoredMessage = InboxRow;

export interface Provider {
  readonly name: string;
  readonly channel: Channel;
  send(message: OutboundMessage): Promise<SendResult>;
  /**
   * Set by a provider that keeps its messages in this service's own database (the dev inbox). The
   * core then stores `row(message)` itself, in the statement that records the delivery, so the
   * message and its status commit together: stored exactly once however often its queue message
   * comes, and one statement for a whole batch instead of a store, a status write and a receipt each.
   */
  readonly local?: { row(message: OutboundMessage, at: Date): StoredMessage };
  close?(): Promise<void>;
}

/** One provider per channel as the core sees it: breaker and fallback already wrapped in. */
export interface ChannelSender {
  send(message: OutboundMessage): Promise<SendResult>;
  /**
   * The batch path of a local provider (see `Provider.local`): when the channel's primary provider
   * is local and its circuit closed, `commit` gets the messages' rows (and the provider's name) to
   * store together with their deliveries' status, and answers the delivery ids it stored; the
   * breaker counts the call like a send. Resolves to undefined when there is no such path right
   * now (not local, circuit open or half-open): the caller sends each message with `send`, which
   * falls back or fails fast.
   */
  sendLocal?(
    messages: OutboundMessage[],
    at: Date,
    commit: (rows: StoredMessage[], provider: string) => Promise<Set<string>>,
  ): Promise<Set<string> | undefined>;
  /** For /health/ready and /metrics: each breaker's state. */
  states(): { provider: string; channel: Channel; state: 'closed' | 'open' | 'half_open' }[];
  close(): Promise<void>;
}

export interface TemplateProblem {
  channel: Channel;
  /** `unknown_type` when no template exists for (type, channel); otherwise the missing variables. */
  reason: 'unknown_type' | 'missing_variables';
  missing?: string[];
}

export interface TemplateRenderer {
  /** Accept-time check: every channel has a template for the type and `data` has every variable it uses. */
  check(
    type: string,
    channels: readonly Channel[],
    data: Record<string, unknown>,
    locale?: string,
  ): Promise<TemplateProblem[]>;
  /** Strict rendering (an undefined variable is an error). Times/dates format in `timeZone`. */
  render(
    type: string,
    channel: Channel,
    data: Record<string, unknown>,
    options?: { locale?: string; timeZone?: string },
  ): Promise<RenderedMessage>;
  /** Known notification types (those with at least one template). */
  types(): Promise<string[]>;
}
