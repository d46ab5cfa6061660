import type { FastifyBaseLogger } from 'fastify';
import type { Counter } from 'prom-client';
import type { Clock } from '../../platform/clock.ts';
import { createGroup } from '../../platform/db/group.ts';
import { type Delivery, describeError, PermanentError, RetryLater } from '../../platform/queue/index.ts';
import type { Channel } from '../api.ts';
import type { DeliveryMessage } from '../notifications/outbox.ts';
import type { Claimed, NotifyRepository } from '../notifications/repository.ts';
import { type ChannelSender, ProviderError, ProviderUnavailable, type TemplateRenderer } from '../ports.ts';
import { enabled, hasAddress, toPreferences, unsubscribed } from '../preferences/service.ts';
import type { DeliveryStatus } from '../tables.ts';
import { createLocalDelivery, type Outcome, prepareSend, type Ready } from './local.ts';

/** Statuses a queue message may still act on; anything else was settled by an earlier copy. */
const OPEN: DeliveryStatus[] = ['queued', 'scheduled', 'sending'];

/** Wrapped so that a batch can answer before the sends of its slow providers end. */
type Pending = { outcome: Promise<Outcome> };

const isReady = (prepared: Ready | Outcome): prepared is Ready =>
  prepared !== undefined && !(prepared instanceof Error);

/**
 * The worker's handler for delivery messages. The queue gives at-least-once delivery and one
 * message per user key at a time; this makes the send effectively once: a settled delivery is
 * acknowledged without sending, and the provider gets `{notificationId}:{channel}` as its
 * idempotency key, so even a crash between the provider's answer and our `sent` write cannot make
 * the user see it twice.
 *
 * Messages the worker takes at the same time are handled together (group commit, as in
 * platform/db/group.ts): one claim statement reads them all, and the messages of a local provider
 * (the dev inbox) are stored with their status in one more — two statements for the batch where
 * each message had a claim, a store, a `sent` write and a receipt. A provider across the network
 * gets one call per message, and each message's outcome is its own: a slow or failing provider
 * delays only its own messages (and so its own users), never the rest of the batch.
 */
