import type { RateDecision, RateLimiter, RatePolicy } from './index.ts';

/** A key's current window: points spent in it and when it ends (ms since the epoch). */
interface Window {
  spent: number;
  endsAt: number;
}

/** Ended windows are dropped after this many new ones, so a stream of addresses cannot grow the map for ever. */
const SWEEP_AFTER = 10_000;

/** A caller's window as its counter's expiry: whole ms, at least 1 (an expiry of 0 would keep it forever). */
function windowExpiryMs(resetInMs: number): number {
  return Math.max(1, Math.ceil(resetInMs));
}

/**
 * Counters in this process (one process: `npm start`, tests): a fixed window per key that starts
 * with its first spend and lasts the policy's duration (or the caller's window), as the Redis
 * limiter's counters do, and shared by every policy of one name, as there. Decided without I/O,
 * so `consumeNow` answers at once and a route's hook does not wait for a promise per request.
 */
export function createMemoryRateLimiter(now: () => number = Date.now): RateLimiter {
  const counters = new Map<string, Map<string, Window>>();
  let created = 0;

  function windowsOf(policy: RatePolicy): Map<string, Window> {
    let windows = counters.get(policy.name);
    if (!windows) {
      windows = new Map();
      counters.set(policy.name, windows);
    }
    return windows;
  }

  function sweep(at: number): void {
    for (const windows of counters.values())
      for (const [key, window] of windows) if (window.endsAt <= at) windows.delete(key);
  }

  /** The key's live window, or undefined when it has none (never spent, or its window ended). */
  function live(policy: RatePolicy, key: string, at: number): Window | undefined {
    const window = counters.get(policy.name)?.get(key);
    return window !== undefined && window.endsAt > at ? window : undefined;
  }

  function decision(
    policy: RatePolicy,
    window: Window | undefined,
    allowed: boolean,
    at: number,
  ): RateDecision {
    return {
      allowed,
      limit: policy.points,
      remaining: Math.max(0, policy.points - (window?.spent ?? 0)),
      resetMs: policy.resetInMs ?? (window ? window.endsAt - at : policy.durationSec * 1000),
    };
  }

  function consumeNow(policy: RatePolicy, key: string, points = 1): RateDecision {
    if (!Number.isInteger(points)) throw new Error('points must be an integer');
    const at = now();
    let window = live(policy, key, at);
    if (window === undefined) {
      const length =
        policy.resetInMs === undefined ? policy.durationSec * 1000 : windowExpiryMs(policy.resetInMs);
      window = { spent: 0, endsAt: at + length };
      windowsOf(policy).set(key, window);
      if (++created >= SWEEP_AFTER) {
        created = 0;
        sweep(at);
      }
    }
    const allowed = window.spent + points <= policy.points;
    if (allowed) window.spent += points;
    return decision(policy, window, allowed, at);
  }

  return {
    kind: 'memory',
    consumeNow,
    consume: async (policy, key, points) => consumeNow(policy, key, points),
    async peek(policy, key) {
      const at = now();
      return decision(policy, live(policy, key, at), true, at);
    },
    async refund(policy, key, points = 1) {
      const window = live(policy, key, now());
      if (window) window.spent = Math.max(0, window.spent - points);
    },
    ping: async () => {},
    close: async () => {
      counters.clear();
    },
  };
}
