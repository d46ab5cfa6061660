import type { Clock } from '../../platform/clock.ts';
import { uuidv7 } from '../../platform/ids.ts';
import type { Queue } from '../../platform/queue/index.ts';
import { type CancelOutcome, CHANNELS, isChannel, type Priority } from '../api.ts';
import { err } from '../errors.ts';
import type { TemplateRenderer } from '../ports.ts';
import { USER_ID } from '../preferences/service.ts';
import type { AttemptRow, DeliveryRow, NotificationRow } from '../tables.ts';
import { type Accept, type AcceptRequest, IN_PROCESS } from './accept.ts';
import { type DeliveryMessage, topicFor } from './outbox.ts';
import type { NotifyRepository } from './repository.ts';

const iso = (date: Date | null) => (date ? date.toISOString() : null);
/** Statuses that say nothing went out and nothing is left to send: a cancel repeated finds only these. */
const NOTHING_SENT = new Set(['cancelled', 'skipped', 'rate_limited']);
const TOPICS = (['realtime', 'batch'] as const).flatMap((lane) => CHANNELS.map((c) => topicFor(lane, c)));

/**
 * Who cancels: an admin (any notification), or a sender (`callerId`, or IN_PROCESS), who may cancel
 * only what it sent; to it another's notification, and one with no recorded sender, is unknown.
 */
export type Canceller = { admin: true } | { sender: string };

export interface BatchRequest {
  type: string;
  channels: string[];
  data?: Record<string, unknown>;
  user_ids?: string[];
  recipients?: { user_id: string; data?: Record<string, unknown> }[];
  send_at?: string;
  priority?: Priority;
}

