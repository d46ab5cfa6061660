import type { NewTicket, ParkingRepository, TicketRow } from './repository.ts';

/**
 * Group commit for entries. Each entry used to be one statement and one commit; under load the
 * app spent its time waiting on PostgreSQL (parking-entry scenario: 0.024 of the baseline, the
 * backends busy on WAL writes and the app's writes to the database socket taking ~40 % of its
 * samples). Here entries that arrive while a batch is being written wait for it, then all go
 * in one statement and one commit (`repository.parkMany`), so the round trips and commits per
 * entry fall as the load rises, and a lone entry still goes at once.
 *
 * Every caller gets what `repository.park` would have given it:
 * - a spot from the batch, taken with the same order, SKIP LOCKED and re-check;
 * - otherwise (no spot left in the batch, or the batch failed, e.g. a plate already inside, which
 *   rolls the whole statement back) the single-entry `park` decides for that ticket alone: the
 *   same answer (row, undefined = nothing free, or the unique violation) as without batching.
 */
export function createEntryBatcher(
  repository: Pick<ParkingRepository, 'park' | 'parkMany'>,
  options: { maxBatch?: number; maxInFlight?: number } = {},
) {
  const maxBatch = options.maxBatch ?? 200;
  // Two batches may be written at once (they skip each other's locked spots), so one batch's
  // round trip overlaps the next one's.
  const maxInFlight = options.maxInFlight ?? 2;
  interface Waiter {
    ticket: NewTicket;
    resolve(row: TicketRow | undefined): void;
    reject(error: unknown): void;
  }
  let queue: Waiter[] = [];
  let inFlight = 0;
  let scheduled = false;

  /** A batch holds tickets of one vehicle type and set of needs (they share the spot order). */
  const keyOf = (ticket: NewTicket) => `${ticket.vehicleType}:${[...ticket.needs].sort().join(',')}`;

  function schedule() {
    if (scheduled || inFlight >= maxInFlight || queue.length === 0) return;
    scheduled = true;
    // After the current I/O phase, so the entries parsed from the same read all join the batch.
    setImmediate(() => {
      scheduled = false;
      while (inFlight < maxInFlight && queue.length > 0) void run(take());
    });
  }

  /** The oldest waiting ticket and up to maxBatch - 1 more of its kind, in arrival order; one plate at most once. */
  function take(): Waiter[] {
    const key = keyOf(queue[0].ticket);
    const batch: Waiter[] = [];
    const rest: Waiter[] = [];
    const plates = new Set<string>();
    for (const waiter of queue) {
      if (
        batch.length < maxBatch &&
        keyOf(waiter.ticket) === key &&
        !plates.has(waiter.ticket.licensePlate)
      ) {
        plates.add(waiter.ticket.licensePlate);
        batch.push(waiter);
      } else {
        rest.push(waiter);
      }
    }
    queue = rest;
    return batch;
  }

  async function run(batch: Waiter[]) {
    inFlight++;
    try {
      let rows: (TicketRow | undefined)[] | undefined;
      try {
        rows =
          batch.length === 1 ? undefined : await repository.parkMany(batch.map((waiter) => waiter.ticket));
      } catch {
        rows = undefined;
      }
      await Promise.all(
        batch.map(async (waiter, i) => {
          const row = rows?.[i];
          if (row) return waiter.resolve(row);
          try {
            waiter.resolve(await repository.park(waiter.ticket));
          } catch (error) {
            waiter.reject(error);
          }
        }),
      );
    } finally {
      inFlight--;
      schedule();
    }
  }

  return {
    /** Same contract as `repository.park`. */
    park(ticket: NewTicket): Promise<TicketRow | undefined> {
      return new Promise((resolve, reject) => {
        queue.push({ ticket, resolve, reject });
        schedule();
      });
    },
  };
}
