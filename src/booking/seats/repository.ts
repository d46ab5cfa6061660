import { type RawBuilder, type Selectable, sql } from 'kysely';
import type { Db } from '../../platform/db/index.ts';
import { createStatements } from '../../platform/db/prepared.ts';
import type { BookingDb, BookingTables } from '../tables.ts';

/** A hold as stored, its total in minor units. */
export type HoldRow = Omit<Selectable<BookingTables['booking_holds']>, 'total_minor' | 'retained'> & {
  total_minor: number;
};

/** A hold about to be claimed: HELD from `created_at` until `expires_at`. */
export type NewHold = Omit<HoldRow, 'status' | 'released_at' | 'release_reason'>;

/** Seats the claim could not take; `closed` when the show's inventory is closed (cancelled). */
export interface ClaimResult {
  /** Seat ids it could not claim, with when their hold ends (Infinity when booked or closed). */
  taken: { id: string; until: number }[];
  closed: boolean;
  /** Refused, seats aside: the user already has as many live holds as the caps allow. */
  limit?: LiveHolds;
  /** Undecided: the user's holds changed while a batch counted them; `claimSeats` decides it alone. */
  retry?: boolean;
}

/** The caps on a user's live holds (HELD and not expired): on one show, and over all shows. */
export interface HoldLimits {
  perShow: number;
  perUser: number;
}

/** A user's live holds as a claim counted them, oldest first. */
export interface LiveHolds {
  onShow: number;
  total: number;
  holds: { id: string; show_id: string }[];
}

export type SeatStateRow = Pick<
  Selectable<BookingTables['booking_show_seats']>,
  'seat_id' | 'status' | 'held_until'
>;

/** Concurrent holds of one user that keep changing under a claim: after this many tries, it is refused. */
const MAX_STALE_CLAIMS = 5;

const HOLD_COLUMNS = [
  'id',
  'show_id',
  'user_id',
  // uuid[] comes back from the drivers as text; text[] as an array.
  sql<string[]>`seat_ids::text[]`.as('seat_ids'),
  'seats',
  'total_minor',
  'status',
  'expires_at',
  'created_at',
  'released_at',
  'release_reason',
] as const;

