import type { NotifyApi } from '../notify/api.ts';
import { retentionJob } from '../platform/jobs/retention.ts';
import type { PlatformDeps, ServiceModule } from '../platform/module.ts';
import { createBookingNotifier } from './bookings/notifications.ts';
import type { BookingPayments } from './bookings/payments.ts';
import { createReminders } from './bookings/reminders.ts';
import { createBookingsRepository } from './bookings/repository.ts';
import { bookingsRoutes } from './bookings/routes.ts';
import { createBookingsService } from './bookings/service.ts';
import { createSettlement } from './bookings/settlement.ts';
import { createTickets } from './bookings/tickets.ts';
import { loadDemoCatalogue } from './catalogue/demo.ts';
import { createCatalogueRepository } from './catalogue/repository.ts';
import { catalogueRoutes } from './catalogue/routes.ts';
import { createCatalogueService } from './catalogue/service.ts';
import { createDoorRepository } from './door/repository.ts';
import { doorRoutes } from './door/routes.ts';
import { createDoorService } from './door/service.ts';
import { countingHolds, createBookingMetrics } from './metrics.ts';
import { bookingMigrations } from './migrations/index.ts';
import { doorPage } from './pages/door.ts';
import { pageRoutes } from './pages/routes.ts';
import { bookingRetention } from './retention.ts';
import { createSearchRepository } from './search/repository.ts';
import { searchRoutes } from './search/routes.ts';
import { createSearchService } from './search/service.ts';
import { createHoldBatcher } from './seats/hold-batch.ts';
import { createSeatsLive, type SeatsLive } from './seats/live.ts';
import { createSeatsRepository, type SeatsRepository } from './seats/repository.ts';
import { seatsRoutes } from './seats/routes.ts';
import { createSeatsService } from './seats/service.ts';
import { createTakenFilter } from './seats/taken-filter.ts';
import { loadBookingSettings } from './settings.ts';
import { createQueueLive } from './waiting-room/live.ts';
import { createWaitingRoomRepository, type WaitingRoomRepository } from './waiting-room/repository.ts';
import { waitingRoomRoutes } from './waiting-room/routes.ts';
import { createWaitingRoomService } from './waiting-room/service.ts';

/** Test-only seams of the module (the race test's negative control); production passes none. */
export interface BookingTestSeams {
  /** Wraps the seats repository, e.g. with a claim that skips the arbiter (test/support/booking.ts). */
  seatsRepository?: (repo: SeatsRepository, deps: PlatformDeps) => SeatsRepository;
  /** Wraps the waiting-room repository, e.g. to admit someone while a stream reads its first status. */
  waitingRoomRepository?: (repo: WaitingRoomRepository) => WaitingRoomRepository;
}

