import { offerRank } from './allocation.ts';
import type { LotConfig } from './config.ts';
import type { LotRepository, SpotRow } from './repository.ts';

/** The lot file's spots in the database: synced at every start-up (README, "The lot file"). */
export function createLotService(deps: { repository: LotRepository; lot: LotConfig }) {
  const { repository, lot } = deps;

  /** Spots of the config as rows, each with its offering rank per vehicle type. */
  function spotRows(): SpotRow[] {
    return lot.floors.flatMap((floor, floorOrder) =>
      floor.spots.map((spot, position) => ({
        id: spot.id,
        floor: floor.floor,
        floorOrder,
        position,
        spotType: spot.type,
        ranks: {
          MOTORCYCLE: offerRank('MOTORCYCLE', spot.type),
          CAR: offerRank('CAR', spot.type),
          BUS: offerRank('BUS', spot.type),
        },
      })),
    );
  }

  return { syncSpots: () => repository.syncSpots(spotRows()) };
}