export function createDeliveryHandler(deps: {
  repo: NotifyRepository;
  templates: TemplateRenderer;
  senders: Record<Channel, ChannelSender>;
  clock: Clock;
  log: FastifyBaseLogger;
  /** The queue's delays before tries 2..N (NOTIFY_RETRY_DELAYS_MS): N tries in all. */
  retryDelaysMs: readonly number[];
  counter: Counter<'channel' | 'status'>;
  /** Under load, how long a batch of messages waits for more before it is written (createGroup's `lingerMs`). */
  batchLingerMs?: number;
  /** Bulk types (NOTIFY_MARKETING_TYPES): an unsubscribe since the accept still stops their e-mail. */
  marketingTypes?: readonly string[];
}) {
  const { repo, templates, senders, clock, log, counter } = deps;
  const marketing = new Set(deps.marketingTypes ?? []);

  const setStatus = (
    message: Delivery<DeliveryMessage>,
    fields: Parameters<NotifyRepository['updateDelivery']>[2],
  ) => {
    const { notificationId, channel } = message.payload;
    if (fields.status) counter.inc({ channel, status: fields.status });
    return repo.updateDelivery(notificationId, channel, fields, clock.now());
  };

  /** A failed send: what the queue should do, with the delivery's status and the attempt logged. */
  async function failed(message: Delivery<DeliveryMessage>, error: unknown, provider: string | null) {
    const { notificationId, channel } = message.payload;
    if (error instanceof ProviderUnavailable) {
      // The breaker is open: nothing was tried, so no attempt is spent.
      await setStatus(message, { status: 'queued', reason: 'provider_unavailable' });
      return new RetryLater(error.retryAfterMs, error.message);
    }
    const reason = error instanceof ProviderError ? `${error.code}: ${error.message}` : describeError(error);
    const ofSchedule = await repo.recordAttempt(notificationId, channel, {
      at: clock.now(),
      error: reason,
      provider,
    });
    if (error instanceof ProviderError && error.permanent) {
      await setStatus(message, { status: 'failed', reason });
      return new PermanentError(reason);
    }
    // The delivery's row counts its tries, the queue only those of the message it holds: a message
    // taken over mid-retry (its worker stopped, its partition handed to another) starts again at
    // the queue's attempt 1. Past a crash in the middle of a try the queue's count is the higher.
    const attempt = Math.max(message.attempt, ofSchedule);
    const last = attempt > deps.retryDelaysMs.length;
    await setStatus(message, { status: last ? 'dead_lettered' : 'queued', reason });
    if (attempt === message.attempt) return error instanceof Error ? error : new Error(String(error));
    // The row's count is ahead: the schedule goes on from it. RetryLater does not spend the queue's
    // attempt, so the row stays the one that counts for this message.
    return last ? new PermanentError(reason) : new RetryLater(deps.retryDelaysMs[attempt - 1], reason);
  }

  /** Sends one message through its channel's provider (with its breaker) and records the result. */
  async function sendOne({ message, outbound }: Ready): Promise<Outcome> {
    const { notificationId, channel } = message.payload;
    let provider: string | null = null;
    try {
      const result = await senders[channel].send(outbound);
      provider = result.provider;
      counter.inc({ channel, status: 'sent' });
      await repo.recordSent(notificationId, channel, {
        provider,
        providerMessageId: result.providerMessageId,
        content: outbound.message.text,
        sentAt: clock.now(),
      });
      return undefined;
    } catch (error) {
      return failed(message, error, provider);
    }
  }

  /** Checks, renders and builds the provider's message; an outcome when there is nothing to send. */
  async function prepare(
    message: Delivery<DeliveryMessage>,
    found: Claimed | undefined,
    now: Date,
  ): Promise<Ready | Outcome> {
    const { notificationId, channel } = message.payload;
    if (!found) {
      log.warn({ notificationId, channel }, 'queue message for an unknown delivery: dropped');
      return undefined;
    }
    const { delivery, notification } = found;
    if (!OPEN.includes(delivery.status)) return undefined;
    if (delivery.scheduled_for && delivery.scheduled_for > now) {
      return new RetryLater(delivery.scheduled_for.getTime() - now.getTime(), 'scheduled');
    }
    const prefs = toPreferences(found.prefs);
    // Checked again at send time: the user may have switched the channel off or removed the
    // address since the accept, which may also have read a cached copy (preferences/contacts-cache.ts).
    const refused = !enabled(prefs, channel)
      ? 'channel_disabled'
      : unsubscribed(prefs, channel, marketing.has(notification.type))
        ? 'unsubscribed'
        : !hasAddress(prefs, channel, found.subscriptions)
          ? 'no_address'
          : null;
    if (refused) {
      await setStatus(message, { status: 'skipped', reason: refused });
      return undefined;
    }
    counter.inc({ channel, status: 'sending' });
    try {
      return await prepareSend(templates, message, {
        type: notification.type,
        data: notification.data,
        userId: notification.user_id,
        email: prefs.email,
        phone: prefs.phone,
        locale: prefs.locale,
        timezone: prefs.timezone,
        pushSubscriptions: channel === 'push' ? found.subscriptions : undefined,
      });
    } catch (error) {
      return failed(
        message,
        new ProviderError('render_failed', describeError(error), { permanent: true }),
        null,
      );
    }
  }

  const { storeLocally, deliverFromSnapshots } = createLocalDelivery({
    repo,
    templates,
    senders,
    clock,
    counter,
    failed,
  });

  /**
   * The read path's local sends. When the provider does not take them, each goes through `send`,
   * which takes the fallback or fails fast; those outcomes are not awaited here.
   */
  async function sendLocal(channel: Channel, ready: Ready[]): Promise<Promise<Outcome>[]> {
    let recorded: Set<string> | undefined;
    try {
      recorded = await storeLocally(channel, ready);
    } catch (error) {
      return ready.map((r) => failed(r.message, error, 'inbox'));
    }
    if (!recorded) return ready.map(sendOne);
    // Not recorded: another copy of its queue message settled the delivery meanwhile.
    return ready.map(() => Promise.resolve(undefined));
  }

  /** The read path: one claim reads the batch, each message is checked, rendered and sent. */
  async function deliverByReading(messages: Delivery<DeliveryMessage>[]): Promise<Promise<Outcome>[]> {
    const now = clock.now();
    const claims = await repo.claimMany(
      messages.map(({ payload: { notificationId, channel } }) => ({
        notificationId,
        channel,
        now,
        // A local provider's statement records the delivery at once: `sending` would be one more write.
        mark: senders[channel].sendLocal === undefined,
      })),
    );
    const prepared = await Promise.all(messages.map((message, i) => prepare(message, claims[i], now)));
    const outcomes = prepared.map((p): Promise<Outcome> => Promise.resolve(isReady(p) ? undefined : p));
    const local = new Map<Channel, number[]>();
    for (const [index, p] of prepared.entries()) {
      if (!isReady(p)) continue;
      const channel = p.message.payload.channel;
      if (senders[channel].sendLocal) local.set(channel, [...(local.get(channel) ?? []), index]);
      // Not awaited: the batch answers now, and a slow provider holds back only this message.
      else outcomes[index] = sendOne(p);
    }
    await Promise.all(
      [...local].map(async ([channel, indexes]) => {
        const sent = await sendLocal(
          channel,
          indexes.map((index) => prepared[index] as Ready),
        );
        for (const [i, index] of indexes.entries()) outcomes[index] = sent[i];
      }),
    );
    return outcomes;
  }

  async function deliverMany(messages: Delivery<DeliveryMessage>[]): Promise<Pending[]> {
    const outcomes = messages.map((): Promise<Outcome> => Promise.resolve(undefined));
    const rest = await deliverFromSnapshots(messages, outcomes);
    if (rest.length > 0) {
      const read = await deliverByReading(rest.map((index) => messages[index]));
      for (const [i, index] of rest.entries()) outcomes[index] = read[i];
    }
    return outcomes.map((outcome) => ({ outcome }));
  }

  const deliver = createGroup<Delivery<DeliveryMessage>, Pending>({
    one: async (message) => (await deliverMany([message]))[0],
    many: deliverMany,
    key: ({ payload }) => `${payload.notificationId}:${payload.channel}`,
    // One batch at a time: the next one gathers while it runs, so batches are larger and
    // PostgreSQL commits less often. Under load it also waits `batchLingerMs` for more: the API's
    // group commit publishes its messages in bursts, and waiting gathers several bursts into one
    // batch, which costs the workers and PostgreSQL less per notification. A batch holds at most
    // the consumer's concurrency (messages in handlers at once), so that is set well above a
    // linger's worth.
    maxInFlight: 1,
    lingerMs: deps.batchLingerMs ?? 0,
  });

  return async function handle(message: Delivery<DeliveryMessage>): Promise<void> {
    const outcome = await (await deliver(message)).outcome;
    if (outcome) throw outcome;
  };
}
