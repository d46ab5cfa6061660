import type { Clock } from '../../platform/clock.ts';
import { isUniqueViolation } from '../../platform/db/errors.ts';
import { uuidv7 } from '../../platform/ids.ts';
import type { ParkingEvents } from '../boards/events.ts';
import { alreadyParked, panelOrThrow, plateOrThrow } from '../checks.ts';
import { err } from '../errors.ts';
import { type Need, unfitNeeds, type VehicleType } from '../lot/allocation.ts';
import type { LotConfig } from '../lot/config.ts';
import type { TicketRow } from '../tables.ts';
import { newTicketCode } from '../tickets/codes.ts';
import { ticketView } from '../views.ts';
import { createEntryBatcher } from './batch.ts';
import type { EntryRepository } from './repository.ts';

export interface EntryRequest {
  licensePlate: string;
  vehicleType: VehicleType;
  needs?: Need[];
  panelId?: string;
}

/** A vehicle enters: the first fitting free spot and a ticket, or 409 (README, "Entry: which spot"). */
export function createEntryService(deps: {
  repository: EntryRepository;
  lot: LotConfig;
  events: ParkingEvents;
  clock: Clock;
  /** Counts a reservation used (`parking_reservations_total{outcome="used"}`). */
  onReservationUsed?: () => void;
}) {
  const { repository, lot, clock, events } = deps;
  const rules = lot.reservations;
  // A lot without reservations never looks for them: no query added to its entries.
  const entries = createEntryBatcher(repository, {
    reservations: rules && {
      arrivals: (plates, at) =>
        repository.arrivals(plates, at, {
          holdAheadMs: rules.holdAheadMinutes * 60_000,
          graceMs: rules.graceMinutes * 60_000,
        }),
      parkReserved: repository.parkReserved,
    },
  });

  async function enter(request: EntryRequest) {
    const licensePlate = plateOrThrow(request.licensePlate);
    const needs = [...new Set(request.needs ?? [])];
    const unfit = unfitNeeds(request.vehicleType, needs);
    if (unfit.length > 0) {
      throw err('needs_not_possible', {
        detail: `A ${request.vehicleType} fits LARGE spots only, not ${unfit.join(' or ')}`,
        extras: { needs: unfit },
      });
    }
    const entryPanelId = panelOrThrow(request.panelId, lot.entryPanels, 'entry');
    const ticket = {
      id: uuidv7(),
      licensePlate,
      vehicleType: request.vehicleType,
      needs,
      entryTime: clock.now(),
      entryPanelId,
    };
    let parked: TicketRow | undefined;
    for (let attempt = 1; ; attempt++) {
      try {
        parked = await entries.park({ ...ticket, code: newTicketCode() });
        break;
      } catch (error) {
        if (isUniqueViolation(error, 'parking_tickets_plate_inside')) throw alreadyParked(licensePlate);
        // The code drawn is on a car inside already (35 random bits: rare): draw another.
        if (attempt < 5 && isUniqueViolation(error, 'parking_tickets_code_inside')) continue;
        throw error;
      }
    }
    if (!parked) {
      if (await repository.ticketInside(licensePlate)) throw alreadyParked(licensePlate);
      throw err('parking_full', {
        detail: `No free spot fits a ${request.vehicleType}${needs.length ? ` (asked for ${needs.join(', ')})` : ''}; no ticket was issued`,
        extras: { vehicleType: request.vehicleType },
      });
    }
    void events.spotsChanged(parked.entryTime);
    if (parked.reservationId) deps.onReservationUsed?.();
    return ticketView(parked);
  }

  return { enter };
}

export type EntryService = ReturnType<typeof createEntryService>;
