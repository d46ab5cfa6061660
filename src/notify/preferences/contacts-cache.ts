import { LRUCache } from 'lru-cache';
import type { PubSub } from '../../platform/pubsub/index.ts';
import type { PushSubscription } from '../ports.ts';
import type { PreferencesRepository } from './repository.ts';
import type { Preferences } from './service.ts';

/** What accepting needs to know of a user: preferences (the defaults when none are stored) and push subscriptions. */
export interface Contacts {
  prefs: Preferences;
  /** Absent when the read that filled the entry did not ask for them (no push requested). */
  subscriptions?: PushSubscription[];
  /** The stored row's write count (tables.ts `PreferencesRow.version`); absent with no row. */
  version?: number;
}

const CHANNEL = 'notify.contacts-changed';

/**
 * This process's copy of users' preferences and push subscriptions, so an accept needs no
 * database read before its insert (a large part of PostgreSQL's work per accept, and a round trip).
 *
 * Kept honest three ways: every write of either goes through `invalidating(repo)`, which drops
 * the entry here at once and in the other processes by pub/sub; a read that overlapped a drop is
 * not kept (`generation`); and an entry lives at most `ttlMs`, for a drop lost on the way (say,
 * while Redis restarts). What a stale entry can still do is make the 202 say `queued` where a
 * fresh read would say `skipped`: the worker reads the preferences again and checks the switch
 * and the address before it sends (delivery.ts), so an opt-out is never sent to.
 */
export function createContactsCache(deps: {
  pubsub: PubSub;
  log: { warn(details: object, message: string): void };
  ttlMs?: number;
  maxEntries?: number;
  /** Milliseconds the TTL is measured in (default `performance.now`); a given clock is read on every lookup. */
  now?: () => number;
}) {
  const entries = new LRUCache<string, Contacts>({
    max: deps.maxEntries ?? 100_000,
    ttl: deps.ttlMs ?? 10_000,
    ...(deps.now && { perf: { now: deps.now }, ttlResolution: 0 }),
  });
  let generation = 0;
  const drop = (userId: string) => {
    generation++;
    entries.delete(userId);
  };
  const subscribed = deps.pubsub.subscribe(CHANNEL, (message) => {
    const userId = (message as { user_id?: unknown }).user_id;
    if (typeof userId === 'string') drop(userId);
  });

  return {
    /** Resolves once drops from other processes arrive. */
    ready: subscribed.then(() => {}),
    /** The entry, when it holds what is asked for. */
    get(userId: string, withSubscriptions: boolean): Contacts | undefined {
      const entry = entries.get(userId);
      return entry && (!withSubscriptions || entry.subscriptions) ? entry : undefined;
    },
    /** Take before reading the database; `remember` keeps the read only if nothing was dropped since. */
    generation: () => generation,
    remember(userId: string, readAt: number, contacts: Contacts): void {
      if (readAt === generation) entries.set(userId, contacts);
    },
    /** After a committed write: here at once, elsewhere as soon as the message arrives. */
    async changed(userId: string): Promise<void> {
      drop(userId);
      // The write is committed: a lost message leaves other processes at most `ttlMs` behind.
      await deps.pubsub.publish(CHANNEL, { user_id: userId }).catch((error) => {
        deps.log.warn(
          { err: error, userId },
          'contacts change not broadcast; other processes catch up by TTL',
        );
      });
    },
    async close() {
      entries.clear();
      // Nothing to undo when the subscription never came about (start-up failed on it).
      await subscribed.then((unsubscribe) => unsubscribe()).catch(() => {});
    },
  };
}

export type ContactsCache = ReturnType<typeof createContactsCache>;

/** The repository whose writes of preferences and subscriptions tell the cache. */
export function invalidating(repo: PreferencesRepository, cache: ContactsCache): PreferencesRepository {
  return {
    ...repo,
    async savePreferences(p, now) {
      await repo.savePreferences(p, now);
      await cache.changed(p.user_id);
    },
    async unsubscribeEmailMarketing(userId, now) {
      await repo.unsubscribeEmailMarketing(userId, now);
      await cache.changed(userId);
    },
    async setContact(userId, contact, now) {
      await repo.setContact(userId, contact, now);
      await cache.changed(userId);
    },
    async addSubscription(userId, subscription, now, max) {
      const added = await repo.addSubscription(userId, subscription, now, max);
      if (added) await cache.changed(userId);
      return added;
    },
    async deleteSubscription(userId, endpoint) {
      const deleted = await repo.deleteSubscription(userId, endpoint);
      await cache.changed(userId);
      return deleted;
    },
  };
}
