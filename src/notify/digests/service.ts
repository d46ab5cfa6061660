import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../platform/clock.ts';
import { uuidv7 } from '../../platform/ids.ts';
import type { Channel, NotificationAccepted } from '../api.ts';
import { err } from '../errors.ts';
import type { AcceptOptions, AcceptRequest } from '../notifications/accept.ts';
import { localClock } from '../preferences/service.ts';
import type { DigestRepository, DigestType, DigestWindow } from './repository.ts';

/** How long a process's copy of the digest types lives: an edit through another process shows within it. */
const TYPES_TTL_MS = 5000;
/** Windows one run closes at most (the next run takes the rest). */
const FLUSH_BATCH = 500;
/** A closed window whose message is still missing after this long lost its process: sent again (idempotently). */
const STRANDED_AFTER_MS = 60_000;

/** What the admin API says of a type: `every` (a duration such as `10m`) or `daily_at` (`HH:MM`). */
export interface DigestSetting {
  type: string;
  every_seconds: number | null;
  daily_at: string | null;
}

/**
 * When a window opened now closes: `every_seconds` after its first event, or the next `daily_at`
 * in the user's zone (a day ahead when it is that minute now). DST is taken as it is now: on the
 * night of a change the local time may be off by the change.
 */
export function flushAtOf(setting: DigestType, now: Date, timeZone: string): Date {
  if (setting.every_seconds !== null) return new Date(now.getTime() + setting.every_seconds * 1000);
  const [hours, minutes] = (setting.daily_at ?? '00:00').split(':').map(Number);
  let local: { minutes: number; seconds: number };
  try {
    local = localClock(now, timeZone);
  } catch {
    local = localClock(now, 'UTC'); // a stale zone in the preferences: as everywhere, UTC
  }
  const ahead = (hours * 60 + minutes - local.minutes + 1440) % 1440 || 1440;
  return new Date(now.getTime() + ahead * 60_000 - local.seconds * 1000 - now.getUTCMilliseconds());
}

/**
 * Digests (README.md, "Digests"): events of a digestible type for one user, type and channel
 * inside a window are delivered as one message whose template gets them as `items`. The types'
 * windows are read by the accept from this process's copy (refreshed every few seconds, at once
 * after an edit here); the windows and their events live in PostgreSQL (repository.ts).
 */
export function createDigests(deps: { repo: DigestRepository; clock: Clock; log: FastifyBaseLogger }) {
  const { repo, clock, log } = deps;
  let types = new Map<string, DigestType>();
  let loading: Promise<void> | undefined;

  function reload(): Promise<void> {
    loading ??= repo
      .types()
      .then((rows) => {
        types = new Map(rows.map((row) => [row.type, row]));
      })
      .finally(() => {
        loading = undefined;
      });
    return loading;
  }

  // Read again in the background, so no accept waits for it: an edit through another process
  // shows within the interval. A failed read keeps the copy (logged).
  const refresh = setInterval(
    () => reload().catch((error) => log.warn({ err: error }, 'digest types not read')),
    TYPES_TTL_MS,
  );
  refresh.unref();

  return {
    ready: reload(),
    close: () => clearInterval(refresh),

    /** The type's window when it is digestible (this process's copy). */
    async settingOf(type: string): Promise<DigestType | undefined> {
      return types.get(type);
    },

    windowsFor(setting: DigestType, channels: Channel[], now: Date, timeZone: string) {
      const flushAt = flushAtOf(setting, now, timeZone);
      return channels.map((channel) => ({ channel, windowId: uuidv7(), flushAt }));
    },

    store: repo.store,

    async list(): Promise<DigestSetting[]> {
      await reload();
      return [...types.values()].sort((a, b) => a.type.localeCompare(b.type));
    },

    async get(type: string): Promise<DigestSetting> {
      await reload();
      const setting = types.get(type);
      if (!setting) throw err('digest_not_found');
      return setting;
    },

    async set(setting: DigestSetting): Promise<DigestSetting> {
      await repo.setType(setting, clock.now());
      await reload();
      return setting;
    },

    async remove(type: string): Promise<void> {
      if (!(await repo.deleteType(type))) throw err('digest_not_found');
      await reload();
    },

    /**
     * Closes the windows that are due and stores each one's message through the accept, under the
     * client id `digest:{windowId}`: a window whose process stopped after closing it is sent again
     * a minute later, and the accept answers that as a replay of the stored one, so a window makes
     * one message however often this runs, in however many processes.
     */
    async flushDue(
      accept: (request: AcceptRequest, options: AcceptOptions) => Promise<NotificationAccepted>,
    ): Promise<number> {
      const now = clock.now();
      const windows = [
        ...(await repo.closeDue(now, FLUSH_BATCH)),
        ...(await repo.stranded(new Date(now.getTime() - STRANDED_AFTER_MS), FLUSH_BATCH)),
      ];
      for (const window of windows) await send(window);
      return windows.length;

      async function send(window: DigestWindow) {
        const items = await repo.items(window.id);
        if (items.length === 0) {
          await repo.markSent(window.id, null);
          return;
        }
        try {
          const accepted = await accept(
            {
              id: `digest:${window.id}`,
              user_id: window.user_id,
              type: window.type,
              channels: [window.channel],
              data: { items: items.map((item) => item.data), count: items.length },
              priority: window.priority,
            },
            { digest: false },
          );
          await repo.markSent(window.id, accepted.status === 'accepted' ? accepted.id : null);
          if (accepted.status !== 'accepted') {
            log.warn({ digest: window.id, userId: window.user_id }, 'digest over its limit: not sent');
          }
        } catch (error) {
          // A template that cannot take the items, a database error: the window stays closed and
          // is tried again as stranded.
          log.error({ err: error, digest: window.id }, 'digest not stored');
        }
      }
    },
  };
}

export type Digests = ReturnType<typeof createDigests>;
