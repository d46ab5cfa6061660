import { type Kysely, sql, type Transaction } from 'kysely';
import type { PaymentStatus } from '../payments/api.ts';
import { createGroup } from '../platform/db/group.ts';
import type { Db } from '../platform/db/index.ts';
import type { Need, SpotType, VehicleType } from './allocation.ts';
import type { ParkingTables, PaymentRow, TicketRow } from './tables.ts';

export type { PaymentRow, TicketRow } from './tables.ts';

/** SQL of the parking service, no rules: those are in service.ts and allocation.ts. */
export interface SpotRow {
  id: string;
  floor: number;
  floorOrder: number;
  position: number;
  spotType: SpotType;
  ranks: Record<VehicleType, number | null>;
}

export interface FreeCount {
  floor: number;
  spotType: SpotType;
  free: number;
  total: number;
}

export interface NewTicket {
  id: string;
  licensePlate: string;
  vehicleType: VehicleType;
  needs: readonly Need[];
  entryTime: Date;
  entryPanelId: string | null;
}

export interface ExitState {
  ticket: TicketRow;
  /** The latest payment of the ticket (the live one if there is one). */
  current: PaymentRow | undefined;
  /** How many payments the ticket has had, failed ones included. */
  attempts: number;
}

/** A payment to record as its ticket's live one, with the exit that asked for it. */
export interface PaymentLink {
  payment: PaymentRow;
  ticket: { exitTime: Date; exitPanelId: string | null };
}

type ParkingDb = Kysely<ParkingTables>;
type Executor = ParkingDb | Transaction<ParkingTables>;

/** A ticket's columns under the names of `TicketRow` (tsc checks them against it). */
const TICKET_COLUMNS = [
  'parking_tickets.id',
  'parking_tickets.license_plate as licensePlate',
  'parking_tickets.vehicle_type as vehicleType',
  'parking_tickets.spot_id as spotId',
  'parking_tickets.floor',
  'parking_tickets.spot_type as spotType',
  'parking_tickets.status',
  'parking_tickets.entry_time as entryTime',
  'parking_tickets.entry_panel_id as entryPanelId',
  'parking_tickets.exit_time as exitTime',
  'parking_tickets.exit_panel_id as exitPanelId',
  'parking_tickets.lost_at as lostAt',
  'parking_tickets.paid_at as paidAt',
  'parking_tickets.current_payment_id as currentPaymentId',
] as const;

const PAYMENT_COLUMNS = [
  'parking_payments.id',
  'parking_payments.ticket_id as ticketId',
  'parking_payments.kind',
  'parking_payments.amount_minor as amountMinor',
  'parking_payments.currency',
  'parking_payments.status',
  'parking_payments.payment_url as paymentUrl',
  'parking_payments.failure_reason as failureReason',
  'parking_payments.duration_ms as durationMs',
  'parking_payments.created_at as createdAt',
  'parking_payments.updated_at as updatedAt',
] as const;

/** The same ticket columns for the raw statements' `returning` (the arbiter). */
const RETURNING_TICKET = sql.join(
  TICKET_COLUMNS.map((column) => {
    const [ref, alias] = column.split(' as ');
    return sql`${sql.ref(ref)} as ${sql.ref(alias ?? ref.replace('parking_tickets.', ''))}`;
  }),
);

const rankColumn = (vehicle: VehicleType) => sql.ref(`rank_${vehicle.toLowerCase()}`);
/** `order by` of the arbiter: a need's spot types first, then the floor, the offering rank, the file order. */
const offeringOrder = (needs: readonly Need[], vehicle: VehicleType) =>
  needs.length > 0
    ? sql`case when spot_type in (${sql.join([...needs])}) then 0 else 1 end, floor_order, ${rankColumn(vehicle)}, position`
    : sql`floor_order, ${rankColumn(vehicle)}, position`;

