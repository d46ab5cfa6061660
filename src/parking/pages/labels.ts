import {
  fits,
  fittingSpotTypes,
  NEEDS,
  SPOT_TYPES,
  type SpotType,
  VEHICLE_TYPES,
  type VehicleType,
} from '../lot/allocation.ts';
import type { LotConfig } from '../lot/config.ts';

/** Words for the pages: vehicles and spot types as drivers call them, times on the lot's clock. */
export const VEHICLE_LABELS: Record<VehicleType, { one: string; many: string }> = {
  MOTORCYCLE: { one: 'Motorcycle', many: 'Motorcycles' },
  CAR: { one: 'Car', many: 'Cars' },
  BUS: { one: 'Bus', many: 'Buses' },
};

export const SPOT_LABELS: Record<SpotType, string> = {
  MOTORCYCLE: 'motorcycle',
  COMPACT: 'compact',
  LARGE: 'large',
  HANDICAPPED: 'accessible',
  ELECTRIC: 'EV charging',
};

/** The spot types of the lot file, in the order of SPOT_TYPES. */
export function spotTypesOf(lot: LotConfig): Set<SpotType> {
  return new Set(lot.floors.flatMap((floor) => floor.spots.map((spot) => spot.type)));
}

/**
 * The entry form's choices under the lot's rules: a vehicle is offered only when some spot of the
 * lot fits it, a need only when the lot has such spots, and each need says which vehicles may ask
 * for it (a bus fits large spots only: never accessible or charging), so the form never offers a
 * combination the entry would refuse.
 */
export function entryChoices(lot: LotConfig) {
  const present = spotTypesOf(lot);
  const vehicles = VEHICLE_TYPES.map((type) => {
    const fitting = fittingSpotTypes(type).filter((spot) => present.has(spot));
    return {
      type,
      label: VEHICLE_LABELS[type].one,
      possible: fitting.length > 0,
      uses: fitting.map((spot) => SPOT_LABELS[spot]).join(', '),
    };
  });
  const needs = NEEDS.filter((need) => present.has(need)).map((need) => ({
    need,
    label: SPOT_LABELS[need],
    vehicles: VEHICLE_TYPES.filter((vehicle) => fittingSpotTypes(vehicle).includes(need)),
  }));
  return { vehicles, needs };
}

/** Per vehicle type, the spot types it may use in words (the boards' legend). */
export function vehicleLegend(lot: LotConfig) {
  const present = spotTypesOf(lot);
  return Object.fromEntries(
    VEHICLE_TYPES.map((type) => [
      type,
      {
        ...VEHICLE_LABELS[type],
        uses: fittingSpotTypes(type)
          .filter((spot) => present.has(spot))
          .map((spot) => SPOT_LABELS[spot])
          .join(', '),
      },
    ]),
  );
}

const clocks = new Map<string, Intl.DateTimeFormat>();

/** A time on the lot's wall clock with its zone ("7:19:05 PM EST"), whatever the viewer's zone. */
export function lotClock(iso: string | Date, timeZone: string): string {
  let format = clocks.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hour: 'numeric',
      minute: '2-digit',
      second: '2-digit',
      timeZoneName: 'short',
    });
    clocks.set(timeZone, format);
  }
  return format.format(new Date(iso));
}

/**
 * The reservation form's choices: the spot types the lot takes reservations of, each with the
 * vehicles it fits, and the vehicles that fit at least one of them (a bus: large spots only).
 */
export function reservationChoices(lot: LotConfig) {
  const reservable = SPOT_TYPES.filter((type) => (lot.reservations?.spots[type] ?? 0) > 0);
  return {
    spotTypes: reservable.map((type) => ({
      type,
      label: SPOT_LABELS[type],
      vehicles: VEHICLE_TYPES.filter((vehicle) => fits(vehicle, type)),
    })),
    vehicles: VEHICLE_TYPES.filter((vehicle) => reservable.some((type) => fits(vehicle, type))).map(
      (type) => ({
        type,
        label: VEHICLE_LABELS[type].one,
      }),
    ),
  };
}
