import type { AttemptView, ChannelStatusView, NotificationView } from './deps.ts';

export interface TimelineEvent {
  at: string;
  label: string;
  detail?: string;
  tone?: 'ok' | 'bad';
}

/** One channel's history in time order: created, each attempt, sent, delivered, the next scheduled try. */
export function channelTimeline(notification: NotificationView, status: ChannelStatusView): TimelineEvent[] {
  const events: TimelineEvent[] = [{ at: notification.created_at, label: 'Accepted' }];
  const attempts = (notification.attempts ?? []).filter((a: AttemptView) => a.channel === status.channel);
  for (const attempt of attempts) {
    const via = attempt.provider ? ` via ${attempt.provider}` : '';
    events.push(
      attempt.error
        ? {
            at: attempt.at,
            label: `Attempt ${attempt.attempt} failed${via}`,
            detail: attempt.error,
            tone: 'bad',
          }
        : { at: attempt.at, label: `Attempt ${attempt.attempt} handed over${via}` },
    );
  }
  const via = status.provider ? ` via ${status.provider}` : '';
  if (status.sent_at) events.push({ at: status.sent_at, label: `Sent${via}`, tone: 'ok' });
  if (status.delivered_at)
    events.push({ at: status.delivered_at, label: 'Delivered (provider receipt)', tone: 'ok' });
  if (status.scheduled_for && !status.sent_at) {
    events.push({ at: status.scheduled_for, label: 'Scheduled (next try or end of quiet hours)' });
  }
  // Stable sort: equal timestamps keep the order above (accepted before the first attempt).
  return events.sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
}