export function createSeatsRepository(database: Db, options: { limits: HoldLimits; prepare?: boolean }) {
  const db: BookingDb = database.withTables<BookingTables>();
  // The claims are long statements of fixed text: prepared, each connection plans them once.
  const prepared = (executor: BookingDb) => createStatements(executor, options.prepare ?? false).query;
  const run = prepared(db);
  const { perShow, perUser } = options.limits;
  // A user whose bound stays within both caps even with this claim's holds is not counted.
  const minCap = Math.min(perShow, perUser);

  // Raw SQL: the arbiter, one statement of data-modifying CTEs that locks seats in seat order and counts the user's holds.
  /** One try of `claimSeats`; 'stale' when another hold of the user committed under it. */
  async function claimOnce(hold: NewHold, now: Date): Promise<ClaimResult | 'stale'> {
    const rows = await run(
      'booking_claim',
      sql<{
        ok: boolean;
        allowed: boolean;
        locked: boolean;
        live: LiveRow;
        taken: TakenRow[];
      }>`
      with settings as (select set_config('synchronous_commit', 'off', true)),
      seen as (
        select coalesce(max(version), 0) as version, coalesce(max(${bound(sql`v`, now)}), 0) as bound
        from booking_hold_users v where user_id = ${hold.user_id}
      ),
      live as (${liveHolds(sql`${hold.user_id}::uuid`, hold.show_id, now, false, sql`(select bound from seen) + 1 > ${minCap}`)}),
      allowed as (select on_show < ${perShow} and total < ${perUser} as ok from live),
      wanted as (
        select seat_id from booking_show_seats
        where show_id = ${hold.show_id} and seat_id = any(${hold.seat_ids}::uuid[])
          and (status = 'AVAILABLE' or (status = 'HELD' and held_until <= ${now}))
          and (select ok from allowed)
        order by seat_id
        for update
      ),
      verdict as (
        select count(*) = ${hold.seat_ids.length} as ok from wanted, settings
      ),
      counted as (
        insert into booking_hold_users as u (user_id, version, held, held_until)
        select ${hold.user_id}, 1, 1, ${hold.expires_at}::timestamptz from verdict where verdict.ok
        on conflict (user_id) do update set ${bump(sql`u`, now)}
        returning version
      ),
      fresh as (
        select coalesce((select version from counted) = (select version from seen) + 1, false) as ok
      ),
      claimed as (
        update booking_show_seats ss set status = 'HELD', hold_id = ${hold.id}, held_until = ${hold.expires_at}
        from verdict, fresh
        where verdict.ok and fresh.ok and ss.show_id = ${hold.show_id} and ss.seat_id in (select seat_id from wanted)
        returning ss.seat_id
      ),
      inserted as (
        insert into booking_holds (id, show_id, user_id, seat_ids, seats, total_minor, status, expires_at, created_at)
        select ${hold.id}, ${hold.show_id}, ${hold.user_id}, ${hold.seat_ids}::uuid[], ${hold.seats}::text[],
          ${hold.total_minor}, 'HELD', ${hold.expires_at}, ${hold.created_at}
        from verdict, fresh where verdict.ok and fresh.ok
        returning id
      )
      select coalesce((select ok from verdict), false) and (select ok from fresh)
          and (select count(*) from claimed) = ${hold.seat_ids.length} and (select count(*) from inserted) = 1 as ok,
        (select ok from allowed) as allowed,
        coalesce((select ok from verdict), false) as locked,
        (select to_jsonb(live) from live) as live,
        ${takenRows(hold.show_id, hold.seat_ids, sql`(select seat_id from wanted)`)} as taken`,
    );
    const result = rows[0];
    if (result?.ok) return { taken: [], closed: false };
    if (result && !result.allowed)
      return { taken: [], closed: false, limit: await named(hold, liveOf(result.live), now) };
    // Every seat locked and the caps passed on a snapshot the user's counter had moved past.
    if (result?.locked) return 'stale';
    // Only the seats the claim could not lock are taken: the others were free, and naming them
    // would have the 409 (and the taken-seat filter) refuse a free seat.
    const taken = result?.taken ?? [];
    const notLocked = new Set(taken.map((row) => row.id));
    const missing = hold.seat_ids.filter((id) => notLocked.has(id));
    // A refusal with every seat locked cannot happen; should it, refuse them all rather than grant.
    return takenResult(missing.length > 0 ? missing : hold.seat_ids, taken, now);
  }

  /** A refusal's counts (as the claim decided) with the holds they count, read after it. */
  async function named(hold: NewHold, counted: LiveHolds, now: Date): Promise<LiveHolds> {
    return { ...counted, holds: (await liveHoldsOf(hold.user_id, hold.show_id, now)).holds };
  }

  async function liveHoldsOf(userId: string, showId: string, now: Date): Promise<LiveHolds> {
    // Raw SQL: the arbiter's own count of live holds (liveHolds), so a refusal names what claims count.
    const { rows } = await sql<LiveRow>`${liveHolds(sql`${userId}::uuid`, showId, now, true)}`.execute(db);
    return liveOf(rows[0]);
  }

  return {
    async seatStates(showId: string): Promise<SeatStateRow[]> {
      return db
        .selectFrom('booking_show_seats')
        .select(['seat_id', 'status', 'held_until'])
        .where('show_id', '=', showId)
        .where('status', '<>', 'AVAILABLE')
        .execute();
    },

    /**
     * The arbiter, one statement (one round trip, one commit). `wanted` locks the requested seat
     * rows that look free, in seat order (so concurrent holds never deadlock); a row another
     * transaction holds is waited for and re-checked on its latest committed version, so a seat
     * taken meanwhile drops out. Rows already taken are not locked at all (a lock is a write).
     * Only if every requested seat is in `wanted` does the UPDATE claim them all and the hold row
     * get inserted; otherwise nothing is written. Concurrent claims of a seat queue on its row
     * lock, and the loser sees the winner's hold.
     * The user's caps are counted first (`live`); over a cap, no seat is even locked. The count is
     * the statement's snapshot, so the user's change counter (`booking_hold_users`) is bumped under
     * its row lock: if the value it had is not the one the snapshot saw, another hold of this user
     * committed meanwhile, nothing is written and the statement runs again on a fresh snapshot.
     * Holds commit asynchronously (`synchronous_commit` off for this transaction only): a database
     * crash may forget the last moment's holds, whole (their seats free again), never half of one
     * and never a booking or payment — and it saves the WAL flush that otherwise caps throughput.
     * Returns the seat ids it could not claim (empty on success), or the user's live holds.
     */
    async claimSeats(hold: NewHold, now: Date): Promise<ClaimResult> {
      for (let attempt = 1; ; attempt++) {
        const result = await claimOnce(hold, now);
        if (result !== 'stale') return result;
        if (attempt === MAX_STALE_CLAIMS) {
          return { taken: [], closed: false, limit: await liveHoldsOf(hold.user_id, hold.show_id, now) };
        }
      }
    },

    // Raw SQL: the batched arbiter, seat locks in seat order and per-user counters, then one unnest/jsonb bulk write.
    /**
     * Several holds of one show in one transaction and one commit (group commit, `hold-batch.ts`).
     * The free-looking rows of all their seats are locked in seat order, as `claimSeats` does, then
     * the holds are decided in arrival order, each all or nothing (`decideBatch`): within its
     * user's caps, a hold is granted when every seat of it is locked (free) and not granted to an
     * earlier hold of the batch; the granted ones are written in one statement. Each result is
     * what `claimSeats` would have answered, or `retry` for `claimSeats` to decide.
     */
    async claimMany(holds: NewHold[], now: Date): Promise<ClaimResult[]> {
      const showId = holds[0].show_id;
      if (holds.some((hold) => hold.show_id !== showId)) throw new Error('claimMany: one show per batch');
      const requested = [...new Set(holds.flatMap((hold) => hold.seat_ids))];
      const decided = await db.transaction().execute(async (trx) => {
        const users = batchUsers(holds);
        // The users' change counters are bumped (in user order) only once every seat lock is
        // taken, so a batch waiting for seats holds no user's row; a counter that moved past
        // the snapshot's value means that user's count is stale, and their holds are left
        // undecided here (`retry`).
        const runInTransaction = prepared(trx);
        const locked = await runInTransaction(
          'booking_claim_batch',
          sql<{
            seat_id: string;
            taken: TakenRow[] | null;
            users: (LiveRow & { user_id: string; fresh: boolean })[] | null;
          }>`
          with settings as (select set_config('synchronous_commit', 'off', true)),
          wanted as (
            select seat_id from booking_show_seats
            where show_id = ${showId} and seat_id = any(${requested}::uuid[])
              and (status = 'AVAILABLE' or (status = 'HELD' and held_until <= ${now}))
            order by seat_id
            for update
          ),
          users as (
            select u.user_id, u.n, u.until, coalesce(v.version, 0) as version, l.on_show, l.total
            from unnest(${users.map((user) => user.id)}::uuid[], ${users.map((user) => user.n)}::int[],
                ${users.map((user) => user.until)}::timestamptz[]) as u(user_id, n, until)
              left join booking_hold_users v on v.user_id = u.user_id
              cross join lateral (${liveHolds(sql`u.user_id`, showId, now, false, sql`coalesce(${bound(sql`v`, now)}, 0) + u.n > ${minCap}`)}) l
          ),
          counted as (
            insert into booking_hold_users as b (user_id, version, held, held_until)
            select user_id, 1, n, until from users where (select count(*) from wanted) >= 0 order by user_id
            on conflict (user_id) do update set ${bump(sql`b`, now)}
            returning user_id, version
          )
          select seat_id::text as seat_id, null::jsonb as taken, null::jsonb as users from wanted
          union all
          select null::text, ${takenRows(showId, requested, sql`(select seat_id from wanted)`)},
            (select jsonb_agg(jsonb_build_object('user_id', u.user_id, 'fresh', c.version = u.version + 1,
                'on_show', u.on_show, 'total', u.total))
              from users u join counted c on c.user_id = u.user_id)
          from settings`,
        );
        const free = new Set<string>();
        let taken: TakenRow[] = [];
        const counts = new Map<string, UserCount>();
        for (const row of locked) {
          if (row.seat_id) free.add(row.seat_id);
          else {
            taken = row.taken ?? [];
            for (const user of row.users ?? [])
              counts.set(user.user_id, { fresh: user.fresh, ...liveOf(user) });
          }
        }
        const { results, granted } = decideBatch(holds, { free, taken, counts, limits: options.limits, now });
        if (granted.length > 0) {
          const seats = granted.flatMap((hold) => hold.seat_ids.map((id) => ({ id, hold })));
          const rows = await runInTransaction(
            'booking_claim_batch_write',
            sql<{ claimed: number; inserted: number }>`
            with claimed as (
              update booking_show_seats ss set status = 'HELD', hold_id = c.hold_id, held_until = c.held_until
              from unnest(${seats.map((seat) => seat.id)}::uuid[], ${seats.map((seat) => seat.hold.id)}::uuid[],
                ${seats.map((seat) => seat.hold.expires_at.toISOString())}::timestamptz[]) as c(seat_id, hold_id, held_until)
              where ss.show_id = ${showId} and ss.seat_id = c.seat_id
              returning ss.seat_id
            ),
            inserted as (
              insert into booking_holds (id, show_id, user_id, seat_ids, seats, total_minor, status, expires_at, created_at)
              select h.id, ${showId}, h.user_id,
                array(select e::uuid from jsonb_array_elements_text(h.seat_ids) with ordinality as a(e, n) order by n),
                array(select e from jsonb_array_elements_text(h.seats) with ordinality as a(e, n) order by n),
                h.total_minor, 'HELD', h.expires_at, h.created_at
              from jsonb_to_recordset(${JSON.stringify(granted)}::jsonb) as h(id uuid, user_id uuid, seat_ids jsonb,
                seats jsonb, total_minor int8, expires_at timestamptz, created_at timestamptz)
              returning id
            )
            select (select count(*)::int from claimed) as claimed, (select count(*)::int from inserted) as inserted`,
          );
          // Every granted seat was locked above, so this cannot differ; if it did, roll back and
          // let each hold be decided alone.
          if (rows[0].claimed !== seats.length || rows[0].inserted !== granted.length) {
            throw new Error('claimMany: a locked seat was not claimed');
          }
        }
        return results;
      });
      return Promise.all(
        decided.map(async (result, i) =>
          result.limit ? { ...result, limit: await named(holds[i], result.limit, now) } : result,
        ),
      );
    },

    async findHold(id: string): Promise<HoldRow | undefined> {
      const row = await db
        .selectFrom('booking_holds')
        .select(HOLD_COLUMNS)
        .where('id', '=', id)
        .executeTakeFirst();
      return row && { ...row, total_minor: Number(row.total_minor) };
    },

    /** A user's live holds (HELD, not past their end), oldest first; of one show when given. */
    async liveHolds(userId: string, showId: string | undefined, now: Date): Promise<HoldRow[]> {
      let query = db
        .selectFrom('booking_holds')
        .select(HOLD_COLUMNS)
        .where('user_id', '=', userId)
        .where('status', '=', 'HELD')
        .where('expires_at', '>', now);
      if (showId) query = query.where('show_id', '=', showId);
      const rows = await query.orderBy('created_at').limit(100).execute();
      return rows.map((row) => ({ ...row, total_minor: Number(row.total_minor) }));
    },

    /** Releases a HELD hold (user cancelled it, payment failed or timed out); false when not HELD. */
    async releaseHold(id: string, reason: string, now: Date): Promise<{ show_id: string } | undefined> {
      // One statement: the hold and its seats change together, in one round trip.
      return db
        .with('released', (qb) =>
          qb
            .updateTable('booking_holds')
            .set({ status: 'RELEASED', released_at: now, release_reason: reason })
            .where('id', '=', id)
            .where('status', '=', 'HELD')
            .returning(['id', 'show_id', 'seat_ids']),
        )
        .with('freed', (qb) =>
          qb
            .updateTable('booking_show_seats as ss')
            .from('released')
            .set({ status: 'AVAILABLE', hold_id: null, held_until: null })
            .whereRef('ss.show_id', '=', 'released.show_id')
            .where((eb) => eb('ss.seat_id', '=', eb.fn.any('released.seat_ids')))
            .whereRef('ss.hold_id', '=', 'released.id')
            .where('ss.status', '=', 'HELD')
            .returning('ss.seat_id'),
        )
        .selectFrom('released')
        .select((eb) => ['show_id', eb.selectFrom('freed').select(eb.fn.countAll().as('n')).as('freed')])
        .executeTakeFirst();
    },

    /**
     * The sweeper: marks holds past their expiry EXPIRED and frees the seats that are still theirs
     * (a seat may already belong to a newer hold, which took it the moment this one expired).
     */
    async expireHolds(now: Date, limit = 1000): Promise<{ holds: number; showIds: string[] }> {
      // Raw SQL: the sweeper's FOR UPDATE SKIP LOCKED claim inside data-modifying CTEs (one round trip).
      const { rows } = await sql<{ show_id: string; holds: number }>`
        with expired as (
          update booking_holds set status = 'EXPIRED', released_at = ${now}, release_reason = 'expired'
          where id in (
            select id from booking_holds where status = 'HELD' and expires_at <= ${now}
            order by expires_at limit ${limit} for update skip locked
          )
          returning id, show_id, seat_ids
        ), freed as (
          update booking_show_seats ss set status = 'AVAILABLE', hold_id = null, held_until = null
          from expired
          where ss.show_id = expired.show_id and ss.seat_id = any(expired.seat_ids) and ss.hold_id = expired.id
            and ss.status = 'HELD'
          returning ss.seat_id
        )
        select show_id, count(*)::int as holds, (select count(*) from freed) as freed from expired group by show_id`.execute(
        db,
      );
      return {
        holds: rows.reduce((sum, row) => sum + row.holds, 0),
        showIds: rows.map((row) => row.show_id),
      };
    },

    /**
     * Keeps a hold's seats while its payment is in flight (never shortens it), and its user's
     * bound with it: the bound counts a hold only until `held_until`.
     */
    async extendHold(id: string, until: Date): Promise<void> {
      await db
        .with('extended', (qb) =>
          qb
            .updateTable('booking_holds')
            .set((eb) => ({ expires_at: eb.fn<Date>('greatest', ['expires_at', eb.val(until)]) }))
            .where('id', '=', id)
            .where('status', '=', 'HELD')
            .returning(['id', 'show_id', 'seat_ids', 'user_id']),
        )
        .with('bounded', (qb) =>
          qb
            .updateTable('booking_hold_users as u')
            .from('extended as e')
            .set((eb) => ({ held_until: eb.fn<Date>('greatest', ['u.held_until', eb.val(until)]) }))
            .whereRef('u.user_id', '=', 'e.user_id')
            .returning('u.user_id'),
        )
        .updateTable('booking_show_seats as ss')
        .from('extended as e')
        .set((eb) => ({ held_until: eb.fn<Date>('greatest', ['ss.held_until', eb.val(until)]) }))
        .whereRef('ss.show_id', '=', 'e.show_id')
        .where((eb) => eb('ss.seat_id', '=', eb.fn.any('e.seat_ids')))
        .whereRef('ss.hold_id', '=', 'e.id')
        .where('ss.status', '=', 'HELD')
        .execute();
    },

    /** When the retention job removed the show's seat inventory (undefined: it is there). */
    async inventoryRemovedAt(showId: string): Promise<Date | undefined> {
      const row = await db
        .selectFrom('booking_shows')
        .select('inventory_removed_at')
        .where('id', '=', showId)
        .executeTakeFirst();
      return row?.inventory_removed_at ?? undefined;
    },

    /** Audit: seats claimed by more than one live hold or booking, and live holds missing seats. */
    async integrity(showId: string, now: Date) {
      const count = sql<number>`count(*)::int`.as('n');
      return db
        .with('live', (qb) =>
          qb
            .selectFrom('booking_holds')
            .select(['id', sql<string>`unnest(seat_ids)`.as('seat_id')])
            .where('show_id', '=', showId)
            .where((eb) =>
              eb.or([
                eb('status', '=', 'BOOKED'),
                eb.and([eb('status', '=', 'HELD'), eb('expires_at', '>', now)]),
              ]),
            ),
        )
        .selectNoFrom((eb) => [
          eb
            .selectFrom(
              eb
                .selectFrom('live')
                .select('seat_id')
                .groupBy('seat_id')
                .having(eb.fn.countAll(), '>', 1)
                .as('d'),
            )
            .select(count)
            .$asScalar()
            .as('double_booked'),
          eb
            .selectFrom('live as l')
            .select(count)
            .where(({ not, exists, selectFrom }) =>
              not(
                exists(
                  selectFrom('booking_show_seats as ss')
                    .select(sql`1`.as('one'))
                    .where('ss.show_id', '=', showId)
                    .whereRef('ss.seat_id', '=', 'l.seat_id')
                    .whereRef('ss.hold_id', '=', 'l.id'),
                ),
              ),
            )
            .$asScalar()
            .as('incomplete'),
          eb
            .selectFrom('booking_show_seats')
            .select(count)
            .where('show_id', '=', showId)
            .where('status', '=', 'HELD')
            .where('held_until', '>', now)
            .$asScalar()
            .as('held'),
          eb
            .selectFrom('booking_show_seats')
            .select(count)
            .where('show_id', '=', showId)
            .where('status', '=', 'BOOKED')
            .$asScalar()
            .as('booked'),
          eb
            .selectFrom('live')
            .select(sql<number>`count(distinct id)::int`.as('n'))
            .$asScalar()
            .as('live_holds'),
        ])
        .executeTakeFirstOrThrow();
    },
  };
}