export function createParkingRepository(database: Db) {
  const db: ParkingDb = database.withTables<ParkingTables>();

  async function ticket(id: string, executor: Executor = db): Promise<TicketRow | undefined> {
    return executor
      .selectFrom('parking_tickets')
      .select(TICKET_COLUMNS)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  async function payment(id: string, executor: Executor = db): Promise<PaymentRow | undefined> {
    const row = await executor
      .selectFrom('parking_payments')
      .select(PAYMENT_COLUMNS)
      .where('id', '=', id)
      .executeTakeFirst();
    return row && numbers(row);
  }

  async function exitStates(ticketIds: string[]): Promise<(ExitState | undefined)[]> {
    const rows = await db
      .selectFrom('parking_tickets')
      .leftJoin('parking_payments as p', 'p.id', 'parking_tickets.current_payment_id')
      .select(TICKET_COLUMNS)
      .select((eb) => [
        eb
          .selectFrom('parking_payments as c')
          .whereRef('c.ticket_id', '=', 'parking_tickets.id')
          .select(sql<number>`count(*)::int`.as('n'))
          .as('attempts'),
        'p.id as p_id',
        'p.kind as p_kind',
        'p.amount_minor as p_amountMinor',
        'p.currency as p_currency',
        'p.status as p_status',
        'p.payment_url as p_paymentUrl',
        'p.failure_reason as p_failureReason',
        'p.duration_ms as p_durationMs',
        'p.created_at as p_createdAt',
        'p.updated_at as p_updatedAt',
      ])
      // One statement text whatever the batch size.
      .where('parking_tickets.id', '=', sql<string>`any(${ticketIds}::uuid[])`)
      .execute();
    // PostgreSQL reads a uuid in several spellings (case, braces, dashes); match on the digits.
    const digits = (id: string) => id.toLowerCase().replace(/[^0-9a-f]/g, '');
    const states = new Map(rows.map((row) => [digits(row.id), exitStateOf(row)]));
    return ticketIds.map((id) => states.get(digits(id)));
  }

  /**
   * Inserts each payment unless the live-payment index (or its id) refuses it (ON CONFLICT covers
   * every unique index), and links the tickets whose payment went in; in one statement.
   * Returns, per link, whether its payment was recorded.
   */
  async function addPayments(links: PaymentLink[]): Promise<boolean[]> {
    const column = <T>(pick: (link: PaymentLink) => T) => links.map(pick);
    // Raw SQL: a bulk insert from unnest'ed arrays chained (CTEs) to the tickets' update, one statement per batch.
    const { rows } = await sql<{ id: string }>`
      with input as (
        select * from unnest(
          ${column((l) => l.payment.id)}::text[], ${column((l) => l.payment.ticketId)}::uuid[],
          ${column((l) => l.payment.kind)}::text[], ${column((l) => String(l.payment.amountMinor))}::bigint[],
          ${column((l) => l.payment.currency)}::text[], ${column((l) => l.payment.status)}::text[],
          ${column((l) => l.payment.paymentUrl)}::text[], ${column((l) => l.payment.failureReason)}::text[],
          ${column((l) => String(l.payment.durationMs))}::bigint[],
          ${column((l) => l.payment.createdAt.toISOString())}::timestamptz[],
          ${column((l) => l.payment.updatedAt.toISOString())}::timestamptz[],
          ${column((l) => l.ticket.exitTime.toISOString())}::timestamptz[],
          ${column((l) => l.ticket.exitPanelId)}::text[]
        ) as i(id, ticket_id, kind, amount_minor, currency, status, payment_url, failure_reason, duration_ms,
               created_at, updated_at, exit_time, exit_panel_id)
      ), inserted as (
        insert into parking_payments (id, ticket_id, kind, amount_minor, currency, status, payment_url,
          failure_reason, duration_ms, created_at, updated_at)
        select id, ticket_id, kind, amount_minor, currency, status, payment_url, failure_reason, duration_ms,
          created_at, updated_at
        from input
        on conflict do nothing
        returning id
      ), linked as (
        update parking_tickets set exit_time = input.exit_time, exit_panel_id = input.exit_panel_id,
          current_payment_id = input.id
        from input join inserted using (id)
        where parking_tickets.id = input.ticket_id and parking_tickets.status in ('ACTIVE', 'LOST')
      )
      select id from inserted`.execute(db);
    const inserted = new Set(rows.map((row) => row.id));
    return links.map((link) => inserted.has(link.payment.id));
  }

  return {
    ticket,
    payment,

    /** Makes the table match the lot config: new spots added, changed ones updated, removed ones retired. */
    async syncSpots(spots: SpotRow[]): Promise<void> {
      await db.transaction().execute(async (trx) => {
        // Processes starting together would otherwise lock the same rows from two statements at once.
        await trx
          .selectNoFrom(sql`pg_advisory_xact_lock(hashtext('parking.sync_spots'))`.as('locked'))
          .execute();
        for (let start = 0; start < spots.length; start += 2000) {
          await upsertSpots(trx, spots.slice(start, start + 2000));
        }
        // A retired spot keeps a vehicle parked on it until that vehicle leaves, but is never offered again.
        await trx
          .updateTable('parking_spots')
          .set({ retired: true, rank_motorcycle: null, rank_car: null, rank_bus: null })
          .where((eb) => eb.not(eb.ref('retired')))
          .where('id', '<>', sql<string>`all(${spots.map((spot) => spot.id)}::text[])`)
          .execute();
      });
    },

    /**
     * Takes the first free fitting spot and issues the ticket, in one statement: the row lock with
     * SKIP LOCKED lets concurrent entries take different spots without waiting on each other, and
     * the `ticket_id is null` re-check means a spot is never given twice. No row → nothing free.
     */
    async park(ticket: NewTicket): Promise<TicketRow | undefined> {
      const rank = rankColumn(ticket.vehicleType);
      // Raw SQL: the spot arbiter, a FOR UPDATE SKIP LOCKED claim chained to the ticket's insert in one statement.
      const { rows } = await sql<TicketRow>`
        with candidate as (
          select id from parking_spots
          where ticket_id is null and ${rank} is not null
          order by ${offeringOrder(ticket.needs, ticket.vehicleType)}
          limit 1
          for update skip locked
        ), taken as (
          update parking_spots s set ticket_id = ${ticket.id}::uuid, occupied_at = ${ticket.entryTime}
          from candidate where s.id = candidate.id and s.ticket_id is null
          returning s.id, s.floor, s.spot_type
        )
        insert into parking_tickets (id, license_plate, vehicle_type, spot_id, floor, spot_type, status, entry_time, entry_panel_id)
        select ${ticket.id}::uuid, ${ticket.licensePlate}, ${ticket.vehicleType}, id, floor, spot_type, 'ACTIVE',
               ${ticket.entryTime}, ${ticket.entryPanelId}
        from taken
        returning ${RETURNING_TICKET}`.execute(db);
      return rows[0];
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
            ${tickets.map((t) => t.entryTime.toISOString())}::timestamptz[], ${tickets.map((t) => t.entryPanelId)}::text[])
            with ordinality as w(id, plate, entry_time, panel, n)
        ), candidate as (
          select id, row_number() over (order by ${order}) as n
          from (
            select id, spot_type, floor_order, ${rank}, position from parking_spots
            where ticket_id is null and ${rank} is not null
            order by ${order}
            limit ${tickets.length}
            for update skip locked
          ) free
        ), taken as (
          update parking_spots s set ticket_id = wanted.id, occupied_at = wanted.entry_time
          from candidate join wanted using (n)
          where s.id = candidate.id and s.ticket_id is null
          returning s.id, s.floor, s.spot_type, s.ticket_id
        )
        insert into parking_tickets (id, license_plate, vehicle_type, spot_id, floor, spot_type, status, entry_time, entry_panel_id)
        select wanted.id, wanted.plate, ${first.vehicleType}, taken.id, taken.floor, taken.spot_type, 'ACTIVE',
               wanted.entry_time, wanted.panel
        from taken join wanted on wanted.id = taken.ticket_id
        returning ${RETURNING_TICKET}`.execute(db);
      const byId = new Map(rows.map((row) => [row.id, row]));
      return tickets.map((ticket) => byId.get(ticket.id));
    },

    /** The ticket of a vehicle still inside (ACTIVE or LOST), if any. */
    async ticketInside(licensePlate: string): Promise<TicketRow | undefined> {
      return db
        .selectFrom('parking_tickets')
        .select(TICKET_COLUMNS)
        .where('license_plate', '=', licensePlate)
        .where('status', 'in', ['ACTIVE', 'LOST'])
        .executeTakeFirst();
    },

    async markLost(ticketId: string, at: Date): Promise<boolean> {
      const result = await db
        .updateTable('parking_tickets')
        .set({ status: 'LOST', lost_at: at })
        .where('id', '=', ticketId)
        .where('status', '=', 'ACTIVE')
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async payments(ticketId: string): Promise<PaymentRow[]> {
      const rows = await db
        .selectFrom('parking_payments')
        .select(PAYMENT_COLUMNS)
        .where('ticket_id', '=', ticketId)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(numbers);
    },

    /**
     * A ticket, its current (latest) payment and how many payments it has had, in one round trip.
     * Reads arriving together share one query (as the exits' writes share a commit).
     */
    exitState: createGroup<string, ExitState | undefined>({
      one: async (ticketId) => (await exitStates([ticketId]))[0],
      many: exitStates,
    }),

    /**
     * Records a new payment as the ticket's live one. False when another exit got there first
     * (the unique index on live payments, or the same gateway payment already recorded).
     * Exits arriving together are recorded in one statement and one commit (see `addPayments`).
     */
    addPayment: createGroup<PaymentLink, boolean>({
      one: async (link) => (await addPayments([link]))[0],
      many: addPayments,
      // One ticket at most once per batch, so the live-payment index decides between its exits as before.
      key: (link) => link.payment.ticketId,
    }),

    /**
     * A completed payment: ticket PAID and its spot freed, in one transaction. The spot is freed
     * only if it still holds this ticket, so a late duplicate can never evict the next vehicle.
     * Returns the ticket when this call made the change, undefined when it had already happened.
     * Throws a unique violation (parking_payments_live) when the ticket was paid by another payment.
     */
    async completePayment(
      paymentId: string,
      at: Date,
    ): Promise<{ ticket: TicketRow; payment: PaymentRow } | undefined> {
      return db.transaction().execute(async (trx) => {
        const completed = await trx
          .updateTable('parking_payments')
          .set({ status: 'COMPLETED', failure_reason: null, updated_at: at })
          .where('id', '=', paymentId)
          .where('status', 'in', ['PENDING', 'FAILED'])
          .returning('ticket_id as ticketId')
          .executeTakeFirst();
        if (!completed) return undefined;
        // The live-payment index has already refused a second COMPLETED payment for the ticket,
        // so the ticket is still inside here.
        const paid = await trx
          .updateTable('parking_tickets')
          .set({ status: 'PAID', paid_at: at, current_payment_id: paymentId })
          .where('id', '=', completed.ticketId)
          .where('status', 'in', ['ACTIVE', 'LOST'])
          .returning(TICKET_COLUMNS)
          .executeTakeFirst();
        if (!paid)
          throw new Error(
            `payment ${paymentId} completed for ticket ${completed.ticketId}, which is not inside`,
          );
        await trx
          .updateTable('parking_spots')
          .set({ ticket_id: null, occupied_at: null })
          .where('id', '=', paid.spotId)
          .where('ticket_id', '=', paid.id)
          .execute();
        const row = await payment(paymentId, trx);
        return row && { ticket: paid, payment: row };
      });
    },

    async setPaymentStatus(
      paymentId: string,
      status: PaymentStatus,
      from: PaymentStatus[],
      at: Date,
      failureReason: string | null = null,
    ): Promise<PaymentRow | undefined> {
      const row = await db
        .updateTable('parking_payments')
        .set({ status, failure_reason: failureReason, updated_at: at })
        .where('id', '=', paymentId)
        .where('status', 'in', from)
        .returning(PAYMENT_COLUMNS)
        .executeTakeFirst();
      return row && numbers(row);
    },

    /** Free and total spots per floor and type (retired spots are not counted). */
    async freeCounts(): Promise<FreeCount[]> {
      return db
        .selectFrom('parking_spots')
        .select([
          'floor',
          'spot_type as spotType',
          sql<number>`count(*) filter (where ticket_id is null)::int`.as('free'),
          sql<number>`count(*)::int`.as('total'),
        ])
        .where((eb) => eb.not(eb.ref('retired')))
        .groupBy(['floor', 'floor_order', 'spot_type'])
        .orderBy('floor_order')
        .orderBy('spot_type')
        .execute();
    },
  };
}

export type ParkingRepository = ReturnType<typeof createParkingRepository>;

/** New spots inserted, changed ones updated (and un-retired); unchanged rows are not written. */
function upsertSpots(trx: Transaction<ParkingTables>, spots: SpotRow[]) {
  return trx
    .insertInto('parking_spots')
    .values(
      spots.map((spot) => ({
        id: spot.id,
        floor: spot.floor,
        floor_order: spot.floorOrder,
        position: spot.position,
        spot_type: spot.spotType,
        rank_motorcycle: spot.ranks.MOTORCYCLE,
        rank_car: spot.ranks.CAR,
        rank_bus: spot.ranks.BUS,
      })),
    )
    .onConflict((oc) =>
      oc
        .column('id')
        .doUpdateSet((eb) => ({
          floor: eb.ref('excluded.floor'),
          floor_order: eb.ref('excluded.floor_order'),
          position: eb.ref('excluded.position'),
          spot_type: eb.ref('excluded.spot_type'),
          rank_motorcycle: eb.ref('excluded.rank_motorcycle'),
          rank_car: eb.ref('excluded.rank_car'),
          rank_bus: eb.ref('excluded.rank_bus'),
          retired: false,
        }))
        .where(
          sql<boolean>`(parking_spots.floor, parking_spots.floor_order, parking_spots.position, parking_spots.spot_type,
            parking_spots.rank_motorcycle, parking_spots.rank_car, parking_spots.rank_bus, parking_spots.retired)
            is distinct from (excluded.floor, excluded.floor_order, excluded.position, excluded.spot_type,
            excluded.rank_motorcycle, excluded.rank_car, excluded.rank_bus, false)`,
        ),
    )
    .execute();
}

/** bigint columns arrive as BigInt (platform setting); amounts and durations fit a number. */
function numbers<Row extends { amountMinor: bigint; durationMs: bigint }>(
  row: Row,
): Omit<Row, 'amountMinor' | 'durationMs'> & { amountMinor: number; durationMs: number } {
  return { ...row, amountMinor: Number(row.amountMinor), durationMs: Number(row.durationMs) };
}

type ExitStateRow = TicketRow & {
  attempts: number | null;
  p_id: string | null;
  p_kind: PaymentRow['kind'] | null;
  p_amountMinor: bigint | null;
  p_currency: string | null;
  p_status: PaymentStatus | null;
  p_paymentUrl: string | null;
  p_failureReason: string | null;
  p_durationMs: bigint | null;
  p_createdAt: Date | null;
  p_updatedAt: Date | null;
};

/** Splits a ticket row joined with its current payment (all `p_` columns null when it has none). */
function exitStateOf(row: ExitStateRow): ExitState {
  const {
    attempts,
    p_id,
    p_kind,
    p_amountMinor,
    p_currency,
    p_status,
    p_paymentUrl,
    p_failureReason,
    ...rest
  } = row;
  const { p_durationMs, p_createdAt, p_updatedAt, ...ticket } = rest;
  const current =
    p_id !== null &&
    p_kind !== null &&
    p_amountMinor !== null &&
    p_currency !== null &&
    p_status !== null &&
    p_paymentUrl !== null &&
    p_durationMs !== null &&
    p_createdAt !== null &&
    p_updatedAt !== null
      ? numbers({
          id: p_id,
          ticketId: ticket.id,
          kind: p_kind,
          amountMinor: p_amountMinor,
          currency: p_currency,
          status: p_status,
          paymentUrl: p_paymentUrl,
          failureReason: p_failureReason,
          durationMs: p_durationMs,
          createdAt: p_createdAt,
          updatedAt: p_updatedAt,
        })
      : undefined;
  return { ticket, current, attempts: attempts ?? 0 };
}
