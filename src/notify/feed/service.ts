import type { Clock } from '../../platform/clock.ts';
import { err } from '../errors.ts';
import type { FeedRow } from '../tables.ts';
import type { FeedFilter, FeedMark, FeedRepository } from './repository.ts';

/** What the live streams of a user's feed hear (feed/live.ts): a new item, or a change of state. */
export type FeedAnnouncement =
  | { kind: 'item'; seq: string }
  | { kind: 'state'; id?: string; up_to?: string; mark: FeedMark; unread: number };

export const feedChannel = (userId: string) => `notify.feed:${userId}`;

export const toItem = (row: FeedRow) => ({
  id: row.notification_id,
  type: row.type,
  title: row.title,
  body: row.body,
  link: row.link,
  created_at: row.created_at.toISOString(),
  seen_at: row.seen_at?.toISOString() ?? null,
  read_at: row.read_at?.toISOString() ?? null,
  archived_at: row.archived_at?.toISOString() ?? null,
  event_id: String(row.seq),
});
export type FeedItemView = ReturnType<typeof toItem>;

/**
 * The cursor is opaque to clients: `f1.` and the last item's seq in base64url. Only the seq is
 * needed (a keyset on the feed's own order), and the prefix lets a later format tell itself apart.
 */
const encodeCursor = (seq: string) => Buffer.from(`f1.${seq}`).toString('base64url');
function decodeCursor(cursor: string): string {
  const text = Buffer.from(cursor, 'base64url').toString();
  const match = /^f1\.([0-9]{1,18})$/.exec(text);
  if (!match) throw err('invalid_cursor');
  return match[1];
}

/** A user's in-app feed: pages, the unread count, marks; each change announced to the live streams. */
export function createFeedService(deps: {
  repo: FeedRepository;
  clock: Clock;
  announce: (userId: string, message: FeedAnnouncement) => Promise<void>;
}) {
  const { repo, clock, announce } = deps;
  const found = async (userId: string, id: string) => {
    const row = await repo.item(userId, id);
    if (!row) throw err('feed_item_not_found');
    return row;
  };
  const marksOf = (patch: { seen?: true; read?: boolean; archived?: boolean }): FeedMark[] => [
    ...(patch.seen ? (['seen'] as const) : []),
    ...(patch.read === undefined ? [] : [patch.read ? ('read' as const) : ('unread' as const)]),
    ...(patch.archived === undefined
      ? []
      : [patch.archived ? ('archived' as const) : ('unarchived' as const)]),
  ];
  return {
    async page(userId: string, query: { limit?: number; cursor?: string; filter?: FeedFilter }) {
      const limit = query.limit ?? 20;
      const before = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
      // Read first: an item stored after it is then either on this page or streamed after it.
      const lastEventId = await repo.lastSeq(userId);
      // The count after the page, not beside it: on two connections the count's snapshot could
      // predate an item the page shows (an unread item counted 0). Counted later, it holds every
      // unread item shown, and at most some newer ones.
      const rows = await repo.page(userId, query.filter ?? 'active', limit + 1, before);
      const unread = await repo.unread(userId);
      const items = rows.slice(0, limit);
      const last = items.at(-1);
      return {
        items: items.map(toItem),
        next_cursor: rows.length > limit && last ? encodeCursor(String(last.seq)) : null,
        unread,
        last_event_id: lastEventId,
      };
    },

    async unread(userId: string) {
      const lastEventId = await repo.lastSeq(userId);
      return { unread: await repo.unread(userId), last_event_id: lastEventId };
    },

    async change(userId: string, id: string, patch: { seen?: true; read?: boolean; archived?: boolean }) {
      await found(userId, id);
      const now = clock.now();
      let row: FeedRow | undefined;
      for (const mark of marksOf(patch)) row = await repo.markOne(userId, id, mark, now);
      const unread = await repo.unread(userId);
      for (const mark of marksOf(patch)) await announce(userId, { kind: 'state', id, mark, unread });
      return { item: toItem(row ?? (await found(userId, id))), unread };
    },

    async markUpTo(userId: string, upTo: string, mark: FeedMark) {
      const item = await found(userId, upTo);
      const updated = await repo.markUpTo(userId, String(item.seq), mark, clock.now());
      const unread = await repo.unread(userId);
      if (updated > 0) await announce(userId, { kind: 'state', up_to: upTo, mark, unread });
      return { updated, unread };
    },
  };
}

export type FeedService = ReturnType<typeof createFeedService>;
