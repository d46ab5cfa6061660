import { sql } from 'kysely';
import type { Db } from '../../platform/db/index.ts';
import { offerRank, type SpotType, type VehicleType } from '../lot/allocation.ts';
import { type Executor, parkingDb } from '../rows.ts';
import { LIVE_RESERVATION, type ReservationRow } from '../tables.ts';

export interface NewReservation {
  id: string;
  userId: string;
  licensePlate: string;
  vehicleType: VehicleType;
  spotType: SpotType;
  startsAt: Date;
  endsAt: Date;
  quoteMinor: number;
  currency: string;
  createdAt: Date;
}

/** What admission checks, under the locks: the type's limit, the user's, and hold at once or not. */
export interface Admission {
  /** `reservations.spots[type]`: live reservations of the type at any one instant. */
  limit: number;
  perUser: number;
  /** The start is within `holdAheadMinutes`: a spot is held now, or nothing is booked. */
  holdNow: boolean;
}

export type Refusal = 'too_many' | 'overlap' | 'full' | 'no_spot';

const COLUMNS = [
  'id',
  'user_id as userId',
  'license_plate as licensePlate',
  'vehicle_type as vehicleType',
  'spot_type as spotType',
  'starts_at as startsAt',
  'ends_at as endsAt',
  'status',
  'spot_id as spotId',
  'floor',
  'ticket_id as ticketId',
  'quote_minor as quoteMinor',
  'currency',
  'created_at as createdAt',
  'updated_at as updatedAt',
] as const;

const asRow = <R extends { quoteMinor: bigint }>(row: R) => ({ ...row, quoteMinor: Number(row.quoteMinor) });

/** SQL of reservations: admission under per-type locks, holds on concrete spots, the job's scans. */
export function createReservationsRepository(database: Db) {
  const db = parkingDb(database);

  /** Live reservations of one spot type overlapping [from, to) (admission and availability). */
  async function overlapping(executor: Executor, spotType: SpotType, from: Date, to: Date) {
    return executor
      .selectFrom('parking_reservations')
      .select(['starts_at as startsAt', 'ends_at as endsAt'])
      .where('spot_type', '=', spotType)
      .where('status', 'in', LIVE_RESERVATION)
      .where('starts_at', '<', to)
      .where('ends_at', '>', from)
      .execute();
  }

  async function read(executor: Executor, id: string): Promise<ReservationRow | undefined> {
    const row = await executor
      .selectFrom('parking_reservations')
      .select(COLUMNS)
      .where('id', '=', id)
      .executeTakeFirst();
    return row && asRow(row);
  }

  return {
    overlapping: (spotType: SpotType, from: Date, to: Date) => overlapping(db, spotType, from, to),

    /**
     * Books a reservation, or says why not. Admissions of one spot type go one at a time (a
     * transaction-level advisory lock per type, then per user and per plate, always in that order),
     * so the peak of live reservations over the window is counted with no admission in between:
     * never more than `limit` at any instant, whatever the concurrency.
     */
    async book(reservation: NewReservation, admission: Admission): Promise<ReservationRow | Refusal> {
      const refused = Symbol('refused');
      let why: Refusal = 'full';
      try {
        return await db.transaction().execute(async (trx) => {
          const refuse = (reason: Refusal) => {
            why = reason;
            return refused;
          };
          for (const key of [
            `type:${reservation.spotType}`,
            `user:${reservation.userId}`,
            `plate:${reservation.licensePlate}`,
          ]) {
            // Raw SQL: a transaction-level advisory lock (no table to lock for "admissions of this type").
            await sql`select pg_advisory_xact_lock(hashtextextended(${`parking.reservations:${key}`}, 0))`.execute(
              trx,
            );
          }
          const mine = await trx
            .selectFrom('parking_reservations')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('user_id', '=', reservation.userId)
            .where('status', 'in', LIVE_RESERVATION)
            .executeTakeFirstOrThrow();
          if (Number(mine.n) >= admission.perUser) throw refuse('too_many');
          const samePlate = await trx
            .selectFrom('parking_reservations')
            .select('id')
            .where('license_plate', '=', reservation.licensePlate)
            .where('status', 'in', LIVE_RESERVATION)
            .where('starts_at', '<', reservation.endsAt)
            .where('ends_at', '>', reservation.startsAt)
            .executeTakeFirst();
          if (samePlate) throw refuse('overlap');
          const live = await overlapping(trx, reservation.spotType, reservation.startsAt, reservation.endsAt);
          if (peakOverlap(live, reservation.startsAt, reservation.endsAt) >= admission.limit)
            throw refuse('full');
          await trx
            .insertInto('parking_reservations')
            .values({
              id: reservation.id,
              user_id: reservation.userId,
              license_plate: reservation.licensePlate,
              vehicle_type: reservation.vehicleType,
              spot_type: reservation.spotType,
              starts_at: reservation.startsAt,
              ends_at: reservation.endsAt,
              status: 'BOOKED',
              quote_minor: reservation.quoteMinor,
              currency: reservation.currency,
              created_at: reservation.createdAt,
              updated_at: reservation.createdAt,
            })
            .execute();
          if (admission.holdNow && !(await holdSpot(trx, reservation, reservation.createdAt))) {
            throw refuse('no_spot');
          }
          return (await read(trx, reservation.id)) as ReservationRow;
        });
      } catch (error) {
        if (error === refused) return why;
        throw error;
      }
    },

    byId: (id: string) => read(db, id),

    /** A user's reservations, the latest start first. */
    async mine(userId: string, limit = 50): Promise<ReservationRow[]> {
      const rows = await db
        .selectFrom('parking_reservations')
        .select(COLUMNS)
        .where('user_id', '=', userId)
        .orderBy('starts_at', 'desc')
        .limit(limit)
        .execute();
      return rows.map(asRow);
    },

    /** BOOKED reservations starting by `until` (oldest first): the job holds a spot for each. */
    async dueForHold(until: Date, limit = 500) {
      return db
        .selectFrom('parking_reservations')
        .select(['id', 'spot_type as spotType'])
        .where('status', '=', 'BOOKED')
        .where('starts_at', '<=', until)
        .orderBy('starts_at')
        .limit(limit)
        .execute();
    },

    /** Holds a free spot of its type for one BOOKED reservation; false when none is free. */
    async hold(reservation: { id: string; spotType: SpotType }, at: Date): Promise<boolean> {
      return db.transaction().execute(async (trx) => (await holdSpot(trx, reservation, at)) !== undefined);
    },

    /**
     * BOOKED and HELD reservations that started before `startedBefore` and whose vehicle never
     * came become NO_SHOW; their held spots are free again. Returns how many.
     */
    async releaseNoShows(startedBefore: Date, at: Date): Promise<number> {
      return db.transaction().execute(async (trx) => {
        const gone = await trx
          .updateTable('parking_reservations')
          .set({ status: 'NO_SHOW', updated_at: at })
          .where('status', 'in', LIVE_RESERVATION)
          .where('starts_at', '<', startedBefore)
          .returning('id')
          .execute();
        await freeHeldSpots(
          trx,
          gone.map((row) => row.id),
        );
        return gone.length;
      });
    },

    /**
     * The user's reservation becomes CANCELLED and its held spot free, if it is still BOOKED or
     * HELD. Returns the reservation as it is afterwards and whether this call cancelled it
     * (undefined: not this user's).
     */
    async cancel(id: string, userId: string, at: Date) {
      return db.transaction().execute(async (trx) => {
        const cancelled = await trx
          .updateTable('parking_reservations')
          .set({ status: 'CANCELLED', updated_at: at })
          .where('id', '=', id)
          .where('user_id', '=', userId)
          .where('status', 'in', LIVE_RESERVATION)
          .returning('id')
          .executeTakeFirst();
        if (cancelled) await freeHeldSpots(trx, [id]);
        const row = await read(trx, id);
        return row?.userId === userId ? { row, cancelled: cancelled !== undefined } : undefined;
      });
    },
  };
}

