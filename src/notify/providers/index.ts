import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../platform/clock.ts';
import type { Db } from '../../platform/db/index.ts';
import { createOutboundGuard, type OutboundGuard } from '../../platform/http/outbound.ts';
import type { HealthCheck, PlatformDeps } from '../../platform/module.ts';
import type { Metrics } from '../../platform/observability/metrics.ts';
import { CHANNELS, type Channel } from '../api.ts';
import { createFeedRepository } from '../feed/repository.ts';
import type { ChannelSender, OutboundMessage, Provider, SendResult } from '../ports.ts';
import { unsubscribeUrl } from '../preferences/unsubscribe.ts';
import {
  type ProviderKind,
  type ProviderSettings,
  readMarketingTypes,
  readOutboundAllow,
  readProviderSettings,
} from '../settings.ts';
import { createChannelSender } from './breaker.ts';
import { createFeedProvider } from './feed.ts';
import { createInboxProvider } from './inbox.ts';
import { createSmsHttpProvider } from './sms-http.ts';
import { createSmtpProvider } from './smtp.ts';
import { createWebPushProvider, type SubscriptionGone } from './webpush.ts';

export { readProviderSettings } from '../settings.ts';
export { INBOX_RETENTION_MS, inboxRepository, inboxRetention } from './inbox.ts';
export { receiptRequest, signReceipt } from './receipts.ts';
export { type ProviderRouteDeps, providerRoutes } from './routes.ts';

/**
 * What a receipt did: marked its message delivered, found it already past `sent`, or found no
 * message with that id (yet: a carrier may report before the send is recorded).
 */
export type ReceiptOutcome = 'applied' | 'already' | 'unknown';
/**
 * A delivery receipt: the core sets delivered_at of the delivery that got this provider id, and
 * says what it did (nothing returned: applied).
 */
export type OnReceipt = (
  providerMessageId: string,
  deliveredAt: Date,
) => ReceiptOutcome | undefined | Promise<ReceiptOutcome | undefined>;

export interface ChannelSendersOptions {
  /** `config.env`: NOTIFY_* provider variables (README.md lists them). */
  env: Readonly<Record<string, string | undefined>>;
  /** `config.secret`: the receipts key derives from it unless NOTIFY_RECEIPT_SECRET is set. */
  secret?: string;
  /** `config.baseUrl`: the one-click unsubscribe links of bulk e-mail point there. */
  baseUrl?: string;
  db: Db;
  /** Hot statements as named prepared statements (PostgreSQL, not PGlite): platform/db/prepared.ts. */
  prepare?: boolean;
  clock: Clock;
  metrics: Metrics;
  log: Pick<FastifyBaseLogger, 'warn' | 'error' | 'info'>;
  /** Receipts the dev inbox emits itself (the webhook route takes the others). */
  onReceipt?: OnReceipt;
  /** A push service said a subscription is gone (404/410): delete it. */
  onSubscriptionGone?: SubscriptionGone;
  /** The guard push sends go through (default: one from `OUTBOUND_ALLOW_HOSTS` in `env`). */
  outbound?: OutboundGuard;
  /** Tells the live feed streams of every process that a user's feed has a new item (feed/live.ts). */
  announceFeed?: (userId: string, seq: string) => Promise<void>;
}

/** The module's platform deps work too: `createChannelSenders({ ...deps, onReceipt, onSubscriptionGone })`. */
export type PlatformSendersOptions = PlatformDeps &
  Pick<ChannelSendersOptions, 'onReceipt' | 'onSubscriptionGone' | 'outbound' | 'announceFeed'>;

function normalize(options: ChannelSendersOptions | PlatformSendersOptions): ChannelSendersOptions {
  if (!('config' in options)) return options;
  return {
    env: options.config.env,
    secret: options.config.secret,
    baseUrl: options.config.baseUrl,
    db: options.database.db,
    prepare: options.database.kind === 'postgres',
    clock: options.clock,
    metrics: options.metrics,
    log: options.log,
    onReceipt: options.onReceipt,
    onSubscriptionGone: options.onSubscriptionGone,
    outbound: options.outbound,
    announceFeed: options.announceFeed,
  };
}

/**
 * One ChannelSender per channel, providers chosen once from config: NOTIFY_{EMAIL,PUSH,SMS}_PROVIDER
 * (default `inbox`) and an optional NOTIFY_{CHANNEL}_FALLBACK, each behind its own circuit breaker;
 * in-app always writes the feed (`feed`).
 */
export function createChannelSenders(
  given: ChannelSendersOptions | PlatformSendersOptions,
): Record<Channel, ChannelSender> {
  const options = normalize(given);
  const settings = readProviderSettings(options.env, options.secret);
  const timers = new Set<NodeJS.Timeout>();
  const build = (channel: Channel, kind: ProviderKind): Provider =>
    buildProvider(channel, kind, settings, options, timers);
  const senders = Object.fromEntries(
    CHANNELS.map((channel) => {
      const fallbackKind = settings.fallback[channel];
      const sender = createChannelSender({
        channel,
        primary: build(channel, settings.primary[channel]),
        fallback: fallbackKind ? build(channel, fallbackKind) : undefined,
        breaker: settings.breaker,
        metrics: options.metrics,
        onStateChange: (provider, ch, state) =>
          options.log[state === 'closed' ? 'info' : 'warn'](
            { provider, channel: ch, state },
            'notification provider circuit',
          ),
      });
      return [channel, sender];
    }),
  ) as Record<Channel, ChannelSender>;
  // The inbox's pending receipts go with the first close (the core closes every channel).
  const closeTimers = () => {
    for (const timer of timers) clearTimeout(timer);
    timers.clear();
  };
  for (const channel of CHANNELS) {
    const close = senders[channel].close;
    senders[channel].close = async () => {
      closeTimers();
      await close();
    };
  }
  return senders;
}

