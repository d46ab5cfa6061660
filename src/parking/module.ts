import type { PaymentsApi } from '../payments/api.ts';
import { retentionJob } from '../platform/jobs/retention.ts';
import type { ServiceModule } from '../platform/module.ts';
import { reservationRetention, ticketArchive } from './archive.ts';
import { createEvents } from './boards/events.ts';
import { createLiveBoards } from './boards/live.ts';
import { boardsRoutes } from './boards/routes.ts';
import { entryRoutes } from './entry/routes.ts';
import { exitRoutes } from './exit/routes.ts';
import { loadLotConfig } from './lot/config.ts';
import { lotRoutes } from './lot/routes.ts';
import { countingEntries, createParkingMetrics } from './metrics.ts';
import { parkingMigrations } from './migrations/index.ts';
import { parkingPages } from './pages/routes.ts';
import { receiptRoutes } from './receipts/routes.ts';
import { reservationRoutes } from './reservations/routes.ts';
import { createParkingRepositories, createParkingService } from './service.ts';
import { loadParkingSettings } from './settings.ts';
import { ticketRoutes } from './tickets/routes.ts';

/**
 * The parking lot (spec part B). Settings: PARKING_LOT_CONFIG (path of the lot's JSON file;
 * default the demo lot), PARKING_TICKET_ARCHIVE_AFTER (README, "Retention").
 */
export const parkingModule: ServiceModule = {
  name: 'parking',
  needs: ['payments'],
  migrations: parkingMigrations,
  async create(deps) {
    const settings = loadParkingSettings(deps.config.env);
    const lot = loadLotConfig(settings.lotConfigPath);
    // `needs: ['payments']`: the platform created payments first; its public API is this.
    const payments = deps.modules.get('payments') as PaymentsApi;
    // Read at scrape time, from the boards' shared count.
    const metrics = createParkingMetrics(deps.metrics.registry, () => service.spotCounts(), {
      reservations: lot.reservations !== undefined,
    });
    const service = createParkingService({
      repositories: createParkingRepositories(deps.database.db),
      lot,
      payments,
      events: createEvents(deps.pubsub, deps.log),
      clock: deps.clock,
      log: deps.log,
      metrics,
    });
    await service.syncSpots();
    payments.onPaymentEvent('parking', ({ payment }) => service.handleOutcome(payment));
    const live = createLiveBoards({
      pubsub: deps.pubsub,
      sse: deps.sse,
      log: deps.log,
      boards: service.boards,
      ticketSnapshot: service.ticket,
      resyncMs: settings.liveResyncMs,
    });
    return {
      async routes(app) {
        await live.start();
        // In this order: /openapi.json lists the operations as they are registered.
        await app.register(entryRoutes, { entry: countingEntries(service, metrics) });
        await app.register(exitRoutes, { checkout: service, live });
        await app.register(ticketRoutes, { checkout: service });
        await app.register(receiptRoutes, { checkout: service });
        await app.register(boardsRoutes, { boards: service, live });
        await app.register(lotRoutes, { lot: service.lot });
        await app.register(reservationRoutes, { reservations: service.reservations });
        await app.register(parkingPages, {
          service,
          timers: { idleResetMs: settings.panelIdleResetMs, doneResetMs: settings.panelDoneResetMs },
        });
      },
      jobs: [
        // Paid tickets and their payments move to the archive tables (archive.ts).
        retentionJob(
          'parking.retention',
          // Every minute (at second 45, off the other jobs' second): small batches, and a short
          // window (a soak run's) is kept to within a minute.
          '45 * * * * *',
          [
            ticketArchive(deps.database.db, settings.archiveAfterMs),
            reservationRetention(deps.database.db, settings.archiveAfterMs),
          ],
          { clock: deps.clock, metrics: deps.metrics },
        ),
        {
          // Holds a spot for reservations starting within holdAheadMinutes, releases no-shows
          // (README, "Reservations"); a lot without reservations does nothing.
          name: 'parking.reservations',
          schedule: '15 * * * * *',
          run: async ({ tickAt }) => {
            await service.reservations.runReservations(tickAt);
          },
        },
      ],
      close: () => live.close(),
    };
  },
};
