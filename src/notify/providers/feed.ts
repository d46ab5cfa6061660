import type { Clock } from '../../platform/clock.ts';
import type { FeedRepository } from '../feed/repository.ts';
import { type OutboundMessage, type Provider, ProviderError } from '../ports.ts';

/**
 * Where a feed item may lead: a path on this site or an https URL. Anything else (`javascript:`,
 * `data:`, a protocol-relative `//host`) a template filled from a sender's data could produce is
 * dropped, so the component never renders a link that runs script or leaves for an unexpected scheme.
 */
export function safeLink(link: string | undefined): string | null {
  if (!link) return null;
  if (link.length > 2000) return null;
  if (/^\/(?![/\\])/.test(link)) return link;
  try {
    return new URL(link).protocol === 'https:' ? link : null;
  } catch {
    return null;
  }
}

/**
 * The in-app channel's provider: delivering is writing the user's feed row, once per notification
 * (a redelivered message answers the stored row), then announcing it to the live streams of every
 * API process (`announce`, feed/live.ts). An announcement lost on the way (a crash between the two,
 * a pub/sub restart) only delays the live event: the streams also read the feed every few seconds.
 */
export function createFeedProvider(deps: {
  repo: FeedRepository;
  clock: Clock;
  announce?: (userId: string, seq: string) => Promise<void>;
}): Provider {
  return {
    name: 'feed',
    channel: 'in_app',
    async send(message: OutboundMessage) {
      const { subject, text, link } = message.message;
      if (!subject && !text) {
        throw new ProviderError('empty_item', 'the in-app template rendered neither title nor body', {
          permanent: true,
        });
      }
      const { seq } = await deps.repo.store({
        notificationId: message.notificationId,
        userId: message.recipient.userId,
        type: message.type,
        title: subject ?? '',
        body: text,
        link: safeLink(link),
        at: deps.clock.now(),
      });
      // Announced on a repeat too: the first copy may have stored the row and died before this.
      await deps.announce?.(message.recipient.userId, seq).catch(() => {});
      return { providerMessageId: message.notificationId, provider: 'feed' };
    },
  };
}
