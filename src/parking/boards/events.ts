import type { FastifyBaseLogger } from 'fastify';
import type { PubSub } from '../../platform/pubsub/index.ts';

/**
 * What parking announces on the pub/sub port, so every API process (and its SSE clients) hears
 * about a park or unpark made by any other process.
 */
export const SPOTS_CHANNEL = 'parking.spots';
export const TICKETS_CHANNEL = 'parking.tickets';

export interface SpotsChanged {
  type: 'spots_changed';
  at: string;
}

export type TicketEvent =
  | { type: 'gate_open'; ticketId: string; panelId: string | null; paymentId: string; at: string }
  | { type: 'payment_failed'; ticketId: string; paymentId: string; reason: string | null; at: string }
  | { type: 'payment_refunded'; ticketId: string; paymentId: string; at: string };

export function createEvents(pubsub: PubSub, log: FastifyBaseLogger) {
  // After a commit the change has happened; a pub/sub hiccup must not turn it into an error for the
  // caller. Boards catch up on the next change (and on reconnect), which the log makes visible.
  const publish = (channel: string, message: unknown) =>
    pubsub
      .publish(channel, message)
      .catch((error) => log.warn({ err: error, channel }, 'parking event not published'));
  return {
    spotsChanged: (at: Date) =>
      publish(SPOTS_CHANNEL, { type: 'spots_changed', at: at.toISOString() } satisfies SpotsChanged),
    ticket: (event: TicketEvent) => publish(TICKETS_CHANNEL, event),
  };
}

export type ParkingEvents = ReturnType<typeof createEvents>;
