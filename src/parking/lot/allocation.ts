/**
 * Vehicles, spot types and the spec's fit rules, plus the order in which free spots are offered.
 * Pure functions: the repository turns the order into SQL, the lot sync stores it per spot.
 */
export const VEHICLE_TYPES = ['MOTORCYCLE', 'CAR', 'BUS'] as const;
export type VehicleType = (typeof VEHICLE_TYPES)[number];

export const SPOT_TYPES = ['MOTORCYCLE', 'COMPACT', 'LARGE', 'HANDICAPPED', 'ELECTRIC'] as const;
export type SpotType = (typeof SPOT_TYPES)[number];

/** Special spots a driver may ask for; they are offered last to everyone else. */
export const NEEDS = ['HANDICAPPED', 'ELECTRIC'] as const;
export type Need = (typeof NEEDS)[number];

/**
 * Spec's fit table, each list in offering order: the smallest fitting type first, so a motorcycle
 * does not take a large spot a bus could use; HANDICAPPED and ELECTRIC last, kept for those who need them.
 */
const OFFER_ORDER: Record<VehicleType, readonly SpotType[]> = {
  MOTORCYCLE: ['MOTORCYCLE', 'COMPACT', 'LARGE', 'HANDICAPPED', 'ELECTRIC'],
  CAR: ['COMPACT', 'LARGE', 'HANDICAPPED', 'ELECTRIC'],
  BUS: ['LARGE'],
};

export function fits(vehicle: VehicleType, spot: SpotType): boolean {
  return OFFER_ORDER[vehicle].includes(spot);
}

export function fittingSpotTypes(vehicle: VehicleType): readonly SpotType[] {
  return OFFER_ORDER[vehicle];
}

/** Position of a spot type in a vehicle's offering order (0 = offered first), or null when it does not fit. */
export function offerRank(vehicle: VehicleType, spot: SpotType): number | null {
  const index = OFFER_ORDER[vehicle].indexOf(spot);
  return index === -1 ? null : index;
}

/** The needs a vehicle can actually be given (a BUS fits LARGE spots only). */
export function unfitNeeds(vehicle: VehicleType, needs: readonly Need[]): Need[] {
  return needs.filter((need) => !fits(vehicle, need));
}

/**
 * Upper case, without spaces, dashes or dots, so "ab-123 c" and "AB123C" are the same vehicle.
 * Returns undefined when what is left is not 1 to 10 letters and digits.
 */
export function normalisePlate(raw: string): string | undefined {
  const plate = raw
    .normalize('NFKC')
    .toUpperCase()
    .replace(/[\s\-.·]/g, '');
  return /^[\p{Lu}\p{Nd}]{1,10}$/u.test(plate) ? plate : undefined;
}
