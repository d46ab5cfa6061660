import type { FastifyBaseLogger } from 'fastify';
import type { PaymentsApi } from '../payments/api.ts';
import type { Clock } from '../platform/clock.ts';
import { isUniqueViolation } from '../platform/db/errors.ts';
import { uuidv7 } from '../platform/ids.ts';
import { type Need, offerRank, unfitNeeds, type VehicleType } from './allocation.ts';
import { createCheckout } from './checkout.ts';
import { alreadyParked, panelOrThrow, plateOrThrow } from './checks.ts';
import { createEntryBatcher } from './entry-batch.ts';
import { err } from './errors.ts';
import type { ParkingEvents } from './events.ts';
import type { LotConfig } from './lot-config.ts';
import type { ParkingRepository, SpotRow } from './repository.ts';
import { availabilityView, boardsView, ticketView } from './views.ts';

export interface ParkingServiceDeps {
  repository: ParkingRepository;
  lot: LotConfig;
  /** The payments module's public API (parking's payments are `purpose: 'parking'`). */
  payments: PaymentsApi;
  events: ParkingEvents;
  clock: Clock;
  log: FastifyBaseLogger;
}

export interface EntryRequest {
  licensePlate: string;
  vehicleType: VehicleType;
  needs?: Need[];
  panelId?: string;
}

export function createParkingService(deps: ParkingServiceDeps) {
  const { repository, lot, clock, events } = deps;
  const checkout = createCheckout(deps);
  const entries = createEntryBatcher(repository);

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
    let parked: Awaited<ReturnType<ParkingRepository['park']>>;
    try {
      parked = await entries.park(ticket);
    } catch (error) {
      if (isUniqueViolation(error, 'parking_tickets_plate_inside')) throw alreadyParked(licensePlate);
      throw error;
    }
    if (!parked) {
      if (await repository.ticketInside(licensePlate)) throw alreadyParked(licensePlate);
      throw err('parking_full', {
        detail: `No free spot fits a ${request.vehicleType}${needs.length ? ` (asked for ${needs.join(', ')})` : ''}; no ticket was issued`,
        extras: { vehicleType: request.vehicleType },
      });
    }
    void events.spotsChanged(parked.entryTime);
    return ticketView(parked);
  }

  async function ticket(ticketId: string) {
    const found = await repository.ticket(ticketId);
    if (!found) throw err('ticket_not_found', `No ticket ${ticketId}`);
    const payments = await repository.payments(ticketId);
    const current = payments.find((payment) => payment.id === found.currentPaymentId);
    return { ...ticketView(found, current), payments: payments.map((payment) => payment.id) };
  }

  return {
    lot,
    syncSpots: () => repository.syncSpots(spotRows()),
    enter,
    ticket,
    ...checkout,
    availability: async () => availabilityView(lot, await repository.freeCounts()),
    boards: async () => boardsView(lot, await repository.freeCounts(), clock.now()),
  };
}

export type ParkingService = ReturnType<typeof createParkingService>;