export type ReservationsRepository = ReturnType<typeof createReservationsRepository>;

/**
 * Holds the first free spot of the reservation's type (file order) for it: the claim skips spots
 * other transactions have locked (an entry taking one), and the reservation becomes HELD only if
 * it is still BOOKED. Undefined: no spot of the type is free, nothing changed.
 */
async function holdSpot(executor: Executor, reservation: { id: string; spotType: SpotType }, at: Date) {
  // Every spot type fits a motorcycle, each at its own rank: the motorcycle free index holds the
  // free spots of exactly this type at this rank.
  const rank = offerRank('MOTORCYCLE', reservation.spotType);
  const spot = await executor
    .selectFrom('parking_spots')
    .select(['id', 'floor'])
    .where('ticket_id', 'is', null)
    .where('reservation_id', 'is', null)
    .where('rank_motorcycle', '=', rank)
    .orderBy('floor_order')
    .orderBy('rank_motorcycle')
    .orderBy('position')
    .limit(1)
    .forUpdate()
    .skipLocked()
    .executeTakeFirst();
  if (!spot) return undefined;
  const held = await executor
    .updateTable('parking_reservations')
    .set({ status: 'HELD', spot_id: spot.id, floor: spot.floor, updated_at: at })
    .where('id', '=', reservation.id)
    .where('status', '=', 'BOOKED')
    .returning('id')
    .executeTakeFirst();
  if (!held) return undefined;
  await executor
    .updateTable('parking_spots')
    .set({ reservation_id: reservation.id })
    .where('id', '=', spot.id)
    .execute();
  return spot;
}

async function freeHeldSpots(executor: Executor, reservationIds: string[]) {
  if (reservationIds.length === 0) return;
  await executor
    .updateTable('parking_spots')
    .set({ reservation_id: null })
    .where('reservation_id', 'in', reservationIds)
    .execute();
}

/**
 * The most of these windows live at one instant of [from, to): a sweep over their starts and ends
 * (half-open: one ending when another starts never counts both). Exact, not the plain count of
 * overlaps (which would refuse a window two short bookings share one after the other).
 */
export function peakOverlap(windows: { startsAt: Date; endsAt: Date }[], from: Date, to: Date): number {
  const edges: [number, number][] = [];
  for (const window of windows) {
    const start = Math.max(window.startsAt.getTime(), from.getTime());
    const end = Math.min(window.endsAt.getTime(), to.getTime());
    if (start < end) edges.push([start, 1], [end, -1]);
  }
  // At one instant ends come before starts (half-open windows).
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let live = 0;
  let peak = 0;
  for (const [, step] of edges) {
    live += step;
    peak = Math.max(peak, live);
  }
  return peak;
}
