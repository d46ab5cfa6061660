import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { SseHub, SseStream } from '../../platform/http/sse.ts';
import type { PubSub } from '../../platform/pubsub/index.ts';
import type { SeatMap } from './schemas.ts';

/** A show's seats changed (held, booked, released, expired): one channel per show. */
export const seatMapChannel = (showId: string) => `booking.seatmap.${showId}`;

/** Coalesces a burst of holds of one show into one seat-map read per process. */
const REFRESH_DELAY_MS = 200;
/**
 * A process says a show changed at most once per this gap, and once more at its end if it changed
 * again meanwhile: listeners wait REFRESH_DELAY_MS anyway, and a hot show's holds would otherwise
 * each send a message (a Redis PUBLISH, delivered to every process that streams the show).
 */
export const PUBLISH_GAP_MS = 100;

/** What a process does for one show it streams the seat map of. */
interface ShowWatch {
  streams: Set<SseStream>;
  unsubscribe: Promise<() => Promise<void>>;
  resync: NodeJS.Timeout;
  timer?: NodeJS.Timeout;
  /** The map last sent to every stream (JSON), so a read that finds nothing new sends nothing. */
  lastSent?: string;
  /**
   * Streams sent their first map (read apart, maybe newer than the last one sent to all) since the
   * last read began: the next read goes to them even when the others need nothing.
   */
  fresh: Set<SseStream>;
}

/**
 * Live seat maps over SSE, as the parking boards and the waiting room do it: every hold, booking
 * and release of a show is published on its pub/sub channel (from whichever process made it), and
 * each process that streams the show reads its seat map once per burst and pushes `seats` (the
 * same body as `GET /shows/{id}/seats`) to every listener. The map never says who holds a seat.
 * Pub/sub delivers at most once (a message published while Redis reconnects is gone), and a hold
 * running out frees its seats before the sweeper says so; so every `resyncMs` the map is read
 * again and sent if it changed.
 */
export function createSeatsLive(deps: {
  pubsub: PubSub;
  sse: SseHub;
  log: FastifyBaseLogger;
  seatMap: (showId: string) => Promise<SeatMap>;
  resyncMs: number;
}) {
  const { pubsub, sse, log } = deps;
  const shows = new Map<string, ShowWatch>();

  async function refresh(showId: string) {
    const show = shows.get(showId);
    if (!show) return;
    show.timer = undefined;
    const fresh = [...show.fresh];
    show.fresh.clear();
    let map: SeatMap;
    try {
      map = await deps.seatMap(showId);
    } catch (error) {
      for (const stream of fresh) show.fresh.add(stream); // the next read sends to them
      throw error;
    }
    const body = JSON.stringify(map);
    const same = body === show.lastSent;
    show.lastSent = body;
    for (const stream of same ? fresh : show.streams) if (show.streams.has(stream)) stream.send('seats', map);
  }

  function scheduleRefresh(showId: string) {
    const show = shows.get(showId);
    if (!show || show.timer) return;
    show.timer = setTimeout(() => {
      refresh(showId).catch((error) => log.warn({ err: error, showId }, 'seat map refresh failed'));
    }, REFRESH_DELAY_MS);
  }

  /** The show's watch, subscribing to its changes when this process has none yet. */
  function watch(showId: string): ShowWatch {
    const existing = shows.get(showId);
    if (existing) return existing;
    const show: ShowWatch = {
      streams: new Set(),
      fresh: new Set(),
      unsubscribe: pubsub.subscribe(seatMapChannel(showId), () => scheduleRefresh(showId)),
      resync: setInterval(() => scheduleRefresh(showId), deps.resyncMs).unref(),
    };
    shows.set(showId, show);
    return show;
  }

  async function release(showId: string, show: ShowWatch) {
    if (show.streams.size > 0 || shows.get(showId) !== show) return;
    shows.delete(showId);
    clearTimeout(show.timer);
    clearInterval(show.resync);
    const unsubscribe = await show.unsubscribe.catch(() => undefined);
    await unsubscribe?.();
  }

  /** Shows this process said changed less than PUBLISH_GAP_MS ago; `again`: changed since. */
  const gaps = new Map<string, { again: boolean }>();

  function changed(showId: string): void {
    const gap = gaps.get(showId);
    if (gap) {
      gap.again = true;
      return;
    }
    const opened = { again: false };
    gaps.set(showId, opened);
    setTimeout(() => {
      gaps.delete(showId);
      if (opened.again) changed(showId);
    }, PUBLISH_GAP_MS).unref();
    pubsub
      .publish(seatMapChannel(showId), { show_id: showId })
      .catch((error) => log.warn({ err: error, showId }, 'seat change not published'));
  }

  return {
    /** Tells every process's listeners of the show that its seats changed (a burst in two messages). */
    changed,

    /** `event: seats` with the seat map at once and after every change of the show's seats. */
    async open(request: FastifyRequest, reply: FastifyReply, showId: string): Promise<void> {
      await deps.seatMap(showId); // an unknown show is a 404, before the stream opens
      const stream = sse.open(request, reply);
      const show = watch(showId);
      show.streams.add(stream);
      try {
        // Read after subscribing: a change is then either in this map or sent after it.
        await show.unsubscribe;
        deps.seatMap(showId).then(
          (map) => {
            stream.send('seats', map);
            if (show.streams.has(stream)) show.fresh.add(stream);
          },
          (error) => log.warn({ err: error, showId }, 'seat map snapshot failed'),
        );
        await stream.closed;
      } finally {
        show.streams.delete(stream);
        show.fresh.delete(stream);
        await release(showId, show);
      }
    },
  };
}

export type SeatsLive = ReturnType<typeof createSeatsLive>;
