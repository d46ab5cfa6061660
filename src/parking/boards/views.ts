import type { SpotType } from '../lot/allocation.ts';
import type { LotConfig } from '../lot/config.ts';
import type { FreeCount } from './repository.ts';

/** The JSON of availability and the display boards. */
const COLUMNS: Record<SpotType, 'motorcycle' | 'compact' | 'large' | 'handicapped' | 'electric'> = {
  MOTORCYCLE: 'motorcycle',
  COMPACT: 'compact',
  LARGE: 'large',
  HANDICAPPED: 'handicapped',
  ELECTRIC: 'electric',
};

const zeros = (): Record<SpotType, number> => ({
  MOTORCYCLE: 0,
  COMPACT: 0,
  LARGE: 0,
  HANDICAPPED: 0,
  ELECTRIC: 0,
});

/** Spec: `floors: [{floor, motorcycle, compact, large}]`, plus handicapped and electric. */
export function availabilityView(lot: LotConfig, counts: FreeCount[]) {
  return {
    floors: lot.floors.map((floor) => {
      const row = { floor: floor.floor, motorcycle: 0, compact: 0, large: 0, handicapped: 0, electric: 0 };
      for (const count of counts) if (count.floor === floor.floor) row[COLUMNS[count.spotType]] = count.free;
      return row;
    }),
  };
}

/** One display board per floor (spec: boardId, availableSpots per type), plus the lot's totals. */
export function boardsView(lot: LotConfig, counts: FreeCount[], at: Date) {
  const total = zeros();
  const capacity = zeros();
  const boards = lot.floors.map((floor) => {
    const availableSpots = zeros();
    const totalSpots = zeros();
    for (const count of counts) {
      if (count.floor !== floor.floor) continue;
      availableSpots[count.spotType] = count.free;
      totalSpots[count.spotType] = count.total;
      total[count.spotType] += count.free;
      capacity[count.spotType] += count.total;
    }
    return { boardId: floor.boardId, floor: floor.floor, name: floor.name, availableSpots, totalSpots };
  });
  return {
    lot: { id: lot.id, name: lot.name },
    updatedAt: at.toISOString(),
    boards,
    total: { availableSpots: total, totalSpots: capacity },
  };
}

export type BoardsView = ReturnType<typeof boardsView>;
