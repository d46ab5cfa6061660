import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { SseHub, SseStream } from '../../platform/http/sse.ts';
import type { PubSub } from '../../platform/pubsub/index.ts';
import { SPOTS_CHANNEL, TICKETS_CHANNEL, type TicketEvent } from './events.ts';
import type { BoardsView } from './views.ts';

/**
 * Live display boards and panel events over SSE, in one API process. Every process subscribes to
 * the pub/sub channels, so a park or unpark handled anywhere reaches every board. Refreshes are
 * coalesced: while one board query runs, further changes wait for it and cause one more query,
 * so a burst of entries costs a few queries, and the last snapshot sent is always current.
 * Pub/sub delivers at most once (a message published while Redis reconnects is gone), so every
 * `resyncMs` the boards and the streamed tickets are read again and sent if they changed: a quiet
 * lot's boards do not stay wrong until the next car, and a panel whose `gate_open` was lost sees
 * the ticket `PAID` (and opens the gate) instead of waiting for ever.
 */
export function createLiveBoards(deps: {
  pubsub: PubSub;
  sse: SseHub;
  log: FastifyBaseLogger;
  boards: () => Promise<BoardsView>;
  ticketSnapshot: (ticketId: string) => Promise<unknown>;
  resyncMs: number;
}) {
  const boardStreams = new Set<SseStream>();
  const ticketStreams = new Map<string, Set<SseStream>>();
  const unsubscribers: (() => Promise<void>)[] = [];
  let running = false;
  let dirty = false;
  /** A change or a new stream since the last read: the next read is sent even if it looks the same. */
  let changed = false;
  /** The snapshot last sent (JSON), so a re-read that finds nothing new sends nothing. */
  let lastSent: string | undefined;
  let resync: NodeJS.Timeout | undefined;
  /** The ticket snapshot (JSON) each ticket stream was last sent. */
  const ticketSent = new WeakMap<SseStream, string>();
  let ticketsResyncing = false;

  function refresh(change = true): void {
    if (boardStreams.size === 0) return;
    dirty = true;
    changed ||= change;
    if (running) return;
    running = true;
    void (async () => {
      while (dirty) {
        dirty = false;
        const send = changed;
        changed = false;
        try {
          const snapshot = await deps.boards();
          const body = JSON.stringify(snapshot);
          if (!send && body === lastSent) continue;
          lastSent = body;
          for (const stream of boardStreams) stream.send('boards', snapshot);
        } catch (error) {
          changed ||= send;
          deps.log.warn({ err: error }, 'display boards not refreshed');
        }
      }
      running = false;
    })();
  }

  function onTicketEvent(message: unknown): void {
    // This channel carries only what events.ts publishes on it.
    const event = message as TicketEvent;
    for (const stream of ticketStreams.get(event.ticketId) ?? []) stream.send(event.type, event);
  }

  /** Reads each streamed ticket again; a stream gets it if it differs from what the stream last got. */
  async function resyncTickets() {
    if (ticketsResyncing) return;
    ticketsResyncing = true;
    try {
      for (const [ticketId, streams] of ticketStreams) {
        const snapshot = await deps.ticketSnapshot(ticketId).catch((error) => {
          deps.log.warn({ err: error, ticketId }, 'ticket not re-read');
          return undefined;
        });
        if (snapshot === undefined) continue;
        const body = JSON.stringify(snapshot);
        for (const stream of streams) {
          if (ticketSent.get(stream) === body) continue;
          ticketSent.set(stream, body);
          stream.send('ticket', snapshot);
        }
      }
    } finally {
      ticketsResyncing = false;
    }
  }

  return {
    async start() {
      unsubscribers.push(await deps.pubsub.subscribe(SPOTS_CHANNEL, () => refresh()));
      unsubscribers.push(await deps.pubsub.subscribe(TICKETS_CHANNEL, onTicketEvent));
      resync = setInterval(() => {
        refresh(false);
        resyncTickets().catch((error) => deps.log.warn({ err: error }, 'tickets not re-read'));
      }, deps.resyncMs).unref();
    },

    /** `event: boards` with the full boards snapshot, at once and after every change. */
    async streamBoards(request: FastifyRequest, reply: FastifyReply): Promise<void> {
      const stream = deps.sse.open(request, reply);
      boardStreams.add(stream);
      // Through the refresh loop, so no older snapshot can overtake a newer one on this stream.
      refresh();
      await stream.closed;
      boardStreams.delete(stream);
    },

    /** `event: ticket` with the ticket at once, then `gate_open`, `payment_failed`, `payment_refunded`. */
    async streamTicket(ticketId: string, request: FastifyRequest, reply: FastifyReply): Promise<void> {
      await deps.ticketSnapshot(ticketId); // an unknown ticket is a 404, before the stream opens
      const stream = deps.sse.open(request, reply);
      const streams = ticketStreams.get(ticketId) ?? new Set();
      ticketStreams.set(ticketId, streams);
      streams.add(stream);
      // Read after subscribing: an event is then either in this snapshot or sent after it.
      deps.ticketSnapshot(ticketId).then(
        (snapshot) => {
          ticketSent.set(stream, JSON.stringify(snapshot));
          stream.send('ticket', snapshot);
        },
        (error) => deps.log.warn({ err: error, ticketId }, 'ticket snapshot failed'),
      );
      await stream.closed;
      streams.delete(stream);
      if (streams.size === 0) ticketStreams.delete(ticketId);
    },

    async close() {
      clearInterval(resync);
      for (const unsubscribe of unsubscribers.splice(0)) await unsubscribe().catch(() => {});
    },
  };
}

export type LiveBoards = ReturnType<typeof createLiveBoards>;
