import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { access, tags } from '../http.ts';
import { describePricing } from '../pricing/pricing.ts';
import { money } from '../views.ts';
import type { LotConfig } from './config.ts';
import { Lot } from './schemas.ts';

/** The lot as configured: floors, panels, pricing in words. */
export const lotRoutes: FastifyPluginAsyncTypebox<{ lot: LotConfig }> = async (app, { lot }) => {
  app.get(
    '/api/v1/parking/lot',
    {
      config: access.public,
      schema: {
        tags,
        summary: 'The lot: floors, panels, pricing, time zone, reservation rules',
        response: { 200: Lot },
      },
    },
    async () => {
      return {
        id: lot.id,
        name: lot.name,
        timeZone: lot.timeZone,
        currency: lot.currency,
        pricing: describePricing(lot.pricing, lot.currency),
        lostTicketFee: money(lot.lostTicketFeeMinor),
        entryPanels: lot.entryPanels,
        exitPanels: lot.exitPanels,
        floors: lot.floors.map((floor) => ({
          floor: floor.floor,
          name: floor.name,
          boardId: floor.boardId,
          spots: floor.spots.length,
        })),
        reservations: lot.reservations ?? null,
      };
    },
  );
};
