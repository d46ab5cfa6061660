import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { SseHub } from '../../platform/http/sse.ts';
import type { PubSub } from '../../platform/pubsub/index.ts';
import type { FeedRepository } from './repository.ts';
import { type FeedAnnouncement, feedChannel, toItem } from './service.ts';

/** Items a stream reads at once; a longer backlog (a resume after a long absence) takes more reads. */
const PAGE = 200;

/**
 * A user's feed live over SSE, in one API process. The feed table is the source: an announcement on
 * the pub/sub (from whichever worker stored the item, feed provider) only wakes the stream, which
 * then reads the items after the last one it sent, oldest first, each with its `seq` as the event
 * id. So the order is the feed's, a resume with Last-Event-ID continues exactly where the client
 * stopped, and a lost announcement (a pub/sub restart, a worker that died between storing and
 * announcing) is made good by the read every `pollMs`.
 *
 * Events: `item` (a feed item, id = its seq), `unread` (`{unread}`, at the start and after new
 * items), `state` (`{id | up_to, mark, unread}`: marks made by any client of the user).
 */
export function createLiveFeed(deps: {
  pubsub: PubSub;
  sse: Pick<SseHub, 'open'>;
  repo: Pick<FeedRepository, 'after' | 'lastSeq' | 'unread'>;
  log: FastifyBaseLogger;
  pollMs: number;
}) {
  const { repo } = deps;
  return {
    async stream(
      userId: string,
      lastEventId: string | undefined,
      request: FastifyRequest,
      reply: FastifyReply,
    ) {
      // The platform's per-address cap answers 429 here, before anything is read.
      const stream = deps.sse.open(request, reply);
      let last = lastEventId;
      let running = false;
      let dirty = false;
      // The page is owed an unread count: at the start, and after new items.
      let owed = true;
      // Marks announced to this stream so far: an unread count read while one arrived may predate
      // it (and the count the mark's own answer and `state` event gave the page), so it is read again.
      let marks = 0;
      const pump = () => {
        dirty = true;
        if (running || last === undefined) return;
        running = true;
        void (async () => {
          while (dirty) {
            dirty = false;
            try {
              const rows = await repo.after(userId, last, PAGE);
              for (const row of rows) {
                stream.send('item', toItem(row), String(row.seq));
                last = String(row.seq);
              }
              if (rows.length === PAGE) dirty = true;
              if (rows.length > 0) owed = true;
              if (owed) {
                const before = marks;
                const unread = await repo.unread(userId);
                if (marks === before) {
                  owed = false;
                  stream.send('unread', { unread });
                } else dirty = true;
              }
            } catch (error) {
              deps.log.warn({ err: error, userId }, 'feed stream not refreshed');
            }
          }
          running = false;
        })();
      };
      const onMessage = (message: unknown) => {
        // This channel carries only what the feed provider and service announce.
        const announced = message as FeedAnnouncement;
        if (announced.kind === 'state') {
          marks++;
          const { kind: _, ...change } = announced;
          stream.send('state', change);
        } else pump();
      };
      let unsubscribe: (() => Promise<void>) | undefined;
      const timer = setInterval(pump, deps.pollMs);
      timer.unref();
      try {
        // Subscribed before the first read: an item stored meanwhile is either read or announced.
        unsubscribe = await deps.pubsub.subscribe(feedChannel(userId), onMessage);
        last ??= await repo.lastSeq(userId);
        pump();
        await stream.closed;
      } catch (error) {
        // The reply is the stream's now: close it, the client reconnects with its Last-Event-ID.
        deps.log.warn({ err: error, userId }, 'feed stream failed');
        stream.close();
      } finally {
        clearInterval(timer);
        await unsubscribe?.().catch(() => {});
      }
    },
  };
}

export type LiveFeed = ReturnType<typeof createLiveFeed>;
