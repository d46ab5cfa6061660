import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The door scanner (`/door`): a phone page for door staff (a `booking:door` page session; in
 * development the demo operator signs in by itself, in production the browser is sent to /sign-in).
 * It reads ticket QR codes with the camera or from a photo (jsQR, served from node_modules under
 * /static/vendor/, so the CSP's `script-src 'self'` holds), takes typed tokens as a fallback, and
 * queues scans made offline in localStorage until the network is back (static/door.js).
 */
export const doorPage: FastifyPluginAsyncTypebox = async (app) => {
  // Read once: the library's one browser file (UMD, defines `jsQR`), no build step.
  const jsqr = readFileSync(createRequire(import.meta.url).resolve('jsqr'));
  app.get('/static/vendor/jsqr.js', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=86400').send(jsqr),
  );

  app.get(
    '/door',
    {
      config: { access: { operator: 'booking:door', admin: true } },
      schema: {
        hide: true,
        querystring: Type.Object({ show: Type.Optional(Type.String()), door: Type.Optional(Type.String()) }),
      },
    },
    async (request, reply) =>
      reply.page('/booking/pages/door', {
        title: 'Door scanner',
        showId: request.query.show && UUID.test(request.query.show) ? request.query.show.toLowerCase() : '',
        door: (request.query.door ?? '').slice(0, 60),
        styles: ['/static/booking/booking.css', '/static/booking/door.css'],
        scripts: ['/static/booking/door.js'],
      }),
  );
};
