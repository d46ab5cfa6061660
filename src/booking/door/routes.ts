import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { callerId } from '../../platform/auth/index.ts';
import { CheckedIn, CheckInBodyRequest, CheckInRequest, TokenParams } from './schemas.ts';
import type { DoorService } from './service.ts';

const tags = ['booking'];
const access = { operator: 'booking:door', admin: true } as const;
const problems = [404, 409, 410, 422];
const description =
  'Door staff (an operator key or page session with `booking:door`, or the admin). The first scan ' +
  'admits (200 with the seats and who booked); later scans answer 409 `already_checked_in` with ' +
  '`checked_in_at` and `door`. A ticket of another show or a scan once the show has ended → 422 ' +
  '(`wrong_show`, `show_ended`); a cancelled booking → 410 `ticket_cancelled`; an unpaid one → 409 ' +
  '`ticket_not_valid`; a token that is not ours → 404. Concurrent scans of one ticket admit it once.';

export const doorRoutes: FastifyPluginAsyncTypebox<{ door: DoorService }> = async (app, { door }) => {
  app.post(
    '/api/v1/tickets/:token/check-in',
    {
      // The token is a bearer credential: our log lines show the route's pattern, not it.
      config: { access, redactUrl: true, openapi: { problems } },
      schema: {
        tags,
        summary: 'Admit a ticket at the door (once)',
        description: `${description} The token travels in the URL here; scanners that can should use POST /api/v1/tickets/check-in, which keeps it out of URL logs.`,
        params: TokenParams,
        body: CheckInRequest,
        response: { 200: CheckedIn },
      },
    },
    async (request) => door.checkIn(request.params.token, request.body, callerId(request.caller)),
  );

  app.post(
    '/api/v1/tickets/check-in',
    {
      config: { access, openapi: { problems } },
      schema: {
        tags,
        summary: 'Admit a ticket at the door (once), the token in the body',
        description,
        body: CheckInBodyRequest,
        response: { 200: CheckedIn },
      },
    },
    async (request) => {
      const { token, ...rest } = request.body;
      return door.checkIn(token, rest, callerId(request.caller));
    },
  );
};
