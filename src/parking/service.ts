import type { FastifyBaseLogger } from 'fastify';
import type { PaymentsApi } from '../payments/api.ts';
import type { Clock } from '../platform/clock.ts';
import type { Db } from '../platform/db/index.ts';
import type { ParkingEvents } from './boards/events.ts';
import { type BoardsRepository, createBoardsRepository } from './boards/repository.ts';
import { createBoardsService } from './boards/service.ts';
import { createEntryRepository, type EntryRepository } from './entry/repository.ts';
import { createEntryService } from './entry/service.ts';
import { createExitRepository, type ExitRepository } from './exit/repository.ts';
import { createCheckout } from './exit/service.ts';
import type { LotConfig } from './lot/config.ts';
import { createLotRepository, type LotRepository } from './lot/repository.ts';
import { createLotService } from './lot/service.ts';
import type { ExitOutcome } from './metrics.ts';
import { createReservationsRepository, type ReservationsRepository } from './reservations/repository.ts';
import { createReservationsService, type ReservationMetrics } from './reservations/service.ts';

export interface ParkingRepositories {
  lot: LotRepository;
  entry: EntryRepository;
  exit: ExitRepository;
  boards: BoardsRepository;
  reservations: ReservationsRepository;
}

export function createParkingRepositories(db: Db): ParkingRepositories {
  return {
    lot: createLotRepository(db),
    entry: createEntryRepository(db),
    exit: createExitRepository(db),
    boards: createBoardsRepository(db),
    reservations: createReservationsRepository(db),
  };
}

export interface ParkingServiceDeps {
  /** `createParkingRepositories(db)`; a test may hand in its own (the race test's negative control). */
  repositories: ParkingRepositories;
  lot: LotConfig;
  /** The payments module's public API (parking's payments are `purpose: 'parking'`). */
  payments: PaymentsApi;
  events: ParkingEvents;
  clock: Clock;
  log: FastifyBaseLogger;
  /** Exits by outcome (`parking_exits_total`); tests that build the service alone pass none. */
  metrics?: { exit(outcome: ExitOutcome): void } & ReservationMetrics;
}

/** The lot's use cases, one feature folder each: the lot's spots, entry, exit (checkout), boards, reservations. */
export function createParkingService(deps: ParkingServiceDeps) {
  const { repositories, lot, payments, events, clock, log } = deps;
  return {
    lot,
    ...createLotService({ repository: repositories.lot, lot }),
    ...createEntryService({
      repository: repositories.entry,
      lot,
      events,
      clock,
      onReservationUsed: () => deps.metrics?.reservation('used'),
    }),
    ...createCheckout({
      repository: repositories.exit,
      lot,
      payments,
      events,
      clock,
      log,
      metrics: deps.metrics,
    }),
    ...createBoardsService({ repository: repositories.boards, lot, clock }),
    reservations: createReservationsService({
      repository: repositories.reservations,
      lot,
      events,
      clock,
      metrics: deps.metrics,
    }),
  };
}

export type ParkingService = ReturnType<typeof createParkingService>;
