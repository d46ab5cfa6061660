import type { Clock } from '../../platform/clock.ts';
import type { CatalogueService } from '../catalogue/service.ts';
import type { BookingNotifier } from './notifications.ts';
import type { BookingsRepository } from './repository.ts';

const KINDS = [
  { kind: '24h', hours: 24 },
  { kind: '2h', hours: 2 },
] as const;

/**
 * Reminders 24 h and 2 h before the show, sent by a clock-driven job. A reminder is due from its
 * lead time until the show starts (the 24 h one only until the 2 h one is due), for bookings
 * confirmed before that lead time. Each (booking, kind) is sent once: notify drops a repeated id,
 * and the row in booking_reminders keeps later ticks from asking again.
 */
export function createReminders(deps: {
  repo: BookingsRepository;
  catalogue: CatalogueService;
  notifier: BookingNotifier;
  clock: Clock;
}) {
  const { repo, catalogue, notifier, clock } = deps;
  return {
    async sendDue(now: Date = clock.now()): Promise<number> {
      if (!notifier.enabled) return 0;
      let sent = 0;
      for (const { kind, hours } of KINDS) {
        for (const booking of await repo.dueReminders(kind, now, 1000)) {
          await notifier.reminder(booking, await catalogue.showInfo(booking.show_id), hours);
          await repo.reminderSent(booking.id, kind, now);
          sent++;
        }
      }
      return sent;
    },
  };
}
