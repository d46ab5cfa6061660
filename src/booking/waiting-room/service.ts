import type { Clock } from '../../platform/clock.ts';
import type { PubSub } from '../../platform/pubsub/index.ts';
import type { CatalogueService } from '../catalogue/service.ts';
import type { BookingSettings } from '../settings.ts';
import { admissionToken } from '../signing.ts';
import type { EntryRow, WaitingRoomRepository } from './repository.ts';
import type { QueueStatus } from './schemas.ts';

export const queueChannel = (showId: string) => `booking.queue.${showId}`;

/**
 * The waiting room of a hot show. At most `queueCapacity` users are admitted at a time, each for
 * `admissionMs`; when admissions run out (or their holders book), the next in line are admitted,
 * so a whole batch of 100 moves in when the previous batch's time is up. Positions are in
 * PostgreSQL; a pub/sub message tells every process to refresh the positions it streams.
 */
export function createWaitingRoomService(deps: {
  repo: WaitingRoomRepository;
  catalogue: CatalogueService;
  pubsub: PubSub;
  clock: Clock;
  settings: BookingSettings;
  secret: string;
}) {
  const { repo, catalogue, pubsub, clock, settings, secret } = deps;

  async function admit(showId: string, now: Date): Promise<number> {
    const admitted = await repo.admit(
      showId,
      settings.queueCapacity,
      new Date(now.getTime() + settings.admissionMs),
      now,
    );
    if (admitted.length > 0) await pubsub.publish(queueChannel(showId), { admitted: admitted.length });
    return admitted.length;
  }

  function view(
    showId: string,
    userId: string,
    entry: EntryRow | undefined,
    context: ViewContext,
  ): QueueStatus {
    const { now, ends, waiting } = context;
    if (
      entry?.status === 'ADMITTED' &&
      entry.admitted_until &&
      entry.admitted_until.getTime() > now.getTime()
    ) {
      return {
        show_id: showId,
        user_id: userId,
        status: 'ADMITTED',
        position: 0,
        estimated_wait: minutes(0),
        estimated_wait_seconds: 0,
        waiting,
        admission_token: admissionToken(secret, showId, userId, entry.admitted_until),
        admitted_until: entry.admitted_until.toISOString(),
      };
    }
    const position = entry?.position ?? waiting + 1;
    const waitMs = estimateWait(position, ends, settings.queueCapacity, settings.admissionMs, now);
    return {
      show_id: showId,
      user_id: userId,
      status: 'WAITING',
      position,
      estimated_wait: minutes(waitMs),
      estimated_wait_seconds: Math.ceil(waitMs / 1000),
      waiting,
      admission_token: null,
      admitted_until: null,
    };
  }

  async function context(showId: string, now: Date): Promise<ViewContext> {
    const [ends, waiting] = await Promise.all([repo.admissionEnds(showId, now), repo.waitingCount(showId)]);
    return { now, ends, waiting };
  }

  return {
    /** Joins (or stays in) the queue and says where the user stands; admits whoever's turn it is. */
    async status(showId: string, userId: string): Promise<QueueStatus> {
      const show = await catalogue.showInfo(showId);
      const now = clock.now();
      if (!show.is_hot) {
        return {
          show_id: showId,
          user_id: userId,
          status: 'NOT_REQUIRED',
          position: 0,
          estimated_wait: minutes(0),
          estimated_wait_seconds: 0,
          waiting: 0,
          admission_token: null,
          admitted_until: null,
        };
      }
      await repo.join(showId, userId, now);
      await admit(showId, now);
      const entry = await repo.entry(showId, userId);
      return view(showId, userId, entry, await context(showId, now));
    },

    /** Statuses of several users at once (the SSE fan-out of one process), without joining them. */
    async statuses(showId: string, userIds: string[]): Promise<Map<string, QueueStatus>> {
      const now = clock.now();
      const [entries, shared] = await Promise.all([repo.entries(showId, userIds), context(showId, now)]);
      const byUser = new Map(entries.map((entry) => [entry.user_id, entry]));
      return new Map(userIds.map((userId) => [userId, view(showId, userId, byUser.get(userId), shared)]));
    },

    /** Scheduler job: admit the next in line wherever admissions have ended. */
    async admitWaiting(now: Date = clock.now()): Promise<number> {
      let total = 0;
      for (const showId of await repo.showsWithWaiting()) total += await admit(showId, now);
      return total;
    },

    /** A booking was confirmed: the user's slot goes to the next in line. */
    async finished(showId: string, userId: string): Promise<void> {
      if (await repo.finish(showId, userId)) await admit(showId, clock.now());
    },
  };
}

interface ViewContext {
  now: Date;
  /** End of each live admission, earliest first. */
  ends: Date[];
  waiting: number;
}

/**
 * Worst case (nobody finishes early): the p-th in line gets the slot that frees k = p - free - 1
 * slots from now; slots free in the order the live admissions end, then every `admissionMs`.
 */
export function estimateWait(
  position: number,
  ends: Date[],
  capacity: number,
  admissionMs: number,
  now: Date,
) {
  const free = capacity - ends.length;
  if (position <= free) return 0;
  const k = position - free - 1;
  const round = Math.floor(k / capacity);
  const slot = k % capacity;
  const slotFrees = slot < ends.length ? ends[slot].getTime() : now.getTime();
  return Math.max(0, slotFrees + round * admissionMs - now.getTime());
}

function minutes(ms: number): string {
  const value = Math.ceil(ms / 60_000);
  return `${value} minute${value === 1 ? '' : 's'}`;
}

export type WaitingRoomService = ReturnType<typeof createWaitingRoomService>;
