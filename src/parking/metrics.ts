import { Counter, Gauge, type Registry } from 'prom-client';
import { AppError } from '../platform/errors.ts';
import { tallyCounter } from '../platform/observability/metrics.ts';
import type { FreeCount } from './boards/repository.ts';

const ENTRY_OUTCOMES = ['parked', 'full', 'already_parked', 'rejected'] as const;
const ENTRY_REFUSALS: Record<string, (typeof ENTRY_OUTCOMES)[number]> = {
  parking_full: 'full',
  vehicle_already_parked: 'already_parked',
};

const RESERVATION_OUTCOMES = ['booked', 'used', 'no_show', 'cancelled'] as const;
export type ReservationOutcome = (typeof RESERVATION_OUTCOMES)[number];

/** How an exit went: the gate opened (`paid`, once per ticket), 402 (`declined`), or an unpaid payment to pay (`pending`). */
const EXIT_OUTCOMES = ['paid', 'declined', 'pending'] as const;
export type ExitOutcome = (typeof EXIT_OUTCOMES)[number];

/**
 * Parking's metrics: occupancy per floor and spot type, read at scrape time from the boards' shared
 * count (`sharedReads`: a scrape arriving with the boards' readers shares their count, no query of
 * its own), and entries and exits by outcome. Floors and spot types come from the lot's
 * configuration, so the label set is small and fixed.
 */
export function createParkingMetrics(
  registry: Registry,
  spotCounts: () => Promise<FreeCount[]>,
  options: { reservations?: boolean } = {},
) {
  const registers = [registry];
  new Gauge({
    name: 'parking_spots',
    help: 'Spots per floor and type by state (free, occupied; reserved in a lot that takes reservations), retired spots left out (read at scrape time)',
    labelNames: ['floor', 'type', 'state'] as const,
    registers,
    async collect() {
      let counts: FreeCount[];
      try {
        counts = await spotCounts();
      } catch {
        return; // An unreachable database shows up in /health/ready; the scrape still succeeds.
      }
      this.reset(); // a type whose spots were all retired leaves
      for (const { floor, spotType, free, reserved, total } of counts) {
        this.set({ floor: String(floor), type: spotType, state: 'free' }, free);
        this.set({ floor: String(floor), type: spotType, state: 'occupied' }, total - free - reserved);
        // Only a lot that takes reservations has held spots (the series stay few).
        if (options.reservations)
          this.set({ floor: String(floor), type: spotType, state: 'reserved' }, reserved);
      }
    },
  });
  // Entries and exits are the gates' hot paths: counted in plain numbers (tallyCounter).
  const entry = tallyCounter(registry, {
    name: 'parking_entries_total',
    help: `Entry requests by outcome: ${ENTRY_OUTCOMES.join(', ')}`,
    label: 'outcome',
    values: ENTRY_OUTCOMES,
  });
  const exit = tallyCounter(registry, {
    name: 'parking_exits_total',
    help: 'Exits by outcome: paid (the ticket paid and the gate opened, once per ticket, however paid), declined, pending (a payment left to pay)',
    label: 'outcome',
    values: EXIT_OUTCOMES,
  });
  const reservations = new Counter({
    name: 'parking_reservations_total',
    help: `Reservations by outcome: ${RESERVATION_OUTCOMES.join(', ')}`,
    labelNames: ['outcome'] as const,
    registers,
  });
  const holdFailures = new Counter({
    name: 'parking_reservation_hold_failures_total',
    help: 'Reservations due a held spot that found none free of their type (retried every minute until arrival)',
    registers,
  });
  return {
    entered: () => entry('parked'),
    entryRefused(error: unknown) {
      entry((error instanceof AppError && ENTRY_REFUSALS[error.code]) || 'rejected');
    },
    exit: (outcome: ExitOutcome) => exit(outcome),
    reservation: (outcome: ReservationOutcome, count = 1) => reservations.inc({ outcome }, count),
    holdFailed: (count = 1) => holdFailures.inc(count),
  };
}

export type ParkingMetrics = ReturnType<typeof createParkingMetrics>;

/** The parking service with every entry request counted by outcome (`parking_entries_total`). */
export function countingEntries<T extends { enter: (...args: never[]) => Promise<unknown> }>(
  service: T,
  metrics: ParkingMetrics,
): T {
  const enter = service.enter;
  return {
    ...service,
    enter: (async (...args: Parameters<T['enter']>) => {
      try {
        const parked = await enter(...args);
        metrics.entered();
        return parked;
      } catch (error) {
        metrics.entryRefused(error);
        throw error;
      }
    }) as T['enter'],
  };
}