/** A user's live holds as a batch counted them; `fresh`: no other hold of theirs committed meanwhile. */
interface UserCount extends Omit<LiveHolds, 'holds'> {
  fresh: boolean;
}

/**
 * The decisions of a batch, in arrival order, each all or nothing: a hold whose user's count is
 * stale is left undecided; one past its user's caps (counting the batch's earlier grants) is
 * refused; otherwise it is granted when every seat of it is locked (free) and not granted to an
 * earlier hold of the batch.
 */
function decideBatch(
  holds: NewHold[],
  state: {
    free: Set<string>;
    taken: TakenRow[];
    counts: Map<string, UserCount>;
    limits: HoldLimits;
    now: Date;
  },
): { results: ClaimResult[]; granted: NewHold[] } {
  const { free, taken, counts, limits, now } = state;
  const results: ClaimResult[] = [];
  const granted: NewHold[] = [];
  const grantedUntil = new Map<string, number>();
  for (const hold of holds) {
    const user = counts.get(hold.user_id);
    if (!user?.fresh) {
      results.push({ taken: [], closed: false, retry: true });
    } else if (user.onShow >= limits.perShow || user.total >= limits.perUser) {
      results.push({
        taken: [],
        closed: false,
        limit: { onShow: user.onShow, total: user.total, holds: [] },
      });
    } else if (hold.seat_ids.every((id) => free.has(id) && !grantedUntil.has(id))) {
      for (const id of hold.seat_ids) grantedUntil.set(id, hold.expires_at.getTime());
      granted.push(hold);
      user.onShow++;
      user.total++;
      results.push({ taken: [], closed: false });
    } else {
      // Taken in the table, or by an earlier hold of this batch.
      const result = takenResult(
        hold.seat_ids.filter((id) => !free.has(id)),
        taken,
        now,
      );
      for (const id of hold.seat_ids) {
        const until = grantedUntil.get(id);
        if (until !== undefined) result.taken.push({ id, until });
      }
      results.push(result);
    }
  }
  return { results, granted };
}

