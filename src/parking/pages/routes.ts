import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Caller } from '../../platform/auth/index.ts';
import { grants } from '../../platform/auth/keys.ts';
import { serveStatic } from '../../platform/pages/index.ts';
import { NEEDS, VEHICLE_TYPES } from '../lot/allocation.ts';
import { describePricing } from '../pricing/pricing.ts';
import type { ParkingService } from '../service.ts';
import { money } from '../views.ts';

/** The lot's pages: landing, live display boards, entry panel and exit panel (a panel per config entry). */
export const parkingPages: FastifyPluginAsyncTypebox<{ service: ParkingService }> = async (
  app,
  { service },
) => {
  const lot = service.lot;
  serveStatic(app, 'parking', new URL('./static/', import.meta.url));
  const common = {
    lot: { name: lot.name, timeZone: lot.timeZone, currency: lot.currency },
    styles: ['/static/parking/parking.css'],
  };
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
      boards: await service.boards(),
      pricing: describePricing(lot.pricing, lot.currency),
      lostTicketFee: `${money(lot.lostTicketFeeMinor).toFixed(2)} ${lot.currency}`,
      entryPanels: lot.entryPanels,
      exitPanels: lot.exitPanels,
    }),
  );

  app.get('/parking/boards', board, async (_request, reply) =>
    reply.page('/parking/pages/boards', {
      ...common,
      title: 'Display boards',
      boards: await service.boards(),
      scripts: ['/static/parking/boards.js'],
    }),
  );

  app.get('/parking/entry', panel, async (request, reply) =>
    reply.page('/parking/pages/entry', {
      ...common,
      title: 'Entry panel',
      panel: panelOf(request.query, lot.entryPanels),
      panels: lot.entryPanels,
      vehicleTypes: VEHICLE_TYPES,
      needs: NEEDS,
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
      scripts: ['/static/parking/exit.js'],
    }),
  );
};

function mayActAs(caller: Caller, scope: string): boolean {
  return caller.kind === 'operator' && grants(caller, scope);
}
