import type { ChannelStatusView } from './deps.ts';

export interface TimelineEvent {
  at: string;
  label: string;
  detail?: string;
  tone?: 'ok' | 'bad';
}

/** One channel's history in time order: created, each attempt, sent, delivered. */
export function channelTimeline(status: ChannelStatusView): TimelineEvent[] {
  const events: TimelineEvent[] = [{ at: status.created_at, label: 'Created' }];
  for (const attempt of status.attempts ?? []) {
    const failed = attempt.error != null || !['sent', 'delivered'].includes(attempt.outcome);
    events.push({
      at: attempt.at,
      label: `Attempt ${attempt.attempt}: ${attempt.outcome}${attempt.provider ? ` via ${attempt.provider}` : ''}`,
      detail: attempt.error ?? undefined,
      tone: failed ? 'bad' : undefined,
    });
  }
  if (status.sent_at)
    events.push({
      at: status.sent_at,
      label: `Sent${status.provider ? ` via ${status.provider}` : ''}`,
      tone: 'ok',
    });
  if (status.delivered_at)
    events.push({ at: status.delivered_at, label: 'Delivered (provider receipt)', tone: 'ok' });
  if (status.next_attempt_at) events.push({ at: status.next_attempt_at, label: 'Next attempt scheduled' });
  // Stable sort: equal timestamps keep the order above (created before the first attempt).
  return events.sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
}
