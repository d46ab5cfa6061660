import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Caller } from '../../platform/auth/index.ts';
import { grants } from '../../platform/auth/keys.ts';
import { AppError } from '../../platform/errors.ts';
import { serveStatic } from '../../platform/pages/index.ts';
import { describePricing } from '../pricing/pricing.ts';
import { MIN_RESERVATION_MINUTES } from '../reservations/service.ts';
import type { ParkingService } from '../service.ts';
import { money } from '../views.ts';
import {
  entryChoices,
  lotClock,
  reservationChoices,
  SPOT_LABELS,
  VEHICLE_LABELS,
  vehicleLegend,
} from './labels.ts';

/** How long a panel keeps a driver's screen: idle (no touch or key), and after the gate opened. */
export interface PanelTimers {
  idleResetMs: number;
  doneResetMs: number;
}

/** The lot's pages: landing, live display boards, entry panel and exit panel (a panel per config entry). */
export const parkingPages: FastifyPluginAsyncTypebox<{
  service: ParkingService;
  timers: PanelTimers;
}> = async (app, { service, timers }) => {
  const lot = service.lot;
  serveStatic(app, 'parking', new URL('./static/', import.meta.url));
  const common = {
    lot: { name: lot.name, timeZone: lot.timeZone, currency: lot.currency },
    styles: ['/static/parking/parking.css'],
  };
  const legend = vehicleLegend(lot);
  /** The boards with the words they are shown with: vehicles first, times on the lot's clock. */
  const boardsPage = async () => {
    const boards = await service.boards();
    return { boards, legend, spotLabels: SPOT_LABELS, updated: lotClock(boards.updatedAt, lot.timeZone) };
  };
  const panelTimers = { idleReset: timers.idleResetMs, doneReset: timers.doneResetMs };
  const hide = { schema: { hide: true } };
  // The boards are public; the panels are the lot's operators' (a page session: in development
  // the demo operator signs in by itself, in production the browser is sent to /sign-in).
  const board = { ...hide, config: { access: { public: true } } } as const;
  const panel = { ...hide, config: { access: { operator: 'parking:panel' } } } as const;
  // `?panel=<id>`, read without a schema (anything else falls back to the first panel).
  const panelOf = (query: unknown, panels: { id: string; name: string }[]) => {
    const wanted = typeof query === 'object' && query !== null && 'panel' in query ? query.panel : undefined;
    return panels.find((panel) => panel.id === wanted) ?? panels[0];
  };

  app.get('/parking', board, async (_request, reply) =>
    reply.page('/parking/pages/index', {
      ...common,
      title: 'Parking lot',
      ...(await boardsPage()),
      pricing: describePricing(lot.pricing, lot.currency),
      lostTicketFee: `${money(lot.lostTicketFeeMinor).toFixed(2)} ${lot.currency}`,
      entryPanels: lot.entryPanels,
      exitPanels: lot.exitPanels,
      reservations: lot.reservations !== undefined,
    }),
  );

  // Public: the page signs a guest in (POST /api/v1/guests) and keeps its token, as booking does;
  // the reservations are that guest's.
  app.get('/parking/reserve', board, async (_request, reply) =>
    reply.page('/parking/pages/reserve', {
      ...common,
      title: 'Reserve a spot',
      rules: lot.reservations ?? null,
      minMinutes: MIN_RESERVATION_MINUTES,
      choices: reservationChoices(lot),
      zoneName: lotClock(new Date(), lot.timeZone).split(' ').pop(),
      pricing: describePricing(lot.pricing, lot.currency),
      scripts: lot.reservations ? ['/static/parking/reserve.js'] : [],
    }),
  );

  app.get('/parking/boards', board, async (_request, reply) =>
    reply.page('/parking/pages/boards', {
      ...common,
      title: 'Display boards',
      ...(await boardsPage()),
      scripts: ['/static/parking/boards.js'],
    }),
  );

  // Whoever holds the ticket (id or code), as for its status: public, like the ticket's API.
  app.get(
    '/parking/receipts/:ticket',
    { schema: { hide: true, params: ReceiptParams }, config: { access: { public: true } } },
    async (request, reply) => {
      try {
        const receipt = await service.receipt(request.params.ticket);
        // A receipt names a plate and an amount: not for shared caches.
        reply.header('cache-control', 'private, no-store');
        return reply.page('/parking/pages/receipt', {
          ...common,
          styles: [...common.styles, '/static/parking/receipt.css'],
          title: `Receipt ${receipt.code ?? receipt.ticketId}`,
          receipt,
          amount: `${receipt.amount.toFixed(2)} ${receipt.currency}`,
          vehicle: VEHICLE_LABELS[receipt.vehicleType].one,
          scripts: ['/static/parking/receipt.js'],
        });
      } catch (error) {
        if (!(error instanceof AppError) || (error.status !== 404 && error.status !== 409)) throw error;
        // Not paid yet: the payment due now, so this page is where an old (withdrawn) payment's
        // page sends the driver (its `returnUrl`). That is a state of the ticket the site links
        // to, not an error of the page: 200 (the JSON receipt keeps its 409).
        const due = error.status === 409 ? await service.dueNow(request.params.ticket) : undefined;
        if (error.status === 409) reply.header('cache-control', 'private, no-store');
        return reply.code(error.status === 404 ? 404 : 200).page('/platform/pages/message', {
          ...common,
          title: error.status === 404 ? 'Receipt not found' : 'Not paid yet',
          message: error.message,
          tone: 'bad',
          link: due
            ? { href: due.paymentUrl, title: `Pay ${money(due.amountMinor).toFixed(2)} ${due.currency} now` }
            : { href: '/parking', title: 'Parking lot' },
        });
      }
    },
  );

  app.get('/parking/entry', panel, async (request, reply) =>
    reply.page('/parking/pages/entry', {
      ...common,
      title: 'Entry panel',
      panel: panelOf(request.query, lot.entryPanels),
      panels: lot.entryPanels,
      choices: entryChoices(lot),
      timers: panelTimers,
      scripts: ['/static/parking/entry.js'],
    }),
  );

  app.get('/parking/exit', panel, async (request, reply) =>
    reply.page('/parking/pages/exit', {
      ...common,
      title: 'Exit panel',
      panel: panelOf(request.query, lot.exitPanels),
      panels: lot.exitPanels,
      lostTicketFee: `${money(lot.lostTicketFeeMinor).toFixed(2)} ${lot.currency}`,
      // Only an attendant may charge a lost ticket; a panel's session gets a pointer to one instead.
      attendant: mayActAs(request.caller, 'parking:attendant'),
      timers: panelTimers,
      scripts: ['/static/parking/exit.js'],
    }),
  );
};

/** The receipt page's path parameter: an id or a code, checked by the service (a typo is a 404 page). */
const ReceiptParams = Type.Object({ ticket: Type.String({ maxLength: 64 }) });

function mayActAs(caller: Caller, scope: string): boolean {
  return caller.kind === 'operator' && grants(caller, scope);
}
