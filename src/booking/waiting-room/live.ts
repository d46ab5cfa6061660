import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { SseHub, SseStream } from '../../platform/http/sse.ts';
import type { PubSub } from '../../platform/pubsub/index.ts';
import type { QueueStatus } from './schemas.ts';
import { queueChannel, type WaitingRoomService } from './service.ts';

/** Coalesces bursts of admissions into one refresh per show and process. */
const REFRESH_DELAY_MS = 200;

/** What a process does for one show it streams positions of. */
interface ShowWatch {
  listeners: Map<string, Set<SseStream>>;
  /** Streams being opened: they read their first status and are not listeners yet. */
  opening: number;
  /** Change messages seen, so an opening stream can tell one came while it read its first status. */
  changes: number;
  subscription: Promise<() => Promise<void>>;
  resync: NodeJS.Timeout;
  timer?: NodeJS.Timeout;
}

/**
 * Live queue positions over SSE. Each process subscribes once per show it streams; on a change
 * message it reads the positions of all its listeners in one query and pushes `position` (or
 * `admitted`, with the token) to each. Pub/sub delivers at most once (a message published while
 * Redis reconnects is gone), so every `resyncMs` the positions are read again anyway: a lost
 * message delays an admission by that much instead of leaving the page waiting for ever, and the
 * estimated wait counts down meanwhile.
 */
export function createQueueLive(deps: {
  waitingRoom: WaitingRoomService;
  pubsub: PubSub;
  sse: SseHub;
  log: FastifyBaseLogger;
  resyncMs: number;
}) {
  const { waitingRoom, pubsub, sse, log } = deps;
  const shows = new Map<string, ShowWatch>();

  function send(stream: SseStream, status: QueueStatus) {
    stream.send(status.status === 'ADMITTED' ? 'admitted' : 'position', status);
  }

  async function refresh(showId: string) {
    const show = shows.get(showId);
    if (!show) return;
    show.timer = undefined;
    if (show.listeners.size === 0) return;
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

  /** The show's watch, subscribing to its changes when this process has none yet. */
  function watch(showId: string): ShowWatch {
    const existing = shows.get(showId);
    if (existing) return existing;
    const show: ShowWatch = {
      listeners: new Map(),
      opening: 0,
      changes: 0,
      subscription: pubsub.subscribe(queueChannel(showId), () => {
        show.changes++;
        scheduleRefresh(showId);
      }),
      resync: setInterval(() => scheduleRefresh(showId), deps.resyncMs).unref(),
    };
    shows.set(showId, show);
    return show;
  }

  /** Stops watching a show nobody in this process streams or is opening. */
  async function release(showId: string, show: ShowWatch) {
    if (show.listeners.size > 0 || show.opening > 0 || shows.get(showId) !== show) return;
    shows.delete(showId);
    clearTimeout(show.timer);
    clearInterval(show.resync);
    const unsubscribe = await show.subscription.catch(() => undefined);
    await unsubscribe?.();
  }

  /**
   * Opens the stream and sends the first status; the user's streams of the show unless the show
   * needs no queue. Subscribed before it reads that status, it refreshes when a change came during
   * the read: otherwise an admission made in between would reach neither that status nor the stream.
   */
  async function listen(
    show: ShowWatch,
    request: FastifyRequest,
    reply: FastifyReply,
    showId: string,
    userId: string,
  ) {
    show.opening++;
    try {
      await show.subscription;
      const seen = show.changes;
      const first = await waitingRoom.status(showId, userId);
      const stream = sse.open(request, reply);
      send(stream, first);
      if (first.status === 'NOT_REQUIRED') {
        stream.close();
        return undefined;
      }
      const streams = show.listeners.get(userId) ?? new Set();
      streams.add(stream);
      show.listeners.set(userId, streams);
      if (show.changes !== seen) scheduleRefresh(showId);
      return { stream, streams };
    } finally {
      show.opening--;
    }
  }

  return {
    async open(request: FastifyRequest, reply: FastifyReply, showId: string, userId: string) {
      const show = watch(showId);
      try {
        const listening = await listen(show, request, reply, showId, userId);
        if (!listening) return;
        const { stream, streams } = listening;
        await stream.closed;
        streams.delete(stream);
        if (streams.size === 0 && show.listeners.get(userId) === streams) show.listeners.delete(userId);
      } finally {
        await release(showId, show);
      }
    },
  };
}

export type QueueLive = ReturnType<typeof createQueueLive>;