/** A user's live holds as SQL returns them: their counts, and which they are when asked. */
interface LiveRow {
  on_show: number;
  total: number;
  holds?: { id: string; show_id: string }[];
}

/**
 * The live holds (HELD, not expired) of `user` (an SQL expression): on `showId` and in all, and
 * with `which`, their ids. A claim counts them and names them only when it refuses (liveHoldsOf):
 * with the caps raised, a list read and parsed on every hold would grow with the user's holds.
 */
function liveHolds(
  user: RawBuilder<unknown>,
  showId: string,
  now: Date,
  which = false,
  onlyIf: RawBuilder<unknown> = sql`true`,
) {
  const list = which
    ? sql`, coalesce(jsonb_agg(jsonb_build_object('id', h.id, 'show_id', h.show_id) order by h.created_at), '[]'::jsonb) as holds`
    : sql``;
  // `onlyIf` names no column of `h`: PostgreSQL checks it once, and reads no hold when it is false.
  return sql`select count(*) filter (where h.show_id = ${showId})::int as on_show, count(*)::int as total${list}
    from booking_holds h
    where h.user_id = ${user} and h.status = 'HELD' and h.expires_at > ${now} and ${onlyIf}`;
}

/**
 * The upper bound on a user's live holds that their `booking_hold_users` row (alias `row`) keeps:
 * every hold that can still be live was made since `held_until` last passed, and `held` counts
 * those (refused tries too: a bound may be high, never low).
 */
