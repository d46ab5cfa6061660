import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { callerId } from '../../platform/auth/index.ts';
import type { NotificationAccepted } from '../api.ts';
import { err } from '../errors.ts';
import {
  Accepted,
  BatchAccepted,
  BatchBody,
  DeadLetterQuery,
  DeadLetters,
  History,
  HistoryQuery,
  IdParams,
  NotificationStatus,
  Redriven,
  SendBody,
  UserParams,
} from './schemas.ts';
import type { NotifyService } from './service.ts';

const tags = ['notifications'];

/** Who may send: the services that notify users, and admins. */
const SENDERS = { service: 'notify:send', admin: true } as const;
/** A user's own contacts, preferences, limits and history: the user, a service that keeps contacts, an admin. */
export const USER_DATA = {
  access: { user: { param: 'userId' }, service: 'notify:contacts', admin: true },
} as const;
const admin = { config: { access: { admin: true } } } as const;
const adminOne = { config: { access: { admin: true }, openapi: { problems: [404] } } } as const;

/** HTTP only: schemas, the service call, the status code. */
export const notificationsRoutes: FastifyPluginAsyncTypebox<{ service: NotifyService }> = async (
  app,
  { service },
) => {
  app.post(
    '/api/notifications',
    {
      // The header's replay is the platform's (scoped by the caller); the body's `id` is
      // deduplicated by the service.
      config: { access: SENDERS, idempotency: { scope: 'notify.send' }, openapi: { problems: [422, 429] } },
      schema: {
        tags,
        summary: 'Notify a user over one or more channels',
        description:
          'Each channel comes back `queued`, `scheduled` (quiet hours, or `send_at` in the future), `skipped` (channel off: `channel_disabled`; no address or push subscription: `no_address`) or `rate_limited` (with `retry_after` seconds). 429 when limits stopped every channel that was not skipped; 422 `unknown_type`, `unknown_channel` or `missing_variables` before anything is stored. `id` or `Idempotency-Key` makes the request idempotent for 24 h.',
        body: SendBody,
        response: { 202: Accepted },
      },
    },
    async (request, reply) => {
      const sender = callerId(request.caller);
      const accepted = acceptedOrRefused(await service.send(request.body, { sender }));
      return reply.code(202).send(accepted);
    },
  );

  app.post(
    '/api/notifications/batch',
    {
      config: { access: SENDERS, openapi: { problems: [422] } },
      schema: {
        tags,
        summary: 'Batch lane: one notification per recipient, on topics that never delay real-time ones',
        body: BatchBody,
        response: { 202: BatchAccepted },
      },
    },
    async (request, reply) =>
      reply.code(202).send(await service.batch(request.body, callerId(request.caller))),
  );

  app.get(
    '/api/notifications/dead-letters',
    {
      ...admin,
      schema: {
        tags,
        summary: 'Deliveries that failed for good',
        querystring: DeadLetterQuery,
        response: { 200: DeadLetters },
      },
    },
    async (request) => ({ dead_letters: await service.deadLetters(request.query.limit) }),
  );

  app.post(
    '/api/notifications/dead-letters/:id/redrive',
    {
      ...adminOne,
      schema: {
        tags,
        summary: 'Send a dead letter again with a fresh set of attempts',
        params: IdParams,
        response: { 202: Redriven },
      },
    },
    async (request, reply) => reply.code(202).send(await service.redrive(request.params.id)),
  );

  app.get(
    '/api/notifications/:id',
    {
      config: { access: { user: true, service: 'notify:read', admin: true }, openapi: { problems: [404] } },
      schema: {
        tags,
        summary: 'Delivery status per channel with every attempt',
        description: "A user's token sees only that user's notifications (others: 404).",
        params: IdParams,
        response: { 200: NotificationStatus },
      },
    },
    async (request) => {
      const status = await service.status(request.params.id);
      const caller = request.caller;
      if (caller.kind === 'user' && caller.userId !== status.user_id) {
        throw err('notification_not_found');
      }
      return status;
    },
  );

  app.delete(
    '/api/notifications/:id',
    {
      config: { access: SENDERS, openapi: { problems: [404, 409] } },
      schema: {
        tags,
        summary: 'Cancel a notification that is still pending',
        description:
          "Its `queued` and `scheduled` channels (a `send_at` or quiet hours) become `cancelled` and are never sent; channels already sending or sent stay. A service key cancels only the notifications it sent (the key's name as `SERVICE_KEYS` lists it is the sender: a rotated key keeps it); an admin cancels any. 204 also when it was cancelled before; 409 `notification_not_cancellable` when no channel is pending (being sent, sent, or never sent); 404 `notification_not_found` for an unknown id and, to a service, for another sender's notification (and one accepted before senders were recorded), as if it did not exist.",
        params: IdParams,
        response: { 204: { type: 'null', description: 'Cancelled' } },
      },
    },
    async (request, reply) => {
      const caller = request.caller;
      await service.cancel(
        request.params.id,
        caller.kind === 'admin' ? { admin: true } : { sender: callerId(caller) },
      );
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/api/users/:userId/notifications',
    {
      config: USER_DATA,
      schema: {
        tags,
        summary: "A user's notifications, newest first",
        params: UserParams,
        querystring: HistoryQuery,
        response: { 200: History },
      },
    },
    async (request) => service.history(request.params.userId, request.query.limit, request.query.cursor),
  );
};

/** The outcome per channel, or 429 when limits refused every channel that was not skipped. */
function acceptedOrRefused(result: NotificationAccepted): NotificationAccepted {
  if (result.status === 'accepted') return result;
  const retryAfter = Math.min(...result.channels.map((c) => c.retry_after ?? Number.POSITIVE_INFINITY));
  throw err('notifications_rate_limited', {
    detail: 'Every requested channel is over its limit for this user',
    headers: { 'Retry-After': String(retryAfter) },
    extras: { channels: result.channels, retry_after: retryAfter },
  });
}
