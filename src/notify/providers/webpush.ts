import { createHash } from 'node:crypto';
import type { Agent } from 'node:https';
import webpush from 'web-push';
import { createOutboundGuard, type OutboundGuard, OutboundRefused } from '../../platform/http/outbound.ts';
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
  /** Checks each endpoint on fresh DNS answers and connects to the checked address (default: public addresses only). */
  outbound?: OutboundGuard;
}

/** A push service answers with a status and perhaps a short text; nothing more of it is read. */
const ANSWER_MAX_BYTES = 4096;
/** The Location header names the message (a receipt matches on it); a longer one is not a push service's. */
const MESSAGE_ID_MAX_CHARS = 512;

/** A subscription the push service says is gone (404/410): the core deletes it. */
export type SubscriptionGone = (userId: string, endpoint: string) => void | Promise<void>;

/**
 * Web Push (RFC 8030) with VAPID (RFC 8292) and aes128gcm payload encryption (RFC 8291), by the
 * web-push library. One message goes to every subscription of the user; it counts as sent when
 * at least one device took it (retrying would repeat it on those), permanent when all are gone.
 */
export function createWebPushProvider(settings: WebPushSettings, onGone?: SubscriptionGone): Provider {
  const outbound = settings.outbound ?? createOutboundGuard();
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
      // A transient failure first: a retry may still reach that device.
      const failures = outcomes.flatMap((outcome) => (outcome.kind === 'failed' ? [outcome.error] : []));
      const failure = failures.find((error) => !error.permanent) ?? failures[0];
      if (failure) throw failure;
      throw new ProviderError('subscription_gone', 'Every push subscription of the recipient is gone', {
        permanent: true,
      });
    },
  };

  async function pushTo(subscription: PushSubscription, payload: string, topic: string) {
    let request: ReturnType<typeof webpush.generateRequestDetails>;
    try {
      request = webpush.generateRequestDetails(subscription, payload, {
        vapidDetails,
        TTL: settings.ttlSeconds ?? 86_400,
        contentEncoding: 'aes128gcm',
        topic,
      });
    } catch {
      // The browser's keys do not make an encryption key: no retry will change that.
      const error = new ProviderError('push_subscription_invalid', 'push subscription keys are not valid', {
        permanent: true,
      });
      return { kind: 'failed' as const, error };
    }
    try {
      // web-push builds the request (VAPID, aes128gcm); the guard sends it, so the endpoint is checked
      // on the address actually connected to and only a few KB of the answer are read.
      const answer = await outbound.request(request.endpoint, {
        method: request.method,
        headers: request.headers,
        body: request.body ?? undefined,
        timeoutMs: settings.timeoutMs ?? 10_000,
        maxBytes: ANSWER_MAX_BYTES,
        agent: settings.agent,
      });
      const status = answer.status;
      if (status >= 200 && status < 300) {
        // Push services answer 201 with the message's URL in Location; it names the message.
        const location = answer.headers.location?.slice(0, MESSAGE_ID_MAX_CHARS);
        return { kind: 'sent' as const, id: location ?? `${subscription.endpoint}#${topic}` };
      }
      if (status === 404 || status === 410) return { kind: 'gone' as const, endpoint: subscription.endpoint };
      return { kind: 'failed' as const, error: answeredError(status) };
    } catch (error) {
      return { kind: 'failed' as const, error: unreachableError(error) };
    }
  }
}

/**
 * What is recorded is ours: the status and a few words. The answer's body is the remote's and is
 * shown to whoever may read the notification's attempts, so it is never part of the message.
 */
function answeredError(status: number): ProviderError {
  const transient = status === 429 || status >= 500;
  // 400 (malformed), 403 (VAPID key mismatch), 413 (payload too large) will fail the same way again.
  return new ProviderError(`push_${status}`, `push endpoint answered ${status}`, { permanent: !transient });
}

function unreachableError(error: unknown): ProviderError {
  if (error instanceof OutboundRefused) {
    return error.transient
      ? new ProviderError('push_unreachable', `push endpoint unreachable: ${error.message}`, {
          permanent: false,
        })
      : new ProviderError('push_endpoint_refused', `push endpoint refused: ${error.message}`, {
          permanent: true,
        });
  }
  const { name, code } = error as { name?: string; code?: unknown };
  if (name === 'AbortError' || name === 'TimeoutError') {
    return new ProviderError('push_unreachable', 'push endpoint timed out', { permanent: false });
  }
  // A system error code (ECONNREFUSED, CERT_HAS_EXPIRED…) says enough; its message may quote the remote.
  const reason = typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code) ? ` (${code})` : '';
  return new ProviderError('push_unreachable', `push endpoint unreachable${reason}`, { permanent: false });
}

export function generateVapidKeys(): { publicKey: string; privateKey: string } {
  return webpush.generateVAPIDKeys();
}
