import type { Clock } from '../../platform/clock.ts';
import { uuidv7 } from '../../platform/ids.ts';
import type { ParkingEvents } from '../boards/events.ts';
import { plateOrThrow } from '../checks.ts';
import { err } from '../errors.ts';
import { fits, type SpotType, type VehicleType } from '../lot/allocation.ts';
import type { LotConfig, ReservationRules } from '../lot/config.ts';
import type { ReservationOutcome } from '../metrics.ts';
import { feeFor } from '../pricing/pricing.ts';
import { lotDateTime, stayRule } from '../receipts/receipt.ts';
import type { ReservationRow } from '../tables.ts';
import { money } from '../views.ts';
import { peakOverlap, type Refusal, type ReservationsRepository } from './repository.ts';

const MINUTE = 60_000;
/** The shortest window one may book: below it a hold would cost a spot for less than a stay's worth. */
export const MIN_RESERVATION_MINUTES = 30;

export interface ReservationRequest {
  licensePlate: string;
  vehicleType: VehicleType;
  spotType: SpotType;
  startsAt: string;
  endsAt: string;
}

/** Reservations counted by outcome, hold failures counted (`parking_reservations_total`, …). */
export interface ReservationMetrics {
  reservation(outcome: ReservationOutcome, count?: number): void;
  holdFailed(count?: number): void;
}

/**
 * Reservations (README, "Reservations"): a spot type booked for a window, held on a concrete spot
 * from `holdAheadMinutes` before its start, taken by the plate's entry, a no-show after
 * `graceMinutes`. Money is only taken at the exit.
 */
