import type { Clock } from '../../platform/clock.ts';
import type { Delivery } from '../../platform/queue/index.ts';
import type { Channel } from '../api.ts';
import type { AcceptedSnapshot, DeliveryMessage } from '../notifications/outbox.ts';
import type { NotifyRepository } from '../notifications/repository.ts';
import type {
  Attachment,
  ChannelSender,
  OutboundMessage,
  PushSubscription,
  RenderedMessage,
  TemplateRenderer,
} from '../ports.ts';

/** What a message's handler does when its delivery is decided: nothing (ack), or throw this. */
export type Outcome = undefined | Error;

export interface Ready {
  message: Delivery<DeliveryMessage>;
  outbound: OutboundMessage;
}

/** What a send needs of its notification and its user, from the accept's snapshot or a read. */
export interface SendContext {
  type: string;
  data: Record<string, unknown>;
  userId: string;
  email: string | null;
  phone: string | null;
  locale: string | null;
  timezone: string;
  pushSubscriptions?: PushSubscription[];
}

/** Renders the message's template and builds what its provider gets; throws what rendering throws. */
export async function prepareSend(
  templates: TemplateRenderer,
  message: Delivery<DeliveryMessage>,
  to: SendContext,
): Promise<Ready> {
  const { notificationId, channel } = message.payload;
  const rendered = await templates.render(to.type, channel, to.data, {
    locale: to.locale ?? undefined,
    timeZone: to.timezone,
  });
  return {
    message,
    outbound: {
      deliveryId: `${notificationId}:${channel}`,
      notificationId,
      channel,
      type: to.type,
      recipient: {
        userId: to.userId,
        email: to.email ?? undefined,
        phone: to.phone ?? undefined,
        pushSubscriptions: to.pushSubscriptions,
      },
      message: channel === 'email' ? withAttachments(rendered, to.data) : rendered,
    },
  };
}

const MAX_ATTACHMENTS = 3;
const MAX_ATTACHMENT_CHARS = 64 * 1024;

/**
 * A sender may pass small text files for the e-mail in `data.attachments` (booking's `ticket.ics`):
 * `[{filename, content_type, content}]`. Anything else in that key is ignored, never sent.
 */
function withAttachments(rendered: RenderedMessage, data: Record<string, unknown>): RenderedMessage {
  const given = data.attachments;
  if (!Array.isArray(given)) return rendered;
  const attachments = given
    .filter(
      (item): item is Attachment =>
        typeof item === 'object' &&
        item !== null &&
        typeof item.filename === 'string' &&
        /^[\w.-]{1,100}$/.test(item.filename) &&
        typeof item.content_type === 'string' &&
        /^[\w.+-]+\/[\w.+-]+(;[\w =.+-]*)*$/.test(item.content_type) &&
        typeof item.content === 'string' &&
        item.content.length <= MAX_ATTACHMENT_CHARS,
    )
    .slice(0, MAX_ATTACHMENTS)
    .map(({ filename, content_type, content }) => ({ filename, content_type, content }));
  return attachments.length ? { ...rendered, attachments } : rendered;
}

/**
 * The worker's path for a local provider (the dev inbox), whose messages are stored with their
 * status in one statement per batch (README.md, "The worker delivers a batch"); handler.ts uses
 * it for the messages it read, and first, for messages that carry the accept's snapshot, without
 * reading at all.
 */
export function createLocalDelivery(deps: {
  repo: NotifyRepository;
  templates: TemplateRenderer;
  senders: Record<Channel, ChannelSender>;
  clock: Clock;
  counter: { inc(labels: { channel: Channel; status: string }): void };
  /** The handler's failure path: records the try and says what the queue should do. */
  failed(message: Delivery<DeliveryMessage>, error: unknown, provider: string | null): Promise<Outcome>;
}) {
  const { repo, templates, senders, clock, counter, failed } = deps;

  /**
   * The messages of a channel whose provider is local, stored with their status in one statement
   * (`versions`: only while the preferences they were rendered with are unchanged). The delivery
   * ids recorded, or undefined when the provider does not take them now (circuit not closed).
   */
  async function storeLocally(
    channel: Channel,
    ready: Ready[],
    versions?: (number | null)[],
  ): Promise<Set<string> | undefined> {
    const recorded = await senders[channel].sendLocal?.(
      ready.map((r) => r.outbound),
      clock.now(),
      (rows, provider) => repo.deliverLocally(provider, rows, versions),
    );
    for (const r of ready) {
      if (!recorded?.has(r.outbound.deliveryId)) continue;
      counter.inc({ channel, status: 'sent' });
      counter.inc({ channel, status: 'delivered' });
    }
    return recorded;
  }

  /** A message rendered from the accept's snapshot; undefined when it does not render (the read path decides). */
  async function fromSnapshot(
    message: Delivery<DeliveryMessage>,
    accepted: AcceptedSnapshot,
  ): Promise<Ready | undefined> {
    try {
      // The queue key is the user id (notifications/outbox.ts).
      return await prepareSend(templates, message, { ...accepted, userId: message.key });
    } catch {
      return undefined;
    }
  }

  /**
   * Messages that carry the accept's snapshot and go to a local provider are delivered without
   * reading anything first: rendered from the snapshot and stored in one statement that checks the
   * delivery is open and the preferences unchanged. Sets their outcomes and answers the indexes it
   * did not settle — settled by another copy meanwhile, preferences written since the accept, a
   * circuit not closed, no snapshot — which the read path then decides.
   */
  async function deliverFromSnapshots(
    messages: Delivery<DeliveryMessage>[],
    outcomes: Promise<Outcome>[],
  ): Promise<number[]> {
    const rest: number[] = [];
    const byChannel = new Map<Channel, { index: number; ready: Ready; version: number }[]>();
    const rendered = await Promise.all(
      messages.map(({ payload }, index) => {
        const { channel, accepted } = payload;
        return accepted && senders[channel].sendLocal ? fromSnapshot(messages[index], accepted) : undefined;
      }),
    );
    for (const [index, ready] of rendered.entries()) {
      const version = messages[index].payload.accepted?.version;
      if (!ready || version === undefined) {
        rest.push(index);
        continue;
      }
      const items = byChannel.get(ready.outbound.channel) ?? [];
      items.push({ index, ready, version });
      byChannel.set(ready.outbound.channel, items);
    }
    await Promise.all(
      [...byChannel].map(async ([channel, items]) => {
        let recorded: Set<string> | undefined;
        try {
          recorded = await storeLocally(
            channel,
            items.map((item) => item.ready),
            items.map((item) => item.version),
          );
        } catch (error) {
          for (const item of items) outcomes[item.index] = failed(item.ready.message, error, 'inbox');
          return;
        }
        for (const item of items) {
          if (!recorded?.has(item.ready.outbound.deliveryId)) rest.push(item.index);
          else counter.inc({ channel, status: 'sending' });
        }
      }),
    );
    return rest;
  }

  return { storeLocally, deliverFromSnapshots };
}
