import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { SseHub, SseStream } from '../../platform/http/sse.ts';
import type { PubSub } from '../../platform/pubsub/index.ts';
import type { QueueStatus } from './schemas.ts';
import { queueChannel, type WaitingRoomService } from './service.ts';

/** Coalesces bursts of admissions into one refresh per show and process. */
const REFRESH_DELAY_MS = 200;

/**
 * Live queue positions over SSE. Each process subscribes once per show it streams; on a change
 * message it reads the positions of all its listeners in one query and pushes `position` (or
 * `admitted`, with the token) to each.
 */
export function createQueueLive(deps: {
  waitingRoom: WaitingRoomService;
  pubsub: PubSub;
  sse: SseHub;
  log: FastifyBaseLogger;
}) {
  const { waitingRoom, pubsub, sse, log } = deps;
  const shows = new Map<
    string,
    {
      listeners: Map<string, Set<SseStream>>;
      unsubscribe: Promise<() => Promise<void>>;
      timer?: NodeJS.Timeout;
    }
  >();

  function send(stream: SseStream, status: QueueStatus) {
    stream.send(status.status === 'ADMITTED' ? 'admitted' : 'position', status);
  }

  async function refresh(showId: string) {
    const show = shows.get(showId);
    if (!show) return;
    show.timer = undefined;
    const statuses = await waitingRoom.statuses(showId, [...show.listeners.keys()]);
    for (const [userId, streams] of show.listeners) {
      const status = statuses.get(userId);
      if (status) for (const stream of streams) send(stream, status);
    }
  }

  function scheduleRefresh(showId: string) {
    const show = shows.get(showId);
    if (!show || show.timer) return;
    show.timer = setTimeout(() => {
      refresh(showId).catch((error) => log.warn({ err: error, showId }, 'queue refresh failed'));
    }, REFRESH_DELAY_MS);
  }

  return {
    async open(request: FastifyRequest, reply: FastifyReply, showId: string, userId: string) {
      const first = await waitingRoom.status(showId, userId);
      const stream = sse.open(request, reply);
      send(stream, first);
      if (first.status === 'NOT_REQUIRED') return stream.close();
      let show = shows.get(showId);
      if (!show) {
        show = {
          listeners: new Map(),
          unsubscribe: pubsub.subscribe(queueChannel(showId), () => scheduleRefresh(showId)),
        };
        shows.set(showId, show);
      }
      const streams = show.listeners.get(userId) ?? new Set();
      streams.add(stream);
      show.listeners.set(userId, streams);
      await stream.closed;
      streams.delete(stream);
      if (streams.size === 0) show.listeners.delete(userId);
      if (show.listeners.size === 0 && shows.get(showId) === show) {
        shows.delete(showId);
        clearTimeout(show.timer);
        await (await show.unsubscribe)();
      }
    },
  };
}

export type QueueLive = ReturnType<typeof createQueueLive>;