export function createReservationsService(deps: {
  repository: ReservationsRepository;
  lot: LotConfig;
  events: ParkingEvents;
  clock: Clock;
  metrics?: ReservationMetrics;
}) {
  const { repository, lot, clock, events, metrics } = deps;

  function rulesOrThrow(): ReservationRules {
    if (lot.reservations) return lot.reservations;
    throw err('reservations_closed', `${lot.name} takes no reservations; just drive in`);
  }

  /** The window asked for, checked against the lot's rules; each problem names its field. */
  function windowOrThrow(rules: ReservationRules, startsAt: string, endsAt: string, now: Date) {
    const start = new Date(startsAt);
    const end = new Date(endsAt);
    const refuse = (field: 'startsAt' | 'endsAt', message: string) =>
      err('invalid_reservation_window', {
        detail: message,
        extras: { errors: [{ field: `body.${field}`, message }] },
      });
    if (start.getTime() <= now.getTime()) throw refuse('startsAt', 'The start must be in the future');
    if (end.getTime() <= start.getTime()) throw refuse('endsAt', 'The end must be after the start');
    if (end.getTime() - start.getTime() < MIN_RESERVATION_MINUTES * MINUTE) {
      throw refuse('endsAt', `A reservation lasts at least ${MIN_RESERVATION_MINUTES} minutes`);
    }
    if (start.getTime() > now.getTime() + rules.maxDaysAhead * 1440 * MINUTE) {
      throw refuse('startsAt', `Reservations open ${rules.maxDaysAhead} days ahead at most`);
    }
    return { start, end };
  }

  function fitOrThrow(vehicleType: VehicleType, spotType: SpotType) {
    if (!fits(vehicleType, spotType)) {
      throw err('needs_not_possible', {
        detail: `A ${vehicleType} does not fit a ${spotType} spot`,
        extras: { errors: [{ field: 'body.spotType', message: `does not fit a ${vehicleType}` }] },
      });
    }
  }

  function quote(vehicleType: VehicleType, start: Date, end: Date) {
    const stay = { vehicleType, entryTime: start, exitTime: end };
    const minor = feeFor(lot.pricing, stay, lot.timeZone);
    const cash = (amount: number) => `${money(amount).toFixed(2)} ${lot.currency}`;
    return { minor, rule: stayRule(lot.pricing, stay, lot.timeZone, cash) };
  }

  /** The JSON of a reservation: instants in UTC, the same on the lot's wall clock under `local`. */
  function view(row: ReservationRow) {
    const graceMs = (lot.reservations?.graceMinutes ?? 0) * MINUTE;
    const holdUntil = new Date(row.startsAt.getTime() + graceMs);
    const local = (at: Date) => lotDateTime(at, lot.timeZone);
    return {
      reservationId: row.id,
      status: row.status,
      licensePlate: row.licensePlate,
      vehicleType: row.vehicleType,
      spotType: row.spotType,
      startsAt: row.startsAt.toISOString(),
      endsAt: row.endsAt.toISOString(),
      holdUntil: holdUntil.toISOString(),
      timeZone: lot.timeZone,
      local: { startsAt: local(row.startsAt), endsAt: local(row.endsAt), holdUntil: local(holdUntil) },
      quote: {
        amount: money(row.quoteMinor),
        currency: row.currency,
        rule: quote(row.vehicleType, row.startsAt, row.endsAt).rule,
      },
      spotId: row.status === 'HELD' || row.status === 'USED' ? row.spotId : null,
      floor: row.status === 'HELD' || row.status === 'USED' ? row.floor : null,
      ticketId: row.ticketId,
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
    };
  }

  const refusals: Record<Refusal, (spotType: SpotType, rules: ReservationRules) => Error> = {
    too_many: (_type, rules) =>
      err(
        'too_many_reservations',
        `You already have ${rules.perUser} live reservations, the most one person may`,
      ),
    overlap: () =>
      err('reservation_overlaps', 'This plate already has a reservation overlapping this window'),
    full: (type) =>
      err('no_reservable_spot', `Every ${type} spot that can be reserved is taken for part of this window`),
    no_spot: (type) =>
      err(
        'no_reservable_spot',
        `No ${type} spot is free right now to hold for a reservation starting this soon`,
      ),
  };

  async function book(userId: string, request: ReservationRequest) {
    const rules = rulesOrThrow();
    const licensePlate = plateOrThrow(request.licensePlate);
    fitOrThrow(request.vehicleType, request.spotType);
    const now = clock.now();
    const { start, end } = windowOrThrow(rules, request.startsAt, request.endsAt, now);
    const limit = rules.spots[request.spotType] ?? 0;
    if (limit === 0) throw refusals.full(request.spotType, rules);
    const booked = await repository.book(
      {
        id: uuidv7(),
        userId,
        licensePlate,
        vehicleType: request.vehicleType,
        spotType: request.spotType,
        startsAt: start,
        endsAt: end,
        quoteMinor: quote(request.vehicleType, start, end).minor,
        currency: lot.currency,
        createdAt: now,
      },
      {
        limit,
        perUser: rules.perUser,
        holdNow: start.getTime() - rules.holdAheadMinutes * MINUTE <= now.getTime(),
      },
    );
    if (typeof booked === 'string') throw refusals[booked](request.spotType, rules);
    metrics?.reservation('booked');
    if (booked.status === 'HELD') void events.spotsChanged(now);
    return view(booked);
  }

  /** How many more reservations of a type the window takes, and (with a vehicle) its quote. */
  async function availability(query: {
    spotType: SpotType;
    startsAt: string;
    endsAt: string;
    vehicleType?: VehicleType;
  }) {
    const rules = rulesOrThrow();
    const { start, end } = windowOrThrow(rules, query.startsAt, query.endsAt, clock.now());
    if (query.vehicleType) fitOrThrow(query.vehicleType, query.spotType);
    const limit = rules.spots[query.spotType] ?? 0;
    const live = await repository.overlapping(query.spotType, start, end);
    const priced = query.vehicleType && quote(query.vehicleType, start, end);
    return {
      spotType: query.spotType,
      startsAt: start.toISOString(),
      endsAt: end.toISOString(),
      limit,
      available: Math.max(0, limit - peakOverlap(live, start, end)),
      quote: priced ? { amount: money(priced.minor), currency: lot.currency, rule: priced.rule } : null,
    };
  }

  async function mine(userId: string) {
    return { reservations: (await repository.mine(userId)).map(view) };
  }

  /** One of the user's reservations; anyone else's is answered as unknown. */
  async function reservation(userId: string, id: string) {
    const row = await repository.byId(id);
    if (!row || row.userId !== userId) throw notFound(id);
    return view(row);
  }

  async function cancel(userId: string, id: string) {
    const now = clock.now();
    const found = await repository.cancel(id, userId, now);
    if (!found) throw notFound(id);
    const { row, cancelled } = found;
    if (row.status !== 'CANCELLED') {
      throw err('reservation_not_cancellable', {
        detail: `This reservation is ${row.status.replace('_', ' ').toLowerCase()}; it can no longer be cancelled`,
        extras: { status: row.status },
      });
    }
    if (!cancelled) return view(row); // cancelled before: cancelling again changes nothing
    metrics?.reservation('cancelled');
    if (row.spotId) void events.spotsChanged(now);
    return view(row);
  }

  /**
   * The `parking.reservations` job: no-shows released first (their spots may serve a hold), then
   * a spot held for every BOOKED reservation within `holdAheadMinutes` of its start. A hold that
   * finds its type full of walk-ins is counted and tried again next run.
   */
  async function runReservations(at: Date) {
    const rules = lot.reservations;
    if (!rules) return { noShows: 0, held: 0, failed: 0 };
    const noShows = await repository.releaseNoShows(new Date(at.getTime() - rules.graceMinutes * MINUTE), at);
    if (noShows > 0) metrics?.reservation('no_show', noShows);
    let held = 0;
    let failed = 0;
    for (const due of await repository.dueForHold(new Date(at.getTime() + rules.holdAheadMinutes * MINUTE))) {
      if (await repository.hold(due, at)) held++;
      else failed++;
    }
    if (failed > 0) metrics?.holdFailed(failed);
    if (noShows > 0 || held > 0) void events.spotsChanged(at);
    return { noShows, held, failed };
  }

  return {
    book,
    availability,
    mine,
    reservation,
    cancel,
    runReservations,
    reservationRules: () => lot.reservations,
  };
}

function notFound(id: string) {
  return err('reservation_not_found', `No reservation ${id} of yours`);
}

export type ReservationsService = ReturnType<typeof createReservationsService>;
