import { type RawBuilder, sql } from 'kysely';
import type { Db } from '../../platform/db/index.ts';
import type { Need, SpotType, VehicleType } from '../lot/allocation.ts';
import { createTicketReads, type Executor, parkingDb, RETURNING_TICKET } from '../rows.ts';
import type { TicketRow } from '../tables.ts';

export interface NewTicket {
  id: string;
  licensePlate: string;
  vehicleType: VehicleType;
  needs: readonly Need[];
  entryTime: Date;
  entryPanelId: string | null;
  /** The short code printed on the ticket (tickets/codes.ts). */
  code: string;
}

/** A live reservation of the entering plate, open for arrival (reservations/). */
export interface Arrival {
  id: string;
  licensePlate: string;
  spotType: SpotType;
  /** The held spot (HELD), or null (BOOKED: the vehicle is parked like a walk-in). */
  spotId: string | null;
  startsAt: Date;
  endsAt: Date;
}

const rankColumn = (vehicle: VehicleType) => sql.ref(`rank_${vehicle.toLowerCase()}`);
/** `order by` of the arbiter: a need's spot types first, then the floor, the offering rank, the file order. */
const offeringOrder = (needs: readonly Need[], vehicle: VehicleType) =>
  needs.length > 0
    ? sql`case when spot_type in (${sql.join([...needs])}) then 0 else 1 end, floor_order, ${rankColumn(vehicle)}, position`
    : sql`floor_order, ${rankColumn(vehicle)}, position`;

/** SQL of entries: the spot arbiter. */
export function createEntryRepository(database: Db) {
  const db = parkingDb(database);
  const reads = createTicketReads(db);
  return {
    ticket: reads.ticket,
    ticketInside: reads.ticketInside,

    /**
     * Takes the first free fitting spot and issues the ticket, in one statement: the row lock with
     * SKIP LOCKED lets concurrent entries take different spots without waiting on each other, and
     * the `ticket_id is null` re-check means a spot is never given twice. No row → nothing free.
     */
    async park(ticket: NewTicket): Promise<TicketRow | undefined> {
      return parkOn(db, ticket, freeSpot(ticket));
    },

    /**
     * The live reservations of these plates open for arrival at `at` (from `holdAheadMs` before
     * their start to `graceMs` after it), the earliest per plate: one query per entry batch.
     */
    async arrivals(plates: string[], at: Date, window: { holdAheadMs: number; graceMs: number }) {
      const rows = await db
        .selectFrom('parking_reservations')
        .select(['id', 'license_plate as licensePlate', 'spot_type as spotType', 'spot_id as spotId'])
        .select(['starts_at as startsAt', 'ends_at as endsAt'])
        .where('license_plate', '=', (eb) => eb.fn.any(eb.val(plates)))
        .where('status', 'in', ['BOOKED', 'HELD'])
        .where('starts_at', '<=', new Date(at.getTime() + window.holdAheadMs))
        .where('starts_at', '>=', new Date(at.getTime() - window.graceMs))
        .orderBy('starts_at')
        .execute();
      const byPlate = new Map<string, Arrival>();
      for (const row of rows) if (!byPlate.has(row.licensePlate)) byPlate.set(row.licensePlate, row);
      return byPlate;
    },

    /**
     * The entry of a plate with a reservation, in one transaction: the reservation becomes USED
     * (only if still BOOKED or HELD: a no-show or cancel that won the race leaves a walk-in), and
     * the vehicle takes its held spot, or (BOOKED) the first free fitting spot. Undefined: nothing
     * fits (a BOOKED reservation whose type is full), and nothing changed.
     */
    async parkReserved(ticket: NewTicket, arrival: Arrival): Promise<TicketRow | undefined> {
      const nothing = Symbol('nothing');
      const walkIn = Symbol('walk-in');
      try {
        return await db.transaction().execute(async (trx) => {
          const used = await trx
            .updateTable('parking_reservations')
            .set({ status: 'USED', ticket_id: ticket.id, updated_at: ticket.entryTime })
            .where('id', '=', arrival.id)
            .where('status', 'in', ['BOOKED', 'HELD'])
            .returning(['spot_id as spotId'])
            .executeTakeFirst();
          if (!used) throw walkIn;
          const reserved = { ...ticket, reservation: arrival };
          const held = used.spotId
            ? await parkOn(
                trx,
                reserved,
                sql`select id from parking_spots
                  where id = ${used.spotId} and reservation_id = ${arrival.id}::uuid and ticket_id is null
                  for update`,
              )
            : undefined;
          const parked = held ?? (await parkOn(trx, reserved, freeSpot(ticket)));
          if (!parked) throw nothing;
          return parked;
        });
      } catch (error) {
        if (error === nothing) return undefined;
        if (error === walkIn) return parkOn(db, ticket, freeSpot(ticket));
        throw error;
      }
    },

    /**
     * `park` for several tickets of one vehicle type and one set of needs, in one statement and
     * one commit: the first N free fitting spots (same order, same SKIP LOCKED, same re-check as
     * `park`) go to the tickets in the order given. Returns each ticket's row, or undefined for
     * those left without a spot (fewer free unlocked spots than tickets). Throws like `park`
     * (a plate already inside: unique violation), and then nothing of the batch was written.
     */
    async parkMany(tickets: NewTicket[]): Promise<(TicketRow | undefined)[]> {
      const first = tickets[0];
      const rank = rankColumn(first.vehicleType);
      const order = offeringOrder(first.needs, first.vehicleType);
      // Raw SQL: the spot arbiter for a batch, SKIP LOCKED claims paired with unnest'ed tickets in one statement.
      const { rows } = await sql<TicketRow>`
        with wanted as (
          select * from unnest(${tickets.map((t) => t.id)}::uuid[], ${tickets.map((t) => t.licensePlate)}::text[],
            ${tickets.map((t) => t.entryTime.toISOString())}::timestamptz[], ${tickets.map((t) => t.entryPanelId)}::text[],
            ${tickets.map((t) => t.code)}::text[])
            with ordinality as w(id, plate, entry_time, panel, code, n)
        ), candidate as (
          select id, row_number() over (order by ${order}) as n
          from (
            select id, spot_type, floor_order, ${rank}, position from parking_spots
            where ticket_id is null and reservation_id is null and ${rank} is not null
            order by ${order}
            limit ${tickets.length}
            for update skip locked
          ) free
        ), taken as (
          update parking_spots s set ticket_id = wanted.id, occupied_at = wanted.entry_time
          from candidate join wanted using (n)
          where s.id = candidate.id and s.ticket_id is null and s.reservation_id is null
          returning s.id, s.floor, s.spot_type, s.ticket_id
        )
        insert into parking_tickets (id, license_plate, vehicle_type, spot_id, floor, spot_type, status, entry_time, entry_panel_id, code)
        select wanted.id, wanted.plate, ${first.vehicleType}, taken.id, taken.floor, taken.spot_type, 'ACTIVE',
               wanted.entry_time, wanted.panel, wanted.code
        from taken join wanted on wanted.id = taken.ticket_id
        returning ${RETURNING_TICKET}`.execute(db);
      const byId = new Map(rows.map((row) => [row.id, row]));
      return tickets.map((ticket) => byId.get(ticket.id));
    },
  };
}