/**
 * Readiness checks for `/health/ready`: one per channel. An open circuit is `degraded`, not `down`:
 * the API still accepts and queues, and the worker re-schedules until the probe closes it.
 */
export function channelHealth(senders: Record<Channel, ChannelSender>): Record<string, HealthCheck> {
  return Object.fromEntries(
    CHANNELS.map((channel) => {
      const circuits = senders[channel].states();
      const allClosed = circuits.every((circuit) => circuit.state === 'closed');
      const check: HealthCheck = {
        status: allClosed ? 'ok' : 'degraded',
        circuits: Object.fromEntries(circuits.map((circuit) => [circuit.provider, circuit.state])),
      };
      return [`notify_${channel}`, check];
    }),
  );
}

function buildProvider(
  channel: Channel,
  kind: ProviderKind,
  settings: ProviderSettings,
  options: ChannelSendersOptions,
  timers: Set<NodeJS.Timeout>,
): Provider {
  switch (kind) {
    case 'smtp':
      return createSmtpProvider({
        ...settings.smtp!,
        timeoutMs: settings.breaker.timeoutMs,
        listUnsubscribe: listUnsubscribe(settings, options),
      });
    case 'http':
      return createSmsHttpProvider({ ...settings.sms!, timeoutMs: settings.breaker.timeoutMs });
    case 'webpush': {
      const vapid = settings.webPush!;
      if (vapid.ephemeral) {
        options.log.warn(
          { publicKey: vapid.publicKey },
          'NOTIFY_VAPID_PUBLIC_KEY/PRIVATE_KEY unset: using an ephemeral VAPID pair; push subscriptions break at restart',
        );
      }
      const outbound = options.outbound ?? createOutboundGuard({ allow: readOutboundAllow(options.env) });
      return createWebPushProvider(
        { ...vapid, timeoutMs: settings.breaker.timeoutMs, outbound },
        options.onSubscriptionGone,
      );
    }
    case 'feed':
      return createFeedProvider({
        repo: createFeedRepository(options.db),
        clock: options.clock,
        announce: options.announceFeed,
      });
    case 'inbox':
      return createInboxProvider(channel, {
        db: options.db,
        prepare: options.prepare,
        clock: options.clock,
        onStored: inboxReceipts(settings, options, timers),
      });
  }
}

/**
 * The dev inbox reports delivery a moment later, after the core has recorded the send. Receipts
 * of messages stored within a quarter of the delay (at most 100 ms) of each other share one timer,
 * so they reach the core together and its receipt statement is shared by all of them (group
 * commit) rather than by the few stored in the same statement: each fires between `delay` and
 * `delay` + that window after its message was stored.
 */
function inboxReceipts(
  settings: ProviderSettings,
  options: ChannelSendersOptions,
  timers: Set<NodeJS.Timeout>,
) {
  const { onReceipt } = options;
  const delay = settings.inboxReceiptDelayMs;
  if (!onReceipt || delay === 0) return undefined;
  const span = Math.min(100, delay / 4);
  let open: { results: SendResult[]; since: number; timer?: NodeJS.Timeout } | undefined;
  const report = async (result: SendResult) => {
    try {
      await onReceipt(result.providerMessageId, options.clock.now());
    } catch (error) {
      options.log.error({ err: error, providerMessageId: result.providerMessageId }, 'inbox receipt failed');
    }
  };
  return (result: SendResult) => {
    const now = performance.now();
    // (A bucket whose timer was cleared by close() takes no more.)
    if (open?.timer && timers.has(open.timer) && now - open.since < span) {
      open.results.push(result);
      return;
    }
    const bucket: NonNullable<typeof open> = { results: [result], since: now };
    open = bucket;
    bucket.timer = setTimeout(() => {
      timers.delete(bucket.timer!);
      for (const stored of bucket.results) void report(stored);
    }, delay + span);
    bucket.timer.unref();
    timers.add(bucket.timer);
  };
}

/**
 * The List-Unsubscribe URIs of a bulk type's e-mail (NOTIFY_MARKETING_TYPES): the signed one-click
 * link (preferences/unsubscribe.ts) and NOTIFY_UNSUBSCRIBE_MAILTO when set. Transactional types get none.
 */
function listUnsubscribe(settings: ProviderSettings, options: ChannelSendersOptions) {
  const marketing = new Set(readMarketingTypes(options.env));
  const baseUrl = options.baseUrl ?? 'http://localhost:3000';
  const mailto = settings.smtp?.unsubscribeMailto;
  return (message: OutboundMessage): string[] | undefined => {
    if (!marketing.has(message.type)) return undefined;
    const uris = [unsubscribeUrl(baseUrl, settings.appSecret, message.recipient.userId)];
    if (mailto) uris.push(`mailto:${mailto}?subject=unsubscribe`);
    return uris;
  };
}
