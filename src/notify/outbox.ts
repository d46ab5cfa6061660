import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../platform/clock.ts';
import type { Queue } from '../platform/queue/index.ts';
import type { Channel } from './api.ts';
import type { Lane, NotifyRepository } from './repository.ts';

export interface DeliveryMessage {
  notificationId: string;
  channel: Channel;
}

export const topicFor = (lane: Lane, channel: Channel) =>
  lane === 'batch' ? `notifications.batch.${channel}` : `notifications.${channel}`;

/**
 * Getting a stored delivery onto the queue. The queue port cannot join a database transaction
 * (it may be JetStream), so this is a transactional outbox without a separate table: the
 * notification and its deliveries commit first with `published_at` null, then the message is
 * published and `published_at` set. If the process dies in between, `publishDue` (a periodic
 * job) publishes it again after `republishAfterMs`; the message id `{notificationId}:{channel}`
 * makes the queue drop a second copy, so nothing is lost and nothing is sent twice.
 * Scheduled deliveries (quiet hours, `send_at`) are not published before they are due, so they
 * never hold back the user's later messages on the same ordering key.
 */
export function createOutbox(deps: {
  repo: NotifyRepository;
  queue: Queue;
  clock: Clock;
  log: FastifyBaseLogger;
  republishAfterMs: number;
}) {
  const { repo, queue, clock, log } = deps;

  // `published_at` marks of concurrent requests go to PostgreSQL together: one UPDATE (and one
  // commit) per flush instead of one per delivery. A flush waits for the one before it, so under
  // load the marks that arrive meanwhile share the next statement.
  let pending: { notificationId: string; channel: Channel; done: (error?: unknown) => void }[] = [];
  let flushing = false;
  async function flush() {
    flushing = true;
    while (pending.length > 0) {
      const batch = pending;
      pending = [];
      await repo.markManyPublished(batch, clock.now()).then(
        () => {
          for (const item of batch) item.done();
        },
        (error) => {
          for (const item of batch) item.done(error);
        },
      );
    }
    flushing = false;
  }
  function markPublished(notificationId: string, channel: Channel): Promise<void> {
    return new Promise((resolve, reject) => {
      pending.push({ notificationId, channel, done: (error) => (error ? reject(error) : resolve()) });
      if (!flushing) void flush();
    });
  }

  /** Publishes and resolves on the queue's ack, with the pending `published_at` mark. */
  async function publish(d: { notificationId: string; channel: Channel; userId: string; lane: Lane }) {
    await queue.publish<DeliveryMessage>(topicFor(d.lane, d.channel), {
      id: `${d.notificationId}:${d.channel}`,
      key: d.userId,
      payload: { notificationId: d.notificationId, channel: d.channel },
    });
    return { marked: markPublished(d.notificationId, d.channel) };
  }

  return {
    /** Right after the commit; a failure is logged and left to `publishDue`. */
    async publishNow(deliveries: { notificationId: string; channel: Channel; userId: string; lane: Lane }[]) {
      const failed = (d: { notificationId: string }) => (error: unknown) =>
        log.warn({ err: error, notificationId: d.notificationId }, 'publish failed; the sweep will retry');
      // The channels go to different topics, so nothing orders them: publish them all at once and
      // wait for the acks together (one round trip instead of one per channel). Waits for the
      // queue's ack, not for the `published_at` mark: a lost mark only means the sweep publishes
      // again, and the message id makes the queue drop that copy.
      await Promise.all(
        deliveries.map(async (d) => {
          const published = await publish(d).catch(failed(d));
          published?.marked.catch(failed(d));
        }),
      );
    },

    async publishDue(): Promise<number> {
      const now = clock.now();
      const due = await repo.unpublished(now, new Date(now.getTime() - deps.republishAfterMs), 500);
      for (const d of due) {
        const published = await publish({
          notificationId: d.notification_id,
          channel: d.channel,
          userId: d.user_id,
          lane: d.lane,
        });
        await published.marked;
      }
      return due.length;
    },
  };
}

export type Outbox = ReturnType<typeof createOutbox>;
