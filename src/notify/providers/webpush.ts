import { createHash } from 'node:crypto';
import type { Agent } from 'node:https';
import webpush, { WebPushError } from 'web-push';
import type { Channel } from '../api.ts';
import { type OutboundMessage, type Provider, ProviderError, type PushSubscription } from '../ports.ts';

export interface WebPushSettings {
  publicKey: string;
  privateKey: string;
  /** `mailto:` or `https:` contact for push services (VAPID `sub`). */
  subject: string;
  timeoutMs?: number;
  /** How long a push service keeps an undelivered message. */
  ttlSeconds?: number;
  /** An HTTPS agent, e.g. one trusting a private CA (tests run a local push service on a self-signed cert). */
  agent?: Agent;
}

/** A subscription the push service says is gone (404/410): the core deletes it. */
export type SubscriptionGone = (userId: string, endpoint: string) => void | Promise<void>;

/**
 * Web Push (RFC 8030) with VAPID (RFC 8292) and aes128gcm payload encryption (RFC 8291), by the
 * web-push library. One message goes to every subscription of the user; it counts as sent when
 * at least one device took it (retrying would repeat it on those), permanent when all are gone.
 */
export function createWebPushProvider(settings: WebPushSettings, onGone?: SubscriptionGone): Provider {
  const vapidDetails = {
    subject: settings.subject,
    publicKey: settings.publicKey,
    privateKey: settings.privateKey,
  };
  return {
    name: 'webpush',
    channel: 'push' satisfies Channel,
    async send(message: OutboundMessage) {
      const subscriptions = message.recipient.pushSubscriptions ?? [];
      if (subscriptions.length === 0) {
        throw new ProviderError('no_address', 'The recipient has no push subscription', { permanent: true });
      }
      const payload = JSON.stringify({
        title: message.message.subject ?? '',
        body: message.message.text,
        notificationId: message.notificationId,
        type: message.type,
      });
      // The push service replaces a queued message with the same topic: a duplicate send while the
      // device is offline arrives once. Topics are at most 32 URL-safe characters.
      const topic = createHash('sha256').update(message.deliveryId).digest('base64url').slice(0, 32);
      const outcomes = await Promise.all(
        subscriptions.map((subscription) => pushTo(subscription, payload, topic)),
      );
      const delivered = outcomes.find((outcome) => outcome.kind === 'sent');
      for (const outcome of outcomes) {
        if (outcome.kind === 'gone') await onGone?.(message.recipient.userId, outcome.endpoint);
      }
      if (delivered?.kind === 'sent') return { providerMessageId: delivered.id, provider: 'webpush' };
      const failure = outcomes.find((outcome) => outcome.kind === 'failed');
      if (failure?.kind === 'failed') throw failure.error;
      throw new ProviderError('subscription_gone', 'Every push subscription of the recipient is gone', {
        permanent: true,
      });
    },
  };

  async function pushTo(subscription: PushSubscription, payload: string, topic: string) {
    try {
      const result = await webpush.sendNotification(subscription, payload, {
        vapidDetails,
        TTL: settings.ttlSeconds ?? 86_400,
        timeout: settings.timeoutMs ?? 10_000,
        contentEncoding: 'aes128gcm',
        topic,
        agent: settings.agent,
      });
      // Push services answer 201 with the message's URL in Location; it names the message.
      const id = result.headers.location ?? `${subscription.endpoint}#${topic}`;
      return { kind: 'sent' as const, id };
    } catch (error) {
      if (error instanceof WebPushError && (error.statusCode === 404 || error.statusCode === 410)) {
        return { kind: 'gone' as const, endpoint: subscription.endpoint };
      }
      return { kind: 'failed' as const, error: pushError(error as Error) };
    }
  }
}

function pushError(error: Error): ProviderError {
  if (error instanceof WebPushError) {
    const status = error.statusCode;
    const transient = status === 429 || status >= 500;
    // 400 (malformed), 403 (VAPID key mismatch), 413 (payload too large) will fail the same way again.
    return new ProviderError(`push_${status}`, `Push service answered ${status}: ${error.body}`, {
      permanent: !transient,
    });
  }
  return new ProviderError('push_unreachable', `Push service unreachable: ${error.message}`, {
    permanent: false,
  });
}

export function generateVapidKeys(): { publicKey: string; privateKey: string } {
  return webpush.generateVAPIDKeys();
}
