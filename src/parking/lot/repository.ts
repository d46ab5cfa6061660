import { sql, type Transaction } from 'kysely';
import type { Db } from '../../platform/db/index.ts';
import { parkingDb } from '../rows.ts';
import type { ParkingTables } from '../tables.ts';
import type { SpotType, VehicleType } from './allocation.ts';

/** A spot of the lot file as a row, with its offering rank per vehicle type. */
export interface SpotRow {
  id: string;
  floor: number;
  floorOrder: number;
  position: number;
  spotType: SpotType;
  ranks: Record<VehicleType, number | null>;
}

export function createLotRepository(database: Db) {
  const db = parkingDb(database);
  return {
    /** Makes the table match the lot config: new spots added, changed ones updated, removed ones retired. */
    async syncSpots(spots: SpotRow[]): Promise<void> {
      await db.transaction().execute(async (trx) => {
        // Processes starting together would otherwise lock the same rows from two statements at once.
        await trx
          .selectNoFrom(sql`pg_advisory_xact_lock(hashtext('parking.sync_spots'))`.as('locked'))
          .execute();
        for (let start = 0; start < spots.length; start += 2000) {
          await upsertSpots(trx, spots.slice(start, start + 2000));
        }
        // A retired spot keeps a vehicle parked on it until that vehicle leaves, but is never offered again.
        await trx
          .updateTable('parking_spots')
          .set({ retired: true, rank_motorcycle: null, rank_car: null, rank_bus: null })
          .where((eb) => eb.not(eb.ref('retired')))
          .where('id', '<>', sql<string>`all(${spots.map((spot) => spot.id)}::text[])`)
          .execute();
      });
    },
  };
}

export type LotRepository = ReturnType<typeof createLotRepository>;

/** New spots inserted, changed ones updated (and un-retired); unchanged rows are not written. */
function upsertSpots(trx: Transaction<ParkingTables>, spots: SpotRow[]) {
  return trx
    .insertInto('parking_spots')
    .values(
      spots.map((spot) => ({
        id: spot.id,
        floor: spot.floor,
        floor_order: spot.floorOrder,
        position: spot.position,
        spot_type: spot.spotType,
        rank_motorcycle: spot.ranks.MOTORCYCLE,
        rank_car: spot.ranks.CAR,
        rank_bus: spot.ranks.BUS,
      })),
    )
    .onConflict((oc) =>
      oc
        .column('id')
        .doUpdateSet((eb) => ({
          floor: eb.ref('excluded.floor'),
          floor_order: eb.ref('excluded.floor_order'),
          position: eb.ref('excluded.position'),
          spot_type: eb.ref('excluded.spot_type'),
          rank_motorcycle: eb.ref('excluded.rank_motorcycle'),
          rank_car: eb.ref('excluded.rank_car'),
          rank_bus: eb.ref('excluded.rank_bus'),
          retired: false,
        }))
        .where(
          sql<boolean>`(parking_spots.floor, parking_spots.floor_order, parking_spots.position, parking_spots.spot_type,
            parking_spots.rank_motorcycle, parking_spots.rank_car, parking_spots.rank_bus, parking_spots.retired)
            is distinct from (excluded.floor, excluded.floor_order, excluded.position, excluded.spot_type,
            excluded.rank_motorcycle, excluded.rank_car, excluded.rank_bus, false)`,
        ),
    )
    .execute();
}
