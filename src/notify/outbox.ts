import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../platform/clock.ts';
import type { Queue, QueueMessage } from '../platform/queue/index.ts';
import type { Channel } from './api.ts';
import type { Lane, NotifyRepository } from './repository.ts';

export interface DeliveryMessage {
  notificationId: string;
  channel: Channel;
}

export const topicFor = (lane: Lane, channel: Channel) =>
  lane === 'batch' ? `notifications.batch.${channel}` : `notifications.${channel}`;

interface Publishable {
  notificationId: string;
  channel: Channel;
  userId: string;
  lane: Lane;
}

/**
 * Getting a stored delivery onto the queue. The queue port cannot join a database transaction
 * (it may be JetStream), so this is a transactional outbox without a separate table: the
 * notification and its deliveries commit first with `published_at` null, then the message is
 * published. `published_at` is set by whoever next touches the row anyway: the worker's claim
 * (a message the worker got was published) or this sweep. So the accept writes nothing more
 * after its insert: marking each delivery from the API cost an UPDATE (a new row version, index
 * entries, WAL and a commit) per accept.
 *
 * `publishDue` (a periodic job) publishes `queued` deliveries still unmarked after
 * `republishAfterMs` — a publish lost when the process died or the queue was down, or a message
 * still waiting in the queue behind a backlog — and marks them, so each is published again at
 * most once. The message id `{notificationId}:{channel}` makes the queue drop a second copy
 * within its 24 h window, and a claim of a settled delivery sends nothing, so nothing is lost and
 * nothing is sent twice. Scheduled deliveries (quiet hours, `send_at`) are first published by the
 * sweep when due, so they never hold back the user's later messages on the same ordering key.
 */
export function createOutbox(deps: {
  repo: NotifyRepository;
  queue: Queue;
  clock: Clock;
  log: FastifyBaseLogger;
  republishAfterMs: number;
}) {
  const { repo, queue, clock, log } = deps;

  const messageOf = (d: Publishable): QueueMessage<DeliveryMessage> => ({
    id: `${d.notificationId}:${d.channel}`,
    key: d.userId,
    payload: { notificationId: d.notificationId, channel: d.channel },
  });
  /** Resolves on the queue's ack. */
  const publish = (d: Publishable) => queue.publish(topicFor(d.lane, d.channel), messageOf(d));

  return {
    /**
     * Right after the commit, without waiting for the queue's ack: a message lost on the way is
     * what `publishDue` finds anyway (its delivery stays unmarked), so the ack would only add a
     * reply message per delivery and a wait before the 202. A failure to hand it over is logged.
     */
    async publishNow(deliveries: Publishable[]) {
      await Promise.all(
        deliveries.map((d) =>
          queue
            .publishUnconfirmed(topicFor(d.lane, d.channel), messageOf(d))
            .catch((error) =>
              log.warn(
                { err: error, notificationId: d.notificationId },
                'publish failed; the sweep will retry',
              ),
            ),
        ),
      );
    },

    async publishDue(): Promise<number> {
      const now = clock.now();
      const due = await repo.unpublished(now, new Date(now.getTime() - deps.republishAfterMs), 500);
      const published: Publishable[] = [];
      try {
        // One after the other: a user's deliveries reach the queue in the order they were accepted.
        for (const d of due) {
          const delivery = {
            notificationId: d.notification_id,
            channel: d.channel,
            userId: d.user_id,
            lane: d.lane,
          };
          await publish(delivery);
          published.push(delivery);
        }
      } finally {
        await repo.markManyPublished(published, now);
      }
      return due.length;
    },
  };
}

export type Outbox = ReturnType<typeof createOutbox>;
