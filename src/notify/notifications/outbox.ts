import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../platform/clock.ts';
import type { Queue, QueueMessage } from '../../platform/queue/index.ts';
import type { Channel } from '../api.ts';
import type { Preferences } from '../preferences/service.ts';
import type { Lane } from '../tables.ts';
import type { NotifyRepository } from './repository.ts';

/** Deliveries one sweep publishes at most (the next tick takes the rest). */
const SWEEP_BATCH = 5000;

export interface DeliveryMessage {
  notificationId: string;
  channel: Channel;
  /**
   * What the accept knew (set by `publishNow`; the sweep's and redriven messages may lack it): the
   * notification and the preferences a send reads, with their write count. A worker whose
   * provider is local delivers from this without reading the delivery first, in a statement that
   * stores it only while the delivery is open and the preferences' count unchanged (delivery/local.ts).
   */
  accepted?: AcceptedSnapshot;
}

export interface AcceptedSnapshot {
  type: string;
  data: Record<string, unknown>;
  version: number;
  email: string | null;
  phone: string | null;
  locale: string | null;
  timezone: string;
}

/**
 * Requests whose canonical JSON is longer go without the snapshot: a message the size of the
 * request body (up to the body limit) would cross NATS's payload limit, and the worker reads it
 * anyway.
 */
export const SNAPSHOT_MAX_REQUEST_CHARS = 8192;

export const topicFor = (lane: Lane, channel: Channel) =>
  lane === 'batch' ? `notifications.batch.${channel}` : `notifications.${channel}`;

interface Publishable {
  notificationId: string;
  channel: Channel;
  userId: string;
  lane: Lane;
  /** From the accept: the notification and the preferences it was accepted against. */
  accepted?: {
    type: string;
    data: Record<string, unknown>;
    prefs: Preferences;
    /** Undefined when no preferences row was read (the defaults): no snapshot then. */
    version: number | undefined;
    /** The request's canonical JSON length, for SNAPSHOT_MAX_REQUEST_CHARS. */
    size: number;
  };
}

/** The snapshot a message may carry (push needs the subscriptions, which it leaves to the worker's read). */
function snapshotOf(d: Publishable): AcceptedSnapshot | undefined {
  const a = d.accepted;
  if (!a || a.version === undefined || d.channel === 'push' || a.size > SNAPSHOT_MAX_REQUEST_CHARS)
    return undefined;
  const { email, phone, locale, timezone } = a.prefs;
  return { type: a.type, data: a.data, version: a.version, email, phone, locale, timezone };
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

  const messageOf = (d: Publishable): QueueMessage<DeliveryMessage> => {
    const accepted = snapshotOf(d);
    return {
      id: `${d.notificationId}:${d.channel}`,
      key: d.userId,
      payload: accepted
        ? { notificationId: d.notificationId, channel: d.channel, accepted }
        : { notificationId: d.notificationId, channel: d.channel },
    };
  };
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
      const due = await repo.unpublished(now, new Date(now.getTime() - deps.republishAfterMs), SWEEP_BATCH);
      // A user's deliveries on one topic go one after the other, in the order they were accepted,
      // and a failure stops that user's line until the next sweep; different lines go at once.
      // (After a queue outage the sweep is what publishes everything accepted meanwhile: one at a
      // time it fell far behind what the API accepts.)
      const lines = Map.groupBy(due, (d) => `${topicFor(d.lane, d.channel)}\n${d.user_id}`);
      const published: Publishable[] = [];
      const failures: unknown[] = [];
      await Promise.all(
        [...lines.values()].map(async (line) => {
          for (const d of line) {
            const delivery = {
              notificationId: d.notification_id,
              channel: d.channel,
              userId: d.user_id,
              lane: d.lane,
            };
            try {
              await publish(delivery);
            } catch (error) {
              failures.push(error);
              return;
            }
            published.push(delivery);
          }
        }),
      );
      await repo.markManyPublished(published, now);
      if (failures.length > 0) throw failures[0];
      return due.length;
    },
  };
}

export type Outbox = ReturnType<typeof createOutbox>;
