import { createGroup } from '../platform/db/group.ts';
import type { NewTicket, ParkingRepository, TicketRow } from './repository.ts';

/**
 * Group commit for entries. Each entry used to be one statement and one commit; under load the
 * app spent its time waiting on PostgreSQL (parking-entry scenario: 0.024 of the baseline, the
 * backends busy on WAL writes, the app's writes to the database socket ~40 % of its samples).
 * Entries that arrive while a batch is being written now go together in one statement and one
 * commit (`repository.parkMany`: same spot order, SKIP LOCKED and re-check as `park`).
 *
 * Every caller gets what `repository.park` would have given it: a ticket the batch left without
 * a spot, or every ticket of a failed batch (a plate already inside rolls the statement back),
 * is decided by the single-entry `park` on its own (row, undefined = nothing free, or the unique
 * violation). A batch holds one vehicle type and set of needs (they share the spot order) and
 * each plate at most once.
 */
export function createEntryBatcher(
  repository: Pick<ParkingRepository, 'park' | 'parkMany'>,
  options: { maxBatch?: number; maxInFlight?: number } = {},
) {
  const park = createGroup<NewTicket, TicketRow | undefined>({
    one: (ticket) => repository.park(ticket),
    many: (tickets) => repository.parkMany(tickets),
    kind: (ticket) => `${ticket.vehicleType}:${[...ticket.needs].sort().join(',')}`,
    key: (ticket) => ticket.licensePlate,
    // A plate's second entry waits for its first to commit, then finds its ticket (409 already parked).
    exclusive: true,
    retry: (row) => row === undefined,
    ...options,
  });
  return { park };
}
