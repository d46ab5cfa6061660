import { createGroup } from '../../platform/db/group.ts';
import { fits } from '../lot/allocation.ts';
import type { TicketRow } from '../tables.ts';
import type { Arrival, EntryRepository, NewTicket } from './repository.ts';

/** Where the batcher finds the plates' reservations; absent when the lot takes none. */
export interface ArrivalLookup {
  arrivals(plates: string[], at: Date): Promise<Map<string, Arrival>>;
  parkReserved(ticket: NewTicket, arrival: Arrival): Promise<TicketRow | undefined>;
}

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
  options: { maxBatch?: number; maxInFlight?: number; reservations?: ArrivalLookup } = {},
) {
  const { reservations, ...groupOptions } = options;
  const park = createGroup<NewTicket, TicketRow | undefined>({
    one: reservations
      ? async (ticket) =>
          (
            await withReservations([ticket], reservations, (rest) => Promise.all(rest.map(repository.park)))
          )[0]
      : (ticket) => repository.park(ticket),
    many: reservations
      ? (tickets) => withReservations(tickets, reservations, repository.parkMany)
      : (tickets) => repository.parkMany(tickets),
    kind: (ticket) => `${ticket.vehicleType}:${[...ticket.needs].sort().join(',')}`,
    key: (ticket) => ticket.licensePlate,
    // A plate's second entry waits for its first to commit, then finds its ticket (409 already parked).
    exclusive: true,
    retry: (row) => row === undefined,
    ...groupOptions,
  });
  return { park };
}

/**
 * One reservation lookup for the whole batch (plates `= any(…)`): a plate with a reservation
 * open for arrival parks on it (its held spot), the others go on as walk-ins, together.
 */
async function withReservations(
  tickets: NewTicket[],
  reservations: ArrivalLookup,
  walkIns: (tickets: NewTicket[]) => Promise<(TicketRow | undefined)[]>,
): Promise<(TicketRow | undefined)[]> {
  const found = await reservations.arrivals(
    tickets.map((ticket) => ticket.licensePlate),
    tickets[0].entryTime,
  );
  // A reservation of a spot type this vehicle does not fit (a bus on a compact booking) is ignored.
  const arrivalOf = (ticket: NewTicket) => {
    const arrival = found.get(ticket.licensePlate);
    return arrival && fits(ticket.vehicleType, arrival.spotType) ? arrival : undefined;
  };
  const rest = tickets.filter((ticket) => !arrivalOf(ticket));
  const [reserved, walkedIn] = await Promise.all([
    Promise.all(
      tickets.map((ticket) => {
        const arrival = arrivalOf(ticket);
        return arrival && reservations.parkReserved(ticket, arrival);
      }),
    ),
    rest.length > 0 ? walkIns(rest) : [],
  ]);
  const byId = new Map(
    [...reserved, ...walkedIn].filter((row) => row !== undefined).map((row) => [row.id, row]),
  );
  return tickets.map((ticket) => byId.get(ticket.id));
}
