import type { FastifyBaseLogger } from 'fastify';
import type { Counter } from 'prom-client';
import type { Clock } from '../platform/clock.ts';
import { type Delivery, describeError, PermanentError, RetryLater } from '../platform/queue/index.ts';
import type { Channel } from './api.ts';
import type { DeliveryMessage } from './outbox.ts';
import { type ChannelSender, ProviderError, ProviderUnavailable, type TemplateRenderer } from './ports.ts';
import { enabled, hasAddress, toPreferences } from './preferences.ts';
import type { DeliveryStatus, NotifyRepository } from './repository.ts';

/** Statuses a queue message may still act on; anything else was settled by an earlier copy. */
const OPEN: DeliveryStatus[] = ['queued', 'scheduled', 'sending'];

/**
 * The worker's handler for one delivery message. The queue gives at-least-once delivery and
 * one message per user key at a time; this makes the send effectively once: a settled
 * delivery is acknowledged without sending, and the provider gets `{notificationId}:{channel}`
 * as its idempotency key, so even a crash between the provider's answer and our `sent` write
 * cannot make the user see it twice.
 */
export function createDeliveryHandler(deps: {
  repo: NotifyRepository;
  templates: TemplateRenderer;
  senders: Record<Channel, ChannelSender>;
  clock: Clock;
  log: FastifyBaseLogger;
  maxAttempts: number;
  counter: Counter<'channel' | 'status'>;
}) {
  const { repo, templates, senders, clock, log, counter } = deps;

  return async function handle(message: Delivery<DeliveryMessage>): Promise<void> {
    const { notificationId, channel } = message.payload;
    const now = clock.now();
    // Reads what the send needs and sets `sending` in one statement, shared with the other
    // messages this worker is taking at the same time.
    const found = await repo.claim(notificationId, channel, now);
    if (!found) {
      log.warn({ notificationId, channel }, 'queue message for an unknown delivery: dropped');
      return;
    }
    const { delivery, notification } = found;
    if (!OPEN.includes(delivery.status)) return;
    if (delivery.scheduled_for && delivery.scheduled_for > now) {
      throw new RetryLater(delivery.scheduled_for.getTime() - now.getTime(), 'scheduled');
    }
    const set = (fields: Parameters<NotifyRepository['updateDelivery']>[2]) => {
      if (fields.status) counter.inc({ channel, status: fields.status });
      return repo.updateDelivery(notificationId, channel, fields, clock.now());
    };
    const prefs = toPreferences(found.prefs);
    // Checked again at send time: the user may have switched the channel off or removed the
    // address since the accept, which may also have read a cached copy (contacts-cache.ts).
    const refused = !enabled(prefs, channel)
      ? 'channel_disabled'
      : !hasAddress(prefs, channel, found.subscriptions)
        ? 'no_address'
        : null;
    if (refused) {
      await set({ status: 'skipped', reason: refused });
      return;
    }
    counter.inc({ channel, status: 'sending' });
    let provider: string | null = null;
    try {
      const rendered = await templates
        .render(notification.type, channel, notification.data, {
          locale: prefs.locale ?? undefined,
          timeZone: prefs.timezone,
        })
        .catch((error) => {
          throw new ProviderError('render_failed', describeError(error), { permanent: true });
        });
      const recipient = {
        userId: notification.user_id,
        email: prefs.email ?? undefined,
        phone: prefs.phone ?? undefined,
        pushSubscriptions: channel === 'push' ? found.subscriptions : undefined,
      };
      const result = await senders[channel].send({
        deliveryId: `${notificationId}:${channel}`,
        notificationId,
        channel,
        type: notification.type,
        recipient,
        message: rendered,
      });
      provider = result.provider;
      counter.inc({ channel, status: 'sent' });
      await repo.recordSent(notificationId, channel, {
        at: now,
        provider,
        providerMessageId: result.providerMessageId,
        content: rendered.text,
        sentAt: clock.now(),
      });
    } catch (error) {
      if (error instanceof ProviderUnavailable) {
        // The breaker is open: nothing was tried, so no attempt is spent.
        await set({ status: 'queued', reason: 'provider_unavailable' });
        throw new RetryLater(error.retryAfterMs, error.message);
      }
      const reason =
        error instanceof ProviderError ? `${error.code}: ${error.message}` : describeError(error);
      await repo.recordAttempt(notificationId, channel, { at: now, error: reason, provider });
      if (error instanceof ProviderError && error.permanent) {
        await set({ status: 'failed', reason });
        throw new PermanentError(reason);
      }
      const last = message.attempt >= deps.maxAttempts;
      await set({ status: last ? 'dead_lettered' : 'queued', reason });
      throw error;
    }
  };
}
