import { createGroup } from '../../platform/db/group.ts';
import type { TicketRow } from '../tables.ts';
import type { EntryRepository, NewTicket } from './repository.ts';

/**
 * Group commit for entries. With one statement and one commit per entry, an entry under load
 * mostly waits for its commit (the WAL write), so entries that arrive while a batch is being written now go together in one statement and one
 * commit (`repository.parkMany`: same spot order, SKIP LOCKED and re-check as `park`).
 *
 * Every caller gets what `repository.park` would have given it: a ticket the batch left without
 * a spot, or every ticket of a failed batch (a plate already inside rolls the statement back),
 * is decided by the single-entry `park` on its own (row, undefined = nothing free, or the unique
 * violation). A batch holds one vehicle type and set of needs (they share the spot order) and
 * each plate at most once.
 */
export function createEntryBatcher(
  repository: Pick<EntryRepository, 'park' | 'parkMany'>,
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