function bound(row: RawBuilder<unknown>, now: Date) {
  return sql`case when ${row}.held_until > ${now} then ${row}.held else 0 end`;
}

/** The bump of a user's row by a claim of `excluded.held` holds ending by `excluded.held_until`. */
function bump(row: RawBuilder<unknown>, now: Date) {
  return sql`version = ${row}.version + 1,
    held = ${bound(row, now)} + excluded.held,
    held_until = greatest(${row}.held_until, excluded.held_until)`;
}

/** A batch's users in user order (the order their rows are locked in), each with its holds' count and latest end. */
function batchUsers(holds: NewHold[]) {
  const users = new Map<string, { id: string; n: number; until: string }>();
  for (const hold of holds) {
    const until = hold.expires_at.toISOString();
    const user = users.get(hold.user_id);
    if (!user) users.set(hold.user_id, { id: hold.user_id, n: 1, until });
    else {
      user.n++;
      if (until > user.until) user.until = until;
    }
  }
  return [...users.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

function liveOf(row: LiveRow | undefined): LiveHolds {
  return { onShow: row?.on_show ?? 0, total: row?.total ?? 0, holds: row?.holds ?? [] };
}

/** A requested seat the claim did not lock, as the statement's snapshot saw it. */
interface TakenRow {
  id: string;
  status: string;
  held_until: string | null;
}

/**
 * The requested seats missing from `locked`, read without locking, as a JSON array: the 409's
 * seats and how long the taken-seat filter may remember them.
 */
function takenRows(showId: string, seatIds: string[], locked: RawBuilder<unknown>) {
  return sql`coalesce((select jsonb_agg(jsonb_build_object('id', seat_id, 'status', status, 'held_until', held_until)
      order by seat_id)
    from booking_show_seats
    where show_id = ${showId} and seat_id = any(${seatIds}::uuid[]) and seat_id not in ${locked}), '[]'::jsonb)`;
}

/**
 * The claim result for `missing` (the seats it could not lock), with when each one's hold ends:
 * Infinity when booked or closed, 0 (not worth remembering) when the snapshot still saw it free
 * — it was taken by a transaction that committed during the claim — or it is not in the inventory.
 */
function takenResult(missing: string[], rows: TakenRow[], now: Date): ClaimResult {
  const byId = new Map(rows.map((row) => [row.id, row]));
  let closed = false;
  const taken = missing.map((id) => {
    const row = byId.get(id);
    if (row?.status === 'CLOSED') closed = true;
    if (row?.status === 'BOOKED' || row?.status === 'CLOSED') return { id, until: Number.POSITIVE_INFINITY };
    const until = row?.status === 'HELD' && row.held_until ? new Date(row.held_until).getTime() : 0;
    return { id, until: until > now.getTime() ? until : 0 };
  });
  return { taken, closed };
}

export type SeatsRepository = ReturnType<typeof createSeatsRepository>;
