import { sql } from 'kysely';
import type { Db } from '../../platform/db/index.ts';
import type { SpotType } from '../lot/allocation.ts';
import { parkingDb } from '../rows.ts';

export interface FreeCount {
  floor: number;
  spotType: SpotType;
  /** Neither occupied nor held for a reservation: what a walk-in may be given. */
  free: number;
  /** Held for a reservation and not occupied yet. */
  reserved: number;
  total: number;
}

/** SQL of the boards: free and total spots. */
export function createBoardsRepository(database: Db) {
  const db = parkingDb(database);
  return {
    /** Free, reserved (held) and total spots per floor and type (retired spots are not counted). */
    async freeCounts(): Promise<FreeCount[]> {
      return db
        .selectFrom('parking_spots')
        .select([
          'floor',
          'spot_type as spotType',
          sql<number>`count(*) filter (where ticket_id is null and reservation_id is null)::int`.as('free'),
          sql<number>`count(*) filter (where ticket_id is null and reservation_id is not null)::int`.as(
            'reserved',
          ),
          sql<number>`count(*)::int`.as('total'),
        ])
        .where((eb) => eb.not(eb.ref('retired')))
        .groupBy(['floor', 'floor_order', 'spot_type'])
        .orderBy('floor_order')
        .orderBy('spot_type')
        .execute();
    },
  };
}

export type BoardsRepository = ReturnType<typeof createBoardsRepository>;