/** The read side and the administrative use cases; accepting is in accept.ts. */
export function createNotifyService(deps: {
  repo: NotifyRepository;
  accept: Accept;
  templates: TemplateRenderer;
  queue: Queue;
  clock: Clock;
}) {
  const { repo, accept, queue, clock } = deps;

  function view(n: NotificationRow, deliveries: DeliveryRow[]) {
    return {
      id: n.id,
      user_id: n.user_id,
      type: n.type,
      priority: n.priority,
      lane: n.lane,
      data: n.data,
      created_at: n.created_at.toISOString(),
      channels: deliveries
        .filter((d) => d.notification_id === n.id)
        .map((d) => ({
          channel: d.channel,
          status: d.status,
          reason: d.reason,
          provider: d.provider,
          attempts: d.attempts,
          scheduled_for: iso(d.scheduled_for),
          sent_at: iso(d.sent_at),
          delivered_at: iso(d.delivered_at),
        })),
    };
  }

  /**
   * Cancels the notification's pending channels. Repeating a cancel answers `cancelled` again;
   * a notification with a channel sending or sent and none pending is `not_cancellable`.
   */
  async function cancelStored(
    n: NotificationRow,
  ): Promise<{ outcome: CancelOutcome; deliveries: DeliveryRow[] }> {
    const cancelled = await repo.cancelPending(n.id, clock.now());
    const deliveries = await repo.deliveriesOf([n.id]);
    if (cancelled.length > 0) return { outcome: 'cancelled', deliveries };
    const repeated =
      deliveries.some((d) => d.status === 'cancelled') && deliveries.every((d) => NOTHING_SENT.has(d.status));
    return { outcome: repeated ? 'cancelled' : 'not_cancellable', deliveries };
  }

  return {
    send: (request: AcceptRequest, options?: { idempotencyKey?: string; sender?: string }) =>
      accept(request, options),

    /**
     * `DELETE /api/notifications/{id}`: 404 unknown or not the canceller's (another's data answers
     * as if it did not exist), 409 when nothing is pending any more.
     */
    async cancel(id: string, by: Canceller): Promise<void> {
      const n = await repo.notification(id);
      if (!n || !('admin' in by || n.sent_by === by.sender)) throw err('notification_not_found');
      const { outcome, deliveries } = await cancelStored(n);
      if (outcome === 'cancelled') return;
      throw err('notification_not_cancellable', {
        detail: 'No channel is pending any more: each is being sent, was sent or was never sent',
        extras: { channels: deliveries.map((d) => ({ channel: d.channel, status: d.status })) },
      });
    },

    /**
     * The in-process `NotifyApi.cancel`: the notification a user got under a client id, when the
     * in-process API sent it. One with no recorded sender is taken too: before migration 007 the
     * in-process sends (booking's reminders, up to 30 days ahead) were stored without one.
     */
    async cancelByClientId(userId: string, clientId: string): Promise<CancelOutcome> {
      if (!USER_ID.test(userId)) return 'not_found';
      const n = await repo.byClientId(userId, clientId);
      if (!n || (n.sent_by !== null && n.sent_by !== IN_PROCESS)) return 'not_found';
      return (await cancelStored(n)).outcome;
    },

    async status(id: string) {
      const n = await repo.notification(id);
      if (!n) throw err('notification_not_found');
      const [deliveries, attempts] = await Promise.all([repo.deliveriesOf([id]), repo.attemptsOf(id)]);
      const sent = deliveries.map((d) => d.sent_at).filter((d) => d !== null);
      const delivered = deliveries.map((d) => d.delivered_at).filter((d) => d !== null);
      return {
        ...view(n, deliveries),
        sent_at: iso(sent.sort((a, b) => a.getTime() - b.getTime())[0] ?? null),
        delivered_at: iso(delivered.sort((a, b) => a.getTime() - b.getTime())[0] ?? null),
        attempts: withSuccesses(attempts, deliveries).map((a) => ({
          channel: a.channel,
          attempt: a.attempt,
          at: a.at.toISOString(),
          provider: a.provider,
          error: a.error,
        })),
      };
    },

    /** Newest first; `cursor` is the last item's `{created_at}|{id}` from the previous page. */
    async history(userId: string, limit: number, cursor?: string) {
      let before: { at: Date; id: string } | undefined;
      if (cursor) {
        const [at, id] = cursor.split('|');
        if (!at || !id || Number.isNaN(Date.parse(at)) || !/^[0-9a-f-]{36}$/.test(id))
          throw err('invalid_cursor');
        before = { at: new Date(at), id };
      }
      const rows = await repo.history(userId, limit + 1, before);
      const page = rows.slice(0, limit);
      const deliveries = await repo.deliveriesOf(page.map((n) => n.id));
      const last = page.at(-1);
      return {
        notifications: page.map((n) => view(n, deliveries)),
        next_cursor: rows.length > limit && last ? `${last.created_at.toISOString()}|${last.id}` : null,
      };
    },

    /** Dead letters of all eight topics; the id carries the topic: `{topic}:{deadLetterId}`. */
    async deadLetters(limit: number) {
      const lists = await Promise.all(
        TOPICS.map((topic) => queue.deadLetters<DeliveryMessage>(topic, limit)),
      );
      const letters = lists.flat().sort((a, b) => b.deadAt.getTime() - a.deadAt.getTime());
      return letters.slice(0, limit).map((letter) => ({
        id: `${letter.topic}:${letter.deadLetterId}`,
        topic: letter.topic,
        notification_id: letter.payload.notificationId,
        channel: letter.payload.channel,
        user_id: letter.key,
        attempts: letter.attempts,
        error: letter.error,
        dead_at: letter.deadAt.toISOString(),
      }));
    },

    async redrive(id: string) {
      const split = id.lastIndexOf(':');
      const topic = id.slice(0, split);
      const deadLetterId = id.slice(split + 1);
      if (split < 0 || !TOPICS.includes(topic)) throw err('dead_letter_not_found');
      const letter = (await queue.deadLetters<DeliveryMessage>(topic, 10_000)).find(
        (l) => l.deadLetterId === deadLetterId,
      );
      if (!letter) throw err('dead_letter_not_found');
      const { notificationId, channel } = letter.payload;
      // Open the delivery before the message is back, so the worker does not take it as settled.
      await repo.reopenRedriven(notificationId, channel, clock.now());
      if (!(await queue.redrive(topic, deadLetterId))) throw err('dead_letter_not_found');
      return { id, notification_id: notificationId, channel, status: 'queued' as const };
    },

    /** The batch lane: one notification per recipient on the `notifications.batch.*` topics. */
    async batch(request: BatchRequest, sender?: string) {
      const recipients: { user_id: string; data?: Record<string, unknown> }[] =
        request.recipients ?? (request.user_ids ?? []).map((user_id) => ({ user_id }));
      const unknown = request.channels.filter((c) => !isChannel(c));
      if (unknown.length) throw err('unknown_channel', { extras: { channels: unknown } });
      const channels = request.channels.filter(isChannel);
      if (recipients.length === 0 || recipients.length > 1000) {
        throw err('invalid_batch', 'Give 1 to 1000 recipients in user_ids or recipients');
      }
      // Every recipient is checked before any is stored, so a bad one refuses the whole batch.
      for (const [index, recipient] of recipients.entries()) {
        if (!USER_ID.test(recipient.user_id)) throw err('invalid_batch', `recipient ${index}: bad user_id`);
        const problems = await deps.templates.check(request.type, channels, {
          ...request.data,
          ...recipient.data,
        });
        if (problems.length > 0) {
          throw err('invalid_batch', {
            detail: `recipient ${index} (${recipient.user_id}): the templates cannot be filled`,
            extras: { recipient: recipient.user_id, problems },
          });
        }
      }
      const batchId = uuidv7();
      const counts = {
        accepted: 0,
        rate_limited: 0,
        queued: 0,
        scheduled: 0,
        skipped: 0,
        channel_rate_limited: 0,
      } as Record<string, number>;
      for (const recipient of recipients) {
        const accepted = await accept(
          {
            id: `batch:${batchId}`,
            user_id: recipient.user_id,
            type: request.type,
            channels,
            data: { ...request.data, ...recipient.data },
            priority: request.priority ?? 'low',
            send_at: request.send_at,
          },
          { lane: 'batch', batchId, sender },
        );
        counts[accepted.status === 'accepted' ? 'accepted' : 'rate_limited']++;
        for (const c of accepted.channels) {
          // `digested` (a digestible type) is counted only when it occurs.
          const key = c.status === 'rate_limited' ? 'channel_rate_limited' : c.status;
          counts[key] = (counts[key] ?? 0) + 1;
        }
      }
      return { batch_id: batchId, recipients: recipients.length, counts };
    },
  };
}

export type NotifyService = ReturnType<typeof createNotifyService>;

/**
 * The logged tries plus each delivery's successful one, which is not logged as a row (the
 * delivery's `attempts`, `sent_at` and `provider` describe it; repository.ts `recordSentMany`).
 * A success logged by an earlier version of the worker is not listed twice. In time order.
 */
function withSuccesses(attempts: AttemptRow[], deliveries: DeliveryRow[]): AttemptRow[] {
  const successes = deliveries
    .filter(
      (d) =>
        d.sent_at !== null &&
        !attempts.some((a) => a.channel === d.channel && a.attempt === d.attempts && a.error === null),
    )
    .map(
      (d): AttemptRow => ({
        notification_id: d.notification_id,
        channel: d.channel,
        attempt: d.attempts,
        at: d.sent_at as Date,
        error: null,
        provider: d.provider,
      }),
    );
  return [...attempts, ...successes].sort((a, b) => a.at.getTime() - b.at.getTime());
}