/** Seat booking: catalogue, search, seat holds, bookings paid through `payments`, waiting room (README.md). */
export const bookingModule = {
  name: 'booking',
  needs: ['payments', 'notify'],
  migrations: bookingMigrations,
  async create(deps: PlatformDeps, seams: BookingTestSeams = {}) {
    const settings = loadBookingSettings(deps.config.env);
    const { clock, cache, pubsub, config } = deps;
    const log = deps.log.child({ module: 'booking' });

    const catalogueRepo = createCatalogueRepository(deps.database.db);
    const catalogue = createCatalogueService({ repo: catalogueRepo, cache, clock });
    if (settings.demoCatalogue && (await loadDemoCatalogue(catalogueRepo, clock))) {
      log.info('loaded the demo catalogue (BOOKING_DEMO=false skips it)');
    }
    const search = createSearchService({
      repo: createSearchRepository(deps.database.db),
      catalogue,
      cache,
      clock,
    });
    const safeSeatsRepo = createSeatsRepository(deps.database.db, {
      limits: { perShow: settings.holdsPerUserShow, perUser: settings.holdsPerUser },
      prepare: deps.database.kind === 'postgres',
    });
    const seatsRepo = seams.seatsRepository?.(safeSeatsRepo, deps) ?? safeSeatsRepo;
    const safeWaitingRoomRepo = createWaitingRoomRepository(deps.database.db);
    const waitingRoomRepo = seams.waitingRoomRepository?.(safeWaitingRoomRepo) ?? safeWaitingRoomRepo;
    const metrics = createBookingMetrics(deps.metrics.registry, () => waitingRoomRepo.waitingTotals());
    let seatsLive: SeatsLive | undefined;
    const seatsService = createSeatsService({
      onChange: (showId) => seatsLive?.changed(showId),
      repo: seatsRepo,
      claim: createHoldBatcher(seatsRepo).claim,
      catalogue,
      cache,
      clock,
      settings,
      secret: config.secret,
      filter: createTakenFilter({ clock, pubsub }),
    });
    const seats = countingHolds(seatsService, metrics);
    seatsLive = createSeatsLive({
      pubsub,
      sse: deps.sse,
      log,
      seatMap: (id) => seatsService.seatMap(id),
      resyncMs: settings.liveResyncMs,
    });
    const waitingRoom = createWaitingRoomService({
      repo: waitingRoomRepo,
      catalogue,
      pubsub,
      clock,
      settings,
      secret: config.secret,
    });
    const live = createQueueLive({
      waitingRoom,
      pubsub,
      sse: deps.sse,
      log,
      resyncMs: settings.liveResyncMs,
    });
    // The platform keeps modules' public APIs untyped (`unknown`): these casts name what the
    // payments and notify modules publish (`needs` has them created first, when enabled).
    const payments = () => deps.modules.get('payments') as BookingPayments | undefined;
    const notifier = createBookingNotifier({
      notify: deps.modules.get('notify') as NotifyApi | undefined,
      log,
      baseUrl: config.baseUrl,
    });
    const tickets = createTickets(config.secret);
    const bookingsRepo = createBookingsRepository(deps.database.db);
    const settlement = createSettlement({
      repo: bookingsRepo,
      seats,
      catalogue,
      waitingRoom,
      payments,
      notifier,
      tickets,
      clock,
      log,
      metrics,
      holdMs: settings.holdMs,
    });
    const bookings = createBookingsService({
      repo: bookingsRepo,
      seats,
      catalogue,
      payments,
      settlement,
      notifier,
      tickets,
      clock,
      settings,
      secret: config.secret,
      log,
      metrics,
    });
    const door = createDoorService({
      repo: createDoorRepository(deps.database.db),
      bookings: bookingsRepo,
      catalogue,
      clock,
      secret: config.secret,
    });
    const reminders = createReminders({ repo: bookingsRepo, catalogue, notifier, clock });
    payments()?.onPaymentEvent('booking', (event) => settlement.settle(event.payment));
    if (!payments()) log.warn('the payments module is not available: bookings answer 503');

    return {
      routes: async (app) => {
        const limits = { settings, limiter: deps.limiter };
        await app.register(catalogueRoutes, { catalogue });
        await app.register(searchRoutes, { search });
        await app.register(seatsRoutes, { seats, live: seatsLive, ...limits });
        await app.register(waitingRoomRoutes, { waitingRoom, live, ...limits });
        await app.register(bookingsRoutes, { bookings });
        await app.register(doorRoutes, { door });
        await app.register(doorPage);
        await app.register(pageRoutes, { catalogue, search, settings, clock });
      },
      jobs: [
        {
          // Expired holds, payments that never answered, refunds to retry.
          name: 'booking.sweep',
          schedule: '*/15 * * * * *',
          run: async ({ tickAt }) => {
            await seats.releaseExpiredHolds(tickAt);
            await settlement.failOverduePayments(tickAt);
            await settlement.retryRefunds();
          },
        },
        {
          name: 'booking.reminders',
          schedule: '* * * * *',
          run: ({ tickAt }) => reminders.sendDue(tickAt).then(() => {}),
        },
        {
          name: 'booking.queue_admit',
          schedule: '*/5 * * * * *',
          run: ({ tickAt }) => waitingRoom.admitWaiting(tickAt).then(() => {}),
        },
        // Ended holds, waiting-room entries, past shows' seat inventory, sent reminders (README, "Retention").
        retentionJob(
          'booking.retention',
          // Every minute (at second 30, off the other jobs' second): small batches, and a short
          // window (a soak run's) is kept to within a minute.
          '30 * * * * *',
          bookingRetention(deps.database.db, settings.retention),
          {
            clock,
            metrics: deps.metrics,
          },
        ),
      ],
    };
  },
} satisfies ServiceModule;
