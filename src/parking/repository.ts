import { type Kysely, sql } from 'kysely';
import type { PaymentStatus } from '../payments/api.ts';
import { createGroup } from '../platform/db/group.ts';
import type { Db } from '../platform/db/index.ts';
import type { Need, SpotType, VehicleType } from './allocation.ts';

/** SQL of the parking service, no rules: those are in service.ts and allocation.ts. */
export type TicketStatus = 'ACTIVE' | 'PAID' | 'LOST';
export type PaymentKind = 'EXIT' | 'LOST';

export interface SpotRow {
  id: string;
  floor: number;
  floorOrder: number;
  position: number;
  spotType: SpotType;
  ranks: Record<VehicleType, number | null>;
}

export interface TicketRow {
  id: string;
  licensePlate: string;
  vehicleType: VehicleType;
  spotId: string;
  floor: number;
  spotType: SpotType;
  status: TicketStatus;
  entryTime: Date;
  entryPanelId: string | null;
  exitTime: Date | null;
  exitPanelId: string | null;
  lostAt: Date | null;
  paidAt: Date | null;
  currentPaymentId: string | null;
}

export interface PaymentRow {
  id: string;
  ticketId: string;
  kind: PaymentKind;
  amountMinor: number;
  currency: string;
  status: PaymentStatus;
  paymentUrl: string;
  failureReason: string | null;
  durationMs: number;
  createdAt: Date;
  updatedAt: Date;
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

type Executor = Kysely<Record<string, never>>;

/** A payment to record as its ticket's live one, with the exit that asked for it. */
export interface PaymentLink {
  payment: PaymentRow;
  ticket: { exitTime: Date; exitPanelId: string | null };
}

const TICKET_COLUMNS = sql`parking_tickets.id::text as id, license_plate as "licensePlate",
  vehicle_type as "vehicleType", spot_id as "spotId", floor, spot_type as "spotType", parking_tickets.status,
  entry_time as "entryTime", entry_panel_id as "entryPanelId", exit_time as "exitTime", exit_panel_id as "exitPanelId",
  lost_at as "lostAt", paid_at as "paidAt", current_payment_id as "currentPaymentId"`;

const PAYMENT_COLUMNS = sql`id, ticket_id::text as "ticketId", kind, amount_minor as "amountMinor", currency,
  status, payment_url as "paymentUrl", failure_reason as "failureReason", duration_ms as "durationMs",
  created_at as "createdAt", updated_at as "updatedAt"`;

const rankColumn = (vehicle: VehicleType) => sql.ref(`rank_${vehicle.toLowerCase()}`);

export function createParkingRepository(db: Db) {
  async function ticket(id: string, executor: Executor = db): Promise<TicketRow | undefined> {
    const { rows } =
      await sql<TicketRow>`select ${TICKET_COLUMNS} from parking_tickets where id = ${id}::uuid`.execute(
        executor,
      );
    return rows[0];
  }

  async function payment(id: string, executor: Executor = db): Promise<PaymentRow | undefined> {
    const { rows } =
      await sql<PaymentRow>`select ${PAYMENT_COLUMNS} from parking_payments where id = ${id}`.execute(
        executor,
      );
    return rows[0] && numbers(rows[0]);
  }

  async function exitStates(ticketIds: string[]): Promise<(ExitState | undefined)[]> {
    const { rows } = await sql<TicketRow & Record<string, unknown>>`
      select ${TICKET_COLUMNS},
        (select count(*)::int from parking_payments c where c.ticket_id = parking_tickets.id) as "attempts",
        p.id as "p_id", p.kind as "p_kind", p.amount_minor as "p_amountMinor", p.currency as "p_currency",
        p.status as "p_status", p.payment_url as "p_paymentUrl", p.failure_reason as "p_failureReason",
        p.duration_ms as "p_durationMs", p.created_at as "p_createdAt", p.updated_at as "p_updatedAt"
      from parking_tickets left join parking_payments p on p.id = parking_tickets.current_payment_id
      where parking_tickets.id = any(${ticketIds}::uuid[])`.execute(db);
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
        await sql`select pg_advisory_xact_lock(hashtext('parking.sync_spots'))`.execute(trx);
        for (let start = 0; start < spots.length; start += 2000) {
          const rows = spots.slice(start, start + 2000).map(
            (spot) =>
              sql`(${spot.id}, ${spot.floor}, ${spot.floorOrder}, ${spot.position}, ${spot.spotType},
                 ${spot.ranks.MOTORCYCLE}::smallint, ${spot.ranks.CAR}::smallint, ${spot.ranks.BUS}::smallint)`,
          );
          await sql`
          insert into parking_spots (id, floor, floor_order, position, spot_type, rank_motorcycle, rank_car, rank_bus)
          values ${sql.join(rows)}
          on conflict (id) do update set floor = excluded.floor, floor_order = excluded.floor_order,
            position = excluded.position, spot_type = excluded.spot_type, rank_motorcycle = excluded.rank_motorcycle,
            rank_car = excluded.rank_car, rank_bus = excluded.rank_bus, retired = false
          where (parking_spots.floor, parking_spots.floor_order, parking_spots.position, parking_spots.spot_type,
                 parking_spots.rank_motorcycle, parking_spots.rank_car, parking_spots.rank_bus, parking_spots.retired)
            is distinct from (excluded.floor, excluded.floor_order, excluded.position, excluded.spot_type,
                 excluded.rank_motorcycle, excluded.rank_car, excluded.rank_bus, false)`.execute(trx);
        }
        // A retired spot keeps a vehicle parked on it until that vehicle leaves, but is never offered again.
        await sql`update parking_spots set retired = true, rank_motorcycle = null, rank_car = null, rank_bus = null
        where not retired and id <> all(${spots.map((spot) => spot.id)}::text[])`.execute(trx);
      });
    },

    /**
     * Takes the first free fitting spot and issues the ticket, in one statement: the row lock with
     * SKIP LOCKED lets concurrent entries take different spots without waiting on each other, and
     * the `ticket_id is null` re-check means a spot is never given twice. No row → nothing free.
     */
    async park(ticket: NewTicket): Promise<TicketRow | undefined> {
      const rank = rankColumn(ticket.vehicleType);
      const preferNeeded =
        ticket.needs.length > 0
          ? sql`case when spot_type in (${sql.join([...ticket.needs])}) then 0 else 1 end,`
          : sql``;
      const { rows } = await sql<TicketRow>`
        with candidate as (
          select id from parking_spots
          where ticket_id is null and ${rank} is not null
          order by ${preferNeeded} floor_order, ${rank}, position
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
        returning ${TICKET_COLUMNS}`.execute(db);
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
      const preferNeeded =
        first.needs.length > 0
          ? sql`case when spot_type in (${sql.join([...first.needs])}) then 0 else 1 end,`
          : sql``;
      const { rows } = await sql<TicketRow>`
        with wanted as (
          select * from unnest(${tickets.map((t) => t.id)}::uuid[], ${tickets.map((t) => t.licensePlate)}::text[],
            ${tickets.map((t) => t.entryTime.toISOString())}::timestamptz[], ${tickets.map((t) => t.entryPanelId)}::text[])
            with ordinality as w(id, plate, entry_time, panel, n)
        ), candidate as (
          select id, row_number() over (order by ${preferNeeded} floor_order, ${rank}, position) as n
          from (
            select id, spot_type, floor_order, ${rank}, position from parking_spots
            where ticket_id is null and ${rank} is not null
            order by ${preferNeeded} floor_order, ${rank}, position
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
        returning ${TICKET_COLUMNS}`.execute(db);
      const byId = new Map(rows.map((row) => [row.id, row]));
      return tickets.map((ticket) => byId.get(ticket.id));
    },

    /** The ticket of a vehicle still inside (ACTIVE or LOST), if any. */
    async ticketInside(licensePlate: string): Promise<TicketRow | undefined> {
      const { rows } = await sql<TicketRow>`select ${TICKET_COLUMNS} from parking_tickets
        where license_plate = ${licensePlate} and status in ('ACTIVE', 'LOST')`.execute(db);
      return rows[0];
    },

    async markLost(ticketId: string, at: Date): Promise<boolean> {
      const result = await sql`update parking_tickets set status = 'LOST', lost_at = ${at}
        where id = ${ticketId}::uuid and status = 'ACTIVE'`.execute(db);
      return Number(result.numAffectedRows ?? 0n) > 0;
    },

    async payments(ticketId: string): Promise<PaymentRow[]> {
      const { rows } = await sql<PaymentRow>`select ${PAYMENT_COLUMNS} from parking_payments
        where ticket_id = ${ticketId}::uuid order by created_at, id`.execute(db);
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
        const { rows } = await sql<{ ticketId: string }>`update parking_payments
          set status = 'COMPLETED', failure_reason = null, updated_at = ${at}
          where id = ${paymentId} and status in ('PENDING', 'FAILED')
          returning ticket_id::text as "ticketId"`.execute(trx);
        if (!rows[0]) return undefined;
        // The live-payment index has already refused a second COMPLETED payment for the ticket,
        // so the ticket is still inside here.
        const { rows: tickets } = await sql<TicketRow>`update parking_tickets
          set status = 'PAID', paid_at = ${at}, current_payment_id = ${paymentId}
          where id = ${rows[0].ticketId}::uuid and status in ('ACTIVE', 'LOST')
          returning ${TICKET_COLUMNS}`.execute(trx);
        const paid = tickets[0];
        if (!paid)
          throw new Error(
            `payment ${paymentId} completed for ticket ${rows[0].ticketId}, which is not inside`,
          );
        await sql`update parking_spots set ticket_id = null, occupied_at = null
          where id = ${paid.spotId} and ticket_id = ${paid.id}::uuid`.execute(trx);
        const completed = await payment(paymentId, trx);
        return completed && { ticket: paid, payment: completed };
      });
    },

    async setPaymentStatus(
      paymentId: string,
      status: PaymentStatus,
      from: PaymentStatus[],
      at: Date,
      failureReason: string | null = null,
    ): Promise<PaymentRow | undefined> {
      const { rows } = await sql<PaymentRow>`update parking_payments
        set status = ${status}, failure_reason = ${failureReason}, updated_at = ${at}
        where id = ${paymentId} and status in (${sql.join(from)})
        returning ${PAYMENT_COLUMNS}`.execute(db);
      return rows[0] && numbers(rows[0]);
    },

    /** Free and total spots per floor and type (retired spots are not counted). */
    async freeCounts(): Promise<FreeCount[]> {
      const { rows } = await sql<FreeCount>`
        select floor, spot_type as "spotType", count(*) filter (where ticket_id is null)::int as free,
               count(*)::int as total
        from parking_spots where not retired
        group by floor, floor_order, spot_type order by floor_order, spot_type`.execute(db);
      return rows;
    },
  };
}

export type ParkingRepository = ReturnType<typeof createParkingRepository>;

/** bigint columns arrive as BigInt (platform setting); amounts and durations fit a number. */
function numbers(row: PaymentRow): PaymentRow {
  return { ...row, amountMinor: Number(row.amountMinor), durationMs: Number(row.durationMs) };
}

function exitStateOf(row: TicketRow & Record<string, unknown>): ExitState {
  const ticket = Object.fromEntries(
    Object.entries(row).filter(([key]) => !key.startsWith('p_') && key !== 'attempts'),
  ) as unknown as TicketRow;
  const current: PaymentRow | undefined = row.p_id
    ? numbers({
        id: row.p_id as string,
        ticketId: ticket.id,
        kind: row.p_kind as PaymentKind,
        amountMinor: row.p_amountMinor as number,
        currency: row.p_currency as string,
        status: row.p_status as PaymentStatus,
        paymentUrl: row.p_paymentUrl as string,
        failureReason: row.p_failureReason as string | null,
        durationMs: row.p_durationMs as number,
        createdAt: row.p_createdAt as Date,
        updatedAt: row.p_updatedAt as Date,
      })
    : undefined;
  return { ticket, current, attempts: row.attempts as number };
}
