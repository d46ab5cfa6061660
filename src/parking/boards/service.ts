import type { Clock } from '../../platform/clock.ts';
import type { LotConfig } from '../lot/config.ts';
import type { BoardsRepository } from './repository.ts';
import { availabilityView, boardsView } from './views.ts';

/** Free spots per floor and type: availability and the display boards. */
export function createBoardsService(deps: { repository: BoardsRepository; lot: LotConfig; clock: Clock }) {
  const { repository, lot, clock } = deps;
  return {
    availability: async () => availabilityView(lot, await repository.freeCounts()),
    boards: async () => boardsView(lot, await repository.freeCounts(), clock.now()),
  };
}

export type BoardsService = ReturnType<typeof createBoardsService>;
