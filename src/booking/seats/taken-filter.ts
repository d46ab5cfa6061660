import { LRUCache } from 'lru-cache';
import type { Clock } from '../../platform/clock.ts';
import type { PubSub } from '../../platform/pubsub/index.ts';

const CHANNEL = 'booking.seats.released';

/**
 * A per-process filter in front of the arbiter: seats this process has seen taken (by its own
 * holds, or in the arbiter's answer to a refused one), each remembered until its hold ends and
 * at most `ttlMs` (30 s, the seat availability lifetime of the spec). A hold naming a seat the
 * filter knows is taken is refused (409) without asking PostgreSQL, so clicks on a sold-out hot
 * show cost no database work. It can only refuse, never grant: PostgreSQL still decides every
 * hold that passes. Any release (a hold let go or expired, a payment failed, a booking or show
 * cancelled) clears the show's entries in every process through pub/sub; should that message be
 * lost, the entries run out after `ttlMs` anyway.
 */
export function createTakenFilter(deps: { clock: Clock; pubsub: PubSub; ttlMs?: number }) {
  const { clock, pubsub } = deps;
  const ttlMs = deps.ttlMs ?? 30_000;
  const shows = new LRUCache<string, Map<string, number>>({ max: 1000 });
  let subscribed = false;

  return {
    /** Which of these seats are known to be taken right now. */
    taken(showId: string, seatIds: string[]): string[] {
      const entries = shows.get(showId);
      if (!entries) return [];
      const now = clock.now().getTime();
      return seatIds.filter((id) => (entries.get(id) ?? 0) > now);
    },

    /** Seats seen taken, with when their hold ends (Infinity for booked seats). */
    remember(showId: string, seats: { id: string; until: number }[]): void {
      if (!subscribed) {
        subscribed = true;
        void pubsub.subscribe(CHANNEL, (message) => {
          shows.delete((message as { show_id: string }).show_id);
        });
      }
      let entries = shows.get(showId);
      if (!entries) {
        entries = new Map();
        shows.set(showId, entries);
      }
      const cap = clock.now().getTime() + ttlMs;
      for (const seat of seats) entries.set(seat.id, Math.min(seat.until, cap));
    },

    /** Some seats of the show were released: forget what every process knows about it. */
    async released(showId: string): Promise<void> {
      shows.delete(showId);
      await pubsub.publish(CHANNEL, { show_id: showId });
    },
  };
}

export type TakenFilter = ReturnType<typeof createTakenFilter>;
