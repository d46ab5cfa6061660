import { LRUCache } from 'lru-cache';
import type { Clock } from '../../platform/clock.ts';
import type { PubSub } from '../../platform/pubsub/index.ts';

const CHANNEL = 'booking.seats.released';

/** A seat seen taken, and when its hold ends (Infinity when booked or closed). */
export interface TakenSeat {
  id: string;
  until: number;
}

interface ShowEntries {
  seats: Map<string, number>;
  /** The stamp of the latest release of the show's seats: reads stamped before it are stale. */
  releasedAt: number;
  loadedAt: number;
  loading: boolean;
}

/**
 * A per-process filter in front of the arbiter: seats this process has seen taken — by its own
 * holds, in the arbiter's answer to a refused one, and, after a refusal, all the show's taken
 * seats read in one query (at most every `reloadMs`, 10 s) — each remembered until its hold ends
 * and at most `ttlMs` (30 s, the seat availability lifetime of the spec). A hold naming a seat the
 * filter knows is taken is refused (409) without a transaction, so clicks on a sold-out hot show
 * cost no database work. It can only refuse, never grant: PostgreSQL still decides every hold
 * that passes.
 *
 * Any release (a hold let go or expired, a payment failed, a booking or show cancelled) clears
 * the show's entries in every process through pub/sub; should that message be lost, the entries
 * run out after `ttlMs` anyway. A read that started before a release (a claim's answer or a
 * load, `stamp`ed when it started) may still name the freed seats, so it is dropped when it
 * arrives after the release: a freed seat is never refused because of it.
 */
export function createTakenFilter(deps: { clock: Clock; pubsub: PubSub; ttlMs?: number; reloadMs?: number }) {
  const { clock, pubsub } = deps;
  const ttlMs = deps.ttlMs ?? 30_000;
  const reloadMs = deps.reloadMs ?? 10_000;
  const shows = new LRUCache<string, ShowEntries>({ max: 1000 });
  /** Orders reads and releases within this process. */
  let sequence = 0;
  let subscribed = false;

  function forget(showId: string) {
    const entries = shows.get(showId);
    if (!entries) return;
    entries.seats.clear();
    entries.releasedAt = ++sequence;
  }

  function entriesOf(showId: string): ShowEntries {
    if (!subscribed) {
      subscribed = true;
      void pubsub.subscribe(CHANNEL, (message) => forget((message as { show_id: string }).show_id));
    }
    let entries = shows.get(showId);
    if (!entries) {
      entries = {
        seats: new Map(),
        releasedAt: ++sequence,
        loadedAt: Number.NEGATIVE_INFINITY,
        loading: false,
      };
      shows.set(showId, entries);
    }
    return entries;
  }

  /** Seats read at `stamp`; dropped if the show had a release since (or was evicted meanwhile). */
  function remember(showId: string, seats: TakenSeat[], stamp: number): void {
    const entries = shows.get(showId);
    if (!entries || entries.releasedAt > stamp) return;
    const now = clock.now().getTime();
    const cap = now + ttlMs;
    for (const seat of seats) if (seat.until > now) entries.seats.set(seat.id, Math.min(seat.until, cap));
  }

  return {
    /** Which of these seats are known to be taken right now. */
    taken(showId: string, seatIds: string[]): string[] {
      const entries = shows.get(showId);
      if (!entries || entries.seats.size === 0) return [];
      const now = clock.now().getTime();
      return seatIds.filter((id) => (entries.seats.get(id) ?? 0) > now);
    },

    /** Call before a read of the show's seats (a claim); pass the stamp to `remember`. */
    stamp(showId: string): number {
      entriesOf(showId);
      return ++sequence;
    },

    remember,

    /**
     * After a refusal: reads every taken seat of the show (`load`) in the background, unless a
     * read is running or one started less than `reloadMs` ago. Resolves when it is done.
     */
    async refresh(showId: string, load: () => Promise<TakenSeat[]>): Promise<void> {
      const entries = entriesOf(showId);
      const now = clock.now().getTime();
      if (entries.loading || now - entries.loadedAt < reloadMs) return;
      entries.loading = true;
      entries.loadedAt = now;
      const stamp = ++sequence;
      try {
        remember(showId, await load(), stamp);
      } catch {
        // Only a filter: the arbiter still decides; the next refusal after `reloadMs` tries again.
      } finally {
        entries.loading = false;
      }
    },

    /** Some seats of the show were released: forget what every process knows about it. */
    async released(showId: string): Promise<void> {
      forget(showId);
      await pubsub.publish(CHANNEL, { show_id: showId });
    },
  };
}

export type TakenFilter = ReturnType<typeof createTakenFilter>;
