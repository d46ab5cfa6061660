import type { VehicleType } from '../lot/allocation.ts';

/**
 * Pricing strategies of the spec, on integer minor units (cents). Durations are real elapsed
 * time (exit instant minus entry instant), so a night across a daylight-saving change is billed
 * for the hours that actually passed; only "is the entry on a weekend" looks at the lot's wall clock.
 */
export type WeekdayPricing =
  | { strategy: 'hourly'; ratesMinor: Record<VehicleType, number> }
  | { strategy: 'flat'; flatRateMinor: number };

export type Pricing =
  | WeekdayPricing
  | {
      strategy: 'weekend';
      weekday: WeekdayPricing;
      /** The multiplier in basis points (1.5 → 15000), so applying it stays integer arithmetic. */
      multiplierBasisPoints: number;
      /** Days counted as weekend, 0 = Sunday … 6 = Saturday. */
      weekendDays: number[];
    };

export const DAY_NAMES = [
  'SUNDAY',
  'MONDAY',
  'TUESDAY',
  'WEDNESDAY',
  'THURSDAY',
  'FRIDAY',
  'SATURDAY',
] as const;

/** Spec's default rates: MOTORCYCLE 1.0, CAR 2.0, BUS 5.0 per hour. */
export const DEFAULT_HOURLY_RATES_MINOR: Record<VehicleType, number> = {
  MOTORCYCLE: 100,
  CAR: 200,
  BUS: 500,
};

const HOUR_MS = 3_600_000;

export interface Stay {
  vehicleType: VehicleType;
  entryTime: Date;
  exitTime: Date;
}

/**
 * What a ticket pays for when it leaves at `exitTime`: its stay, and for a vehicle that arrived on
 * a reservation the reserved window at least, plus any time outside it
 * ([min(entry, start), max(exit, end)]).
 */
export function billedStay(
  ticket: {
    vehicleType: VehicleType;
    entryTime: Date;
    reservedFrom: Date | null;
    reservedUntil: Date | null;
  },
  exitTime: Date,
): Stay {
  const from = (ticket.reservedFrom ?? ticket.entryTime).getTime();
  const until = (ticket.reservedUntil ?? exitTime).getTime();
  return {
    vehicleType: ticket.vehicleType,
    entryTime: new Date(Math.min(from, ticket.entryTime.getTime())),
    exitTime: new Date(Math.max(until, exitTime.getTime())),
  };
}

/** The fee for a stay under a strategy, in minor units. */
export function feeFor(pricing: Pricing, stay: Stay, timeZone: string): number {
  switch (pricing.strategy) {
    case 'hourly':
      return billableHours(stay) * pricing.ratesMinor[stay.vehicleType];
    case 'flat':
      return pricing.flatRateMinor;
    case 'weekend': {
      const base = feeFor(pricing.weekday, stay, timeZone);
      if (!pricing.weekendDays.includes(dayOfWeekIn(stay.entryTime, timeZone))) return base;
      // Round half up to a whole minor unit; never free (a payment needs a positive amount).
      return Math.max(1, Math.floor((base * pricing.multiplierBasisPoints + 5_000) / 10_000));
    }
  }
}

/** Spec: whole hours of duration, truncated; zero hours counts as one. */
export function billableHours(stay: Stay): number {
  return Math.max(1, Math.floor(elapsedMs(stay) / HOUR_MS));
}

export function elapsedMs(stay: { entryTime: Date; exitTime: Date }): number {
  // A clock that went backwards between entry and exit must not produce a negative stay.
  return Math.max(0, stay.exitTime.getTime() - stay.entryTime.getTime());
}

/** `"<h>h <m>m"` as in the spec, minutes truncated. */
export function formatDuration(ms: number): string {
  const minutes = Math.floor(Math.max(0, ms) / 60_000);
  return `${Math.floor(minutes / 60)}h ${minutes % 60}m`;
}

const weekdayFormats = new Map<string, Intl.DateTimeFormat>();

/** Day of the week (0 = Sunday) of an instant on the wall clock of a time zone. */
export function dayOfWeekIn(instant: Date, timeZone: string): number {
  let format = weekdayFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone, weekday: 'long' });
    weekdayFormats.set(timeZone, format);
  }
  return DAY_NAMES.indexOf(format.format(instant).toUpperCase() as (typeof DAY_NAMES)[number]);
}

/** One line for people (pages, the lot description). */
export function describePricing(pricing: Pricing, currency: string): string {
  const money = (minor: number) => `${(minor / 100).toFixed(2)} ${currency}`;
  switch (pricing.strategy) {
    case 'hourly':
      return `Per full hour parked, at least one: ${Object.entries(pricing.ratesMinor)
        .map(([type, rate]) => `${type} ${money(rate)}`)
        .join(', ')}`;
    case 'flat':
      return `Flat rate ${money(pricing.flatRateMinor)} per stay`;
    case 'weekend':
      return `${describePricing(pricing.weekday, currency)}; ×${pricing.multiplierBasisPoints / 10_000} when entering on ${pricing.weekendDays
        .map((day) => DAY_NAMES[day])
        .join(', ')}`;
  }
}
