import { type Cache, createReadThrough } from '../../platform/cache/index.ts';
import type { Clock } from '../../platform/clock.ts';
import { platformError } from '../../platform/errors.ts';
import { uuidv7 } from '../../platform/ids.ts';
import type { CatalogueService } from '../catalogue/service.ts';
import type { Layout, ShowInfo } from '../catalogue/shapes.ts';
import { err } from '../errors.ts';
import { fromMinor, seatPrice } from '../money.ts';
import type { BookingSettings } from '../settings.ts';
import { createAdmissionCheck } from '../signing.ts';
import type { ClaimResult, HoldRow, LiveHolds, NewHold, SeatsRepository } from './repository.ts';
import type { Hold, HoldRequest, SeatMap } from './schemas.ts';
import type { TakenFilter, TakenSeat } from './taken-filter.ts';

/** Seat availability lives 30 s in the cache (spec) and is dropped on every hold, booking and release. */
export const SEATS_TTL_MS = 30_000;

/** Seat states as cached: which seats are not plainly AVAILABLE; "held until" is judged at read time. */
interface CachedStates {
  booked: string[];
  held: [string, number][];
}

export function createSeatsService(deps: {
  repo: SeatsRepository;
  catalogue: CatalogueService;
  cache: Cache;
  clock: Clock;
  settings: BookingSettings;
  secret: string;
  filter: TakenFilter;
  /** Told of every change of a show's seats (live seat maps, `live.ts`). */
  onChange?: (showId: string) => void;
  /** The arbiter's claim; `hold-batch.ts` groups concurrent claims into one commit. Default: one at a time. */
  claim?: (hold: NewHold, now: Date) => Promise<ClaimResult>;
}) {
  const { repo, catalogue, clock, settings, filter } = deps;
  const claimSeats = deps.claim ?? ((hold: NewHold, now: Date) => repo.claimSeats(hold, now));
  const cache = createReadThrough(deps.cache);
  const seatsKey = (showId: string) => `booking:seats:${showId}`;
  const admissionValid = createAdmissionCheck(deps.secret);

  /** Seats were released or booked: the cached availability and the taken-filter go. */
  async function seatsChanged(showId: string): Promise<void> {
    await cache.invalidate(seatsKey(showId));
    await filter.released(showId);
    deps.onChange?.(showId);
  }

  /**
   * The show's seats that are taken now, with when each one frees (Infinity: booked). Closed seats
   * are left to the arbiter, whose answer to them is `show_cancelled`.
   */
  async function takenSeats(showId: string): Promise<TakenSeat[]> {
    const now = clock.now().getTime();
    const taken: TakenSeat[] = [];
    for (const row of await repo.seatStates(showId)) {
      if (row.status === 'BOOKED') taken.push({ id: row.seat_id, until: Number.POSITIVE_INFINITY });
      else if (row.status === 'HELD' && row.held_until && row.held_until.getTime() > now)
        taken.push({ id: row.seat_id, until: row.held_until.getTime() });
    }
    return taken;
  }

  function toHold(row: HoldRow, now: Date): Hold {
    const expired = row.status === 'HELD' && row.expires_at.getTime() <= now.getTime();
    return {
      hold_id: row.id,
      show_id: row.show_id,
      user_id: row.user_id,
      seats: row.seats,
      status: expired ? 'EXPIRED' : row.status,
      expires_at: row.expires_at.toISOString(),
      total_amount: fromMinor(row.total_minor),
      currency: settings.currency,
    };
  }

  /** 409 `hold_limit`, naming the holds that count against the cap the user reached. */
  function overLimit(showId: string, live: LiveHolds) {
    const perShow = live.onShow >= settings.holdsPerUserShow;
    const max = perShow ? settings.holdsPerUserShow : settings.holdsPerUser;
    const holds = perShow ? live.holds.filter((held) => held.show_id === showId) : live.holds;
    const ids = holds.map((held) => held.id);
    return err('hold_limit', {
      detail: perShow
        ? `You already hold seats of this show (at most ${max} hold${max > 1 ? 's' : ''} per show): book or release ${ids.join(', ')} first`
        : `You already have ${max} live hold${max > 1 ? 's' : ''}: book or release one first`,
      extras: { limit: perShow ? 'per_show' : 'per_user', max, hold_ids: ids },
    });
  }

  /** The hold, if `owner` (a user's own request; undefined: staff) may see it; else 404 as if it did not exist. */
  async function ownHold(id: string, owner: string | undefined): Promise<HoldRow> {
    const row = await repo.findHold(id);
    if (!row || (owner !== undefined && row.user_id !== owner)) throw err('hold_not_found');
    return row;
  }

  /** A show open for holds: scheduled, not started. */
  function assertOpen(show: ShowInfo, now: Date) {
    if (show.status === 'CANCELLED') throw err('show_cancelled');
    if (new Date(show.show_time).getTime() <= now.getTime()) throw err('show_started');
  }

  /** A hot show's holds need the waiting room's admission token, for this show and user, in time. */
  function assertAdmitted(showId: string, userId: string, token: string | undefined, now: Date) {
    if (token && admissionValid(token, showId, userId, now)) return;
    throw err('admission_required', {
      detail: token
        ? 'The admission token is not valid for this show and user, or its time is up; join the queue again'
        : 'This show is in high demand: join the waiting room and hold with the admission token it gives you',
      extras: { queue_url: `/api/v1/shows/${showId}/queue` },
    });
  }

  /** The screen's seats of these labels (upper case), each named once; 400 or 422 otherwise. */
  function seatsOf(layout: Layout, labels: string[]) {
    if (new Set(labels).size !== labels.length) {
      throw platformError('validation_failed', {
        detail: 'body.seat_ids must not name a seat twice',
        extras: { errors: [{ field: 'body.seat_ids', message: 'must not name a seat twice' }] },
      });
    }
    const unknown = labels.filter((label) => !layout.byLabel.has(label));
    if (unknown.length > 0) {
      throw err('unknown_seats', {
        detail: `No seat ${unknown.join(', ')} on this screen`,
        extras: { seats: unknown },
      });
    }
    const seats = labels.map((label) => layout.byLabel.get(label)!);
    // A companion seat is there for the person with a wheelchair user: it is sold with a
    // wheelchair space, one companion seat per space in the same hold.
    const companions = seats.filter((seat) => seat.type === 'COMPANION');
    const spaces = seats.filter((seat) => seat.type === 'WHEELCHAIR').length;
    if (companions.length > spaces) {
      throw err('companion_needs_wheelchair', {
        detail: `Companion seats are held together with a wheelchair space (one per space); add a wheelchair space or choose other seats than ${companions.map((seat) => seat.label).join(', ')}`,
        extras: { seats: companions.map((seat) => seat.label) },
      });
    }
    return seats;
  }

  return {
    seatsChanged,

    /**
     * The seats of a show and which are free. Once the show has ended nothing is on sale: every
     * seat answers BOOKED without reading the inventory, which the retention job removes a
     * while after the show (README, "Retention").
     */
    async seatMap(showId: string): Promise<SeatMap> {
      const show = await catalogue.showInfo(showId);
      const layout = await catalogue.layout(show.screen_id);
      const over = new Date(show.end_time).getTime() <= clock.now().getTime();
      const empty: CachedStates = { booked: [], held: [] };
      const states = over
        ? empty
        : (await cache.get<CachedStates>(seatsKey(showId), async () => {
            const rows = await repo.seatStates(showId);
            const value: CachedStates = { booked: [], held: [] };
            for (const row of rows) {
              if (row.status === 'HELD') value.held.push([row.seat_id, row.held_until?.getTime() ?? 0]);
              else value.booked.push(row.seat_id);
            }
            return { value, ttlMs: SEATS_TTL_MS };
          }))!;
      const now = clock.now().getTime();
      const taken = new Set(states.booked);
      for (const [seatId, until] of states.held) if (until > now) taken.add(seatId);
      const closed = show.status === 'CANCELLED' || over;
      const seats = layout.seats.map((seat) => ({
        seat_id: seat.label,
        status: closed || taken.has(seat.id) ? ('BOOKED' as const) : ('AVAILABLE' as const),
        price: fromMinor(seatPrice(seat.base_price_minor, show.multiplier_hundredths)),
        row: seat.row,
        number: seat.number,
        ...(seat.column === undefined ? {} : { column: seat.column }),
        seat_type: seat.type,
      }));
      return {
        show_id: showId,
        seats,
        available: seats.filter((seat) => seat.status === 'AVAILABLE').length,
        total: seats.length,
        currency: settings.currency,
      };
    },

    /**
     * All or nothing: every requested seat is held for `holdMs` for `userId`, or none is and 409
     * names the taken ones; past the user's caps, 409 `hold_limit` names their holds.
     */
    async hold(showId: string, userId: string, request: HoldRequest): Promise<Hold> {
      const now = clock.now();
      const show = await catalogue.showInfo(showId);
      assertOpen(show, now);
      if (show.is_hot) assertAdmitted(showId, userId, request.admission_token, now);
      const labels = request.seat_ids.map((label) => label.toUpperCase());
      const layout = await catalogue.layout(show.screen_id);
      const seats = seatsOf(layout, labels);
      const seatIds = seats.map((seat) => seat.id);
      const refuse = (takenIds: string[]) => {
        const taken = takenIds.map((id) => layout.byId.get(id)?.label ?? id);
        return err('seats_unavailable', {
          detail: `Seat${taken.length > 1 ? 's' : ''} ${taken.join(', ')} ${taken.length > 1 ? 'are' : 'is'} not available`,
          extras: { seats: taken },
        });
      };
      // Seats known to be taken are refused before anything else is done (a sold-out show's clicks).
      const known = filter.taken(showId, seatIds);
      if (known.length > 0) throw refuse(known);
      const hold = {
        id: uuidv7(),
        show_id: showId,
        user_id: userId,
        seat_ids: seatIds,
        seats: labels,
        total_minor: seats.reduce(
          (sum, seat) => sum + seatPrice(seat.base_price_minor, show.multiplier_hundredths),
          0,
        ),
        expires_at: new Date(now.getTime() + settings.holdMs),
        created_at: now,
      };
      const stamp = filter.stamp(showId);
      const claim = await claimSeats(hold, now);
      if (claim.limit) throw overLimit(showId, claim.limit);
      filter.remember(
        showId,
        claim.taken.length > 0
          ? claim.taken
          : seatIds.map((id) => ({ id, until: hold.expires_at.getTime() })),
        stamp,
      );
      if (claim.taken.length > 0) {
        // A refusal means the show is selling out: learn all its taken seats (at most every 10 s).
        void filter.refresh(showId, () => takenSeats(showId));
        // The inventory is closed once a show is cancelled (this process may not know yet).
        if (claim.closed) throw err('show_cancelled');
        throw refuse(claim.taken.map((seat) => seat.id));
      }
      await cache.invalidate(seatsKey(showId));
      deps.onChange?.(showId);
      return toHold({ ...hold, status: 'HELD', released_at: null, release_reason: null }, now);
    },

    /** A hold; `owner`: only if it is this user's (staff see every hold). */
    /** The user's live holds (of one show when given): what a reloaded page or My bookings resumes. */
    async liveHolds(userId: string, showId?: string): Promise<Hold[]> {
      const now = clock.now();
      return (await repo.liveHolds(userId, showId, now)).map((row) => toHold(row, now));
    },

    async getHold(id: string, owner?: string): Promise<Hold> {
      return toHold(await ownHold(id, owner), clock.now());
    },

    /** The hold, if `owner` holds it (404 `hold_not_found` otherwise). */
    findHold: ownHold,

    /** The user (or staff) lets the seats go before paying. */
    async releaseHold(id: string, owner?: string, reason = 'released by user'): Promise<Hold> {
      await ownHold(id, owner);
      const released = await repo.releaseHold(id, reason, clock.now());
      const row = await repo.findHold(id);
      if (!row) throw err('hold_not_found');
      if (released) await seatsChanged(row.show_id);
      else if (row.status === 'BOOKED') throw err('hold_already_booked', { extras: { hold_id: id } });
      return toHold(row, clock.now());
    },

    async extendHold(id: string, until: Date): Promise<void> {
      await repo.extendHold(id, until);
    },

    /** Sweeper: releases expired holds so their seats show as available again. */
    async releaseExpiredHolds(now: Date = clock.now()): Promise<number> {
      let total = 0;
      while (true) {
        const { holds, showIds } = await repo.expireHolds(now);
        for (const showId of showIds) await seatsChanged(showId);
        total += holds;
        if (holds < 1000) return total;
      }
    },

    async integrity(showId: string) {
      await catalogue.showInfo(showId);
      // Without its inventory every booked hold would look incomplete: say so instead.
      const removedAt = await repo.inventoryRemovedAt(showId);
      if (removedAt) {
        throw err('show_inventory_removed', {
          detail: `The seat inventory of this show was removed at ${removedAt.toISOString()}, a retention window after the show ended; its bookings remain`,
          extras: { inventory_removed_at: removedAt.toISOString() },
        });
      }
      const found = await repo.integrity(showId, clock.now());
      return {
        show_id: showId,
        double_booked_seats: found.double_booked,
        incomplete_holds: found.incomplete,
        held_seats: found.held,
        booked_seats: found.booked,
        live_holds: found.live_holds,
      };
    },
  };
}

export type SeatsService = ReturnType<typeof createSeatsService>;
