import { fittingSpotTypes, type SpotType, VEHICLE_TYPES, type VehicleType } from '../lot/allocation.ts';
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

/**
 * Spec: `floors: [{floor, motorcycle, compact, large}]`, plus handicapped and electric; `reserved`
 * counts the spots held for reservations (not free for a walk-in, not occupied either).
 */
export function availabilityView(lot: LotConfig, counts: FreeCount[]) {
  const columns = () => ({ motorcycle: 0, compact: 0, large: 0, handicapped: 0, electric: 0 });
  return {
    floors: lot.floors.map((floor) => {
      const row = { floor: floor.floor, ...columns(), reserved: columns() };
      for (const count of counts) {
        if (count.floor !== floor.floor) continue;
        row[COLUMNS[count.spotType]] = count.free;
        row.reserved[COLUMNS[count.spotType]] = count.reserved;
      }
      return row;
    }),
  };
}

/**
 * What a driver has is a vehicle, not a spot type: per vehicle type, the free and total spots it
 * may be given under the lot's fit rules (a car: compact, large, accessible and charging spots),
 * and FULL when none of them is free. Vehicles no spot of the place fits are left out.
 */
export function byVehicle(available: Record<SpotType, number>, capacity: Record<SpotType, number>) {
  const vehicles: Partial<Record<VehicleType, { available: number; total: number; full: boolean }>> = {};
  for (const vehicle of VEHICLE_TYPES) {
    const types = fittingSpotTypes(vehicle);
    const total = types.reduce((sum, type) => sum + capacity[type], 0);
    if (total === 0) continue;
    const free = types.reduce((sum, type) => sum + available[type], 0);
    vehicles[vehicle] = { available: free, total, full: free === 0 };
  }
  return vehicles;
}

/** One display board per floor (spec: boardId, availableSpots per type), plus the lot's totals. */
export function boardsView(lot: LotConfig, counts: FreeCount[], at: Date) {
  const total = zeros();
  const capacity = zeros();
  const held = zeros();
  const boards = lot.floors.map((floor) => {
    const availableSpots = zeros();
    const totalSpots = zeros();
    const reservedSpots = zeros();
    for (const count of counts) {
      if (count.floor !== floor.floor) continue;
      availableSpots[count.spotType] = count.free;
      totalSpots[count.spotType] = count.total;
      reservedSpots[count.spotType] = count.reserved;
      total[count.spotType] += count.free;
      capacity[count.spotType] += count.total;
      held[count.spotType] += count.reserved;
    }
    return {
      boardId: floor.boardId,
      floor: floor.floor,
      name: floor.name,
      availableSpots,
      totalSpots,
      reservedSpots,
      reserved: sum(reservedSpots),
      vehicles: byVehicle(availableSpots, totalSpots),
    };
  });
  return {
    lot: { id: lot.id, name: lot.name },
    updatedAt: at.toISOString(),
    boards,
    total: {
      availableSpots: total,
      totalSpots: capacity,
      reservedSpots: held,
      reserved: sum(held),
      vehicles: byVehicle(total, capacity),
    },
  };
}

const sum = (counts: Record<SpotType, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

export type BoardsView = ReturnType<typeof boardsView>;
