import type { Clock } from '../../platform/clock.ts';
import type { LotConfig } from '../lot/config.ts';
import type { BoardsRepository } from './repository.ts';
import { availabilityView, boardsView } from './views.ts';

/** Free spots per floor and type: availability and the display boards. */
export function createBoardsService(deps: { repository: BoardsRepository; lot: LotConfig; clock: Clock }) {
  const { lot, clock } = deps;
  // Counting is a pass over every spot of the lot: the boards' readers (panels, apps, the
  // availability API) asking at once share one count instead of each starting its own.
  const freeCounts = sharedReads(() => deps.repository.freeCounts());
  return {
    availability: async () => availabilityView(lot, await freeCounts()),
    boards: async () => boardsView(lot, await freeCounts(), clock.now()),
    /** Free and total spots per floor and type, from the same shared count (the metrics' scrape). */
    spotCounts: freeCounts,
  };
}

export type BoardsService = ReturnType<typeof createBoardsService>;

/**
 * `read` shared by concurrent callers, yet never stale for any of them: a caller gets the answer
 * of a read that started after it asked. While one read runs, every new caller waits for the
 * single next read, which starts as soon as the running one ends.
 */
export function sharedReads<T>(read: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  let next: Promise<T> | undefined;
  const start = () => {
    const started: Promise<T> = read().finally(() => {
      if (running === started) running = undefined;
    });
    running = started;
    return started;
  };
  return () => {
    if (running === undefined) return start();
    next ??= running.then(
      () => {
        next = undefined;
        return start();
      },
      () => {
        next = undefined;
        return start();
      },
    );
    return next;
  };
}
