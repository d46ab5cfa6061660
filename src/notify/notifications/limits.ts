import type { Clock } from '../../platform/clock.ts';
import type { RateDecision, RateLimiter, RatePolicy } from '../../platform/ratelimit/index.ts';
import { CHANNELS, type Channel } from '../api.ts';
import type { NotifySettings } from '../settings.ts';

/**
 * Per user and channel limits (push 50/h, SMS 5/day, e-mail 10/day) in fixed windows aligned
 * to the clock (UTC hours and days). The window is part of the counter's key, so the limits
 * follow the app's clock: tests move time instead of sleeping, and every process agrees.
 */
export function createChannelLimits(deps: { limiter: RateLimiter; clock: Clock; settings: NotifySettings }) {
  const { limiter, clock, settings } = deps;
  const policy = (channel: Channel, resetInMs?: number): RatePolicy => ({
    name: `notify.${channel}`,
    points: settings.limits[channel].points,
    durationSec: settings.limits[channel].windowSec,
    resetInMs,
  });
  const window = (channel: Channel) => {
    const lengthMs = settings.limits[channel].windowSec * 1000;
    const now = clock.now().getTime();
    const index = Math.floor(now / lengthMs);
    return { index, resetMs: (index + 1) * lengthMs - now };
  };
  const decide = (channel: Channel, userId: string, spend: boolean): Promise<RateDecision> => {
    const { index, resetMs } = window(channel);
    const key = `${userId}:${index}`;
    return spend
      ? limiter.consume(policy(channel, resetMs), key)
      : limiter.peek(policy(channel, resetMs), key);
  };
  return {
    /** Spends one send of the user's channel quota; a refusal spends nothing. */
    consume: (channel: Channel, userId: string) => decide(channel, userId, true),
    /** Gives a spent send back (the request was not stored after all). */
    refund: (channel: Channel, userId: string) =>
      limiter.refund(policy(channel), `${userId}:${window(channel).index}`),
    async overview(userId: string) {
      const now = clock.now().getTime();
      return Promise.all(
        CHANNELS.map(async (channel) => {
          const decision = await decide(channel, userId, false);
          return {
            channel,
            limit: decision.limit,
            window_seconds: settings.limits[channel].windowSec,
            remaining: decision.remaining,
            reset_at: new Date(now + decision.resetMs).toISOString(),
          };
        }),
      );
    },
  };
}

export type ChannelLimits = ReturnType<typeof createChannelLimits>;
