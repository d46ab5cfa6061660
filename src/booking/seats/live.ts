import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { SseHub, SseStream } from '../../platform/http/sse.ts';
import type { PubSub } from '../../platform/pubsub/index.ts';
import type { SeatMap } from './schemas.ts';

/** A show's seats changed (held, booked, released, expired): one channel per show. */
export const seatMapChannel = (showId: string) => `booking.seatmap.${showId}`;

/** Coalesces a burst of holds of one show into one seat-map read per process. */
const REFRESH_DELAY_MS = 200;

/**
 * Live seat maps over SSE, as the parking boards and the waiting room do it: every hold, booking
 * and release of a show is published on its pub/sub channel (from whichever process made it), and
 * each process that streams the show reads its seat map once per burst and pushes `seats` (the
 * same body as `GET /shows/{id}/seats`) to every listener. The map never says who holds a seat.
 */
export function createSeatsLive(deps: {
  pubsub: PubSub;
  sse: SseHub;
  log: FastifyBaseLogger;
  seatMap: (showId: string) => Promise<SeatMap>;
}) {
  const { pubsub, sse, log } = deps;
  const shows = new Map<
    string,
    { streams: Set<SseStream>; unsubscribe: Promise<() => Promise<void>>; timer?: NodeJS.Timeout }
  >();

  async function refresh(showId: string) {
    const show = shows.get(showId);
    if (!show) return;
    show.timer = undefined;
    const map = await deps.seatMap(showId);
    for (const stream of show.streams) stream.send('seats', map);
  }

  function scheduleRefresh(showId: string) {
    const show = shows.get(showId);
    if (!show || show.timer) return;
    show.timer = setTimeout(() => {
      refresh(showId).catch((error) => log.warn({ err: error, showId }, 'seat map refresh failed'));
    }, REFRESH_DELAY_MS);
  }

  return {
    /** Tells every process's listeners of the show that its seats changed. */
    changed(showId: string): void {
      pubsub
        .publish(seatMapChannel(showId), { show_id: showId })
        .catch((error) => log.warn({ err: error, showId }, 'seat change not published'));
    },

    /** `event: seats` with the seat map at once and after every change of the show's seats. */
    async open(request: FastifyRequest, reply: FastifyReply, showId: string): Promise<void> {
      await deps.seatMap(showId); // an unknown show is a 404, before the stream opens
      const stream = sse.open(request, reply);
      let show = shows.get(showId);
      if (!show) {
        show = {
          streams: new Set(),
          unsubscribe: pubsub.subscribe(seatMapChannel(showId), () => scheduleRefresh(showId)),
        };
        shows.set(showId, show);
      }
      show.streams.add(stream);
      // Read after subscribing: a change is then either in this map or sent after it.
      await show.unsubscribe;
      deps.seatMap(showId).then(
        (map) => stream.send('seats', map),
        (error) => log.warn({ err: error, showId }, 'seat map snapshot failed'),
      );
      await stream.closed;
      show.streams.delete(stream);
      if (show.streams.size === 0 && shows.get(showId) === show) {
        shows.delete(showId);
        clearTimeout(show.timer);
        await (await show.unsubscribe)();
      }
    },
  };
}

export type SeatsLive = ReturnType<typeof createSeatsLive>;