export type EntryRepository = ReturnType<typeof createEntryRepository>;

/** The first free fitting spot, in offering order, skipping spots other entries have locked. */
function freeSpot(ticket: NewTicket): RawBuilder<unknown> {
  return sql`select id from parking_spots
    where ticket_id is null and reservation_id is null and ${rankColumn(ticket.vehicleType)} is not null
    order by ${offeringOrder(ticket.needs, ticket.vehicleType)}
    limit 1
    for update skip locked`;
}

/**
 * Takes the spot `candidate` names and issues the ticket, in one statement: the `ticket_id is
 * null` re-check means a spot is never given twice; a held spot is taken only by its own
 * reservation (the candidate names it), and its hold ends as the vehicle takes it.
 */
async function parkOn(
  executor: Executor,
  ticket: NewTicket & { reservation?: Arrival },
  candidate: RawBuilder<unknown>,
): Promise<TicketRow | undefined> {
  const reservation = ticket.reservation;
  const reservationId = reservation?.id ?? null;
  // Raw SQL: the spot arbiter, a FOR UPDATE SKIP LOCKED claim chained to the ticket's insert in one statement.
  const { rows } = await sql<TicketRow>`
    with candidate as (${candidate}), taken as (
      update parking_spots s set ticket_id = ${ticket.id}::uuid, occupied_at = ${ticket.entryTime}, reservation_id = null
      from candidate where s.id = candidate.id and s.ticket_id is null
        and (s.reservation_id is null or s.reservation_id = ${reservationId}::uuid)
      returning s.id, s.floor, s.spot_type
    )
    insert into parking_tickets (id, license_plate, vehicle_type, spot_id, floor, spot_type, status, entry_time,
      entry_panel_id, code, reservation_id, reserved_from, reserved_until)
    select ${ticket.id}::uuid, ${ticket.licensePlate}, ${ticket.vehicleType}, id, floor, spot_type, 'ACTIVE',
           ${ticket.entryTime}, ${ticket.entryPanelId}, ${ticket.code}, ${reservationId}::uuid,
           ${reservation?.startsAt ?? null}::timestamptz, ${reservation?.endsAt ?? null}::timestamptz
    from taken
    returning ${RETURNING_TICKET}`.execute(executor);
  return rows[0];
}
