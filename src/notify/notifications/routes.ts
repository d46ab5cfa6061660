import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Static } from 'typebox';
import type { NotificationAccepted, NotificationRequest } from '../api.ts';
import { err } from '../errors.ts';
import type { PreferencesService } from '../preferences/service.ts';
import {
  Accepted,
  BatchAccepted,
  BatchBody,
  DeadLetterQuery,
  DeadLetters,
  History,
  HistoryQuery,
  IdParams,
  Limits,
  NotificationStatus,
  Preferences,
  PreferencesPatch,
  PreferencesPut,
  PushSubscriptionBody,
  PushSubscriptionDelete,
  SendBody,
  UserParams,
} from './schemas.ts';
import type { NotifyService } from './service.ts';

const tags = ['notifications'];
type Params = Static<typeof UserParams>;

/** Who may send: the services that notify users, and admins. */
const SENDERS = { service: 'notify:send', admin: true } as const;
/** A user's own contacts, preferences, limits and history: the user, a service that keeps contacts, an admin. */
const USER_DATA = { access: { user: { param: 'userId' }, service: 'notify:contacts', admin: true } } as const;

/** HTTP only: schemas, the service call, the status code. */
export function notifyRoutes(app: FastifyInstance, service: NotifyService, preferences: PreferencesService) {
  app.post(
    '/api/notifications',
    {
      // The header's replay is the platform's (scoped by the caller); the body's `id` is
      // deduplicated by the service.
      config: { access: SENDERS, idempotency: { scope: 'notify.send' } },
      schema: {
        tags,
        summary: 'Notify a user over one or more channels',
        description:
          'Each channel comes back `queued`, `scheduled` (quiet hours), `skipped` (channel off: `channel_disabled`; no address or push subscription: `no_address`) or `rate_limited` (with `retry_after` seconds). 429 when limits stopped every channel that was not skipped; 422 `unknown_type`, `unknown_channel` or `missing_variables` before anything is stored. `id` or `Idempotency-Key` makes the request idempotent for 24 h.',
        body: SendBody,
        response: { 202: Accepted },
      },
    },
    async (request, reply) => accepted(reply, await service.send(request.body as NotificationRequest)),
  );

  app.post(
    '/api/notifications/batch',
    {
      config: { access: SENDERS },
      schema: {
        tags,
        summary: 'Batch lane: one notification per recipient, on topics that never delay real-time ones',
        body: BatchBody,
        response: { 202: BatchAccepted },
      },
    },
    async (request, reply) =>
      reply.code(202).send(await service.batch(request.body as Static<typeof BatchBody>)),
  );

  const admin = { config: { access: { admin: true } } } as const;
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
    async (request) => ({
      dead_letters: await service.deadLetters((request.query as Static<typeof DeadLetterQuery>).limit),
    }),
  );

  app.post(
    '/api/notifications/dead-letters/:id/redrive',
    {
      ...admin,
      schema: { tags, summary: 'Send a dead letter again with a fresh set of attempts', params: IdParams },
    },
    async (request, reply) =>
      reply.code(202).send(await service.redrive((request.params as Static<typeof IdParams>).id)),
  );

  app.get(
    '/api/notifications/:id',
    {
      config: { access: { user: true, service: 'notify:read', admin: true } },
      schema: {
        tags,
        summary: 'Delivery status per channel with every attempt',
        description: "A user's token sees only that user's notifications (others: 404).",
        params: IdParams,
        response: { 200: NotificationStatus },
      },
    },
    async (request) => {
      const status = await service.status((request.params as Static<typeof IdParams>).id);
      const caller = request.caller;
      if (caller.kind === 'user' && caller.userId !== status.user_id) {
        throw err('notification_not_found');
      }
      return status;
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
    async (request) => {
      const { limit, cursor } = request.query as Static<typeof HistoryQuery>;
      return service.history((request.params as Params).userId, limit, cursor);
    },
  );

  const prefs = { tags, params: UserParams, response: { 200: Preferences } };
  app.get(
    '/api/users/:userId/notification-preferences',
    { config: USER_DATA, schema: { ...prefs, summary: 'Preferences' } },
    (r) => preferences.get((r.params as Params).userId),
  );
  app.put(
    '/api/users/:userId/notification-preferences',
    { config: USER_DATA, schema: { ...prefs, summary: 'Replace the preferences', body: PreferencesPut } },
    (r) => preferences.replace((r.params as Params).userId, r.body as Static<typeof PreferencesPut>),
  );
  app.patch(
    '/api/users/:userId/notification-preferences',
    { config: USER_DATA, schema: { ...prefs, summary: 'Change some preferences', body: PreferencesPatch } },
    (r) => preferences.update((r.params as Params).userId, r.body as Static<typeof PreferencesPatch>),
  );

  app.post(
    '/api/users/:userId/push-subscriptions',
    {
      config: USER_DATA,
      schema: {
        tags,
        summary: 'Add a Web Push subscription',
        params: UserParams,
        body: PushSubscriptionBody,
      },
    },
    async (request, reply) => {
      const body = request.body as Static<typeof PushSubscriptionBody>;
      await service.addSubscription((request.params as Params).userId, body);
      return reply.code(201).send(body);
    },
  );
  app.delete(
    '/api/users/:userId/push-subscriptions',
    {
      config: USER_DATA,
      schema: {
        tags,
        summary: 'Remove a Web Push subscription by endpoint',
        params: UserParams,
        querystring: PushSubscriptionDelete,
      },
    },
    async (request, reply) => {
      const { endpoint } = request.query as Static<typeof PushSubscriptionDelete>;
      await service.deleteSubscription((request.params as Params).userId, endpoint);
      return reply.code(204).send();
    },
  );

  app.get(
    '/api/users/:userId/notification-limits',
    {
      config: USER_DATA,
      schema: {
        tags,
        summary: 'What is left of each per-channel limit',
        params: UserParams,
        response: { 200: Limits },
      },
    },
    async (request) => ({ limits: await service.limits((request.params as Params).userId) }),
  );
}

/** 202 with the outcome per channel, or 429 when limits refused every channel that was not skipped. */
function accepted(reply: FastifyReply, result: NotificationAccepted) {
  if (result.status === 'accepted') return reply.code(202).send(result);
  const retryAfter = Math.min(...result.channels.map((c) => c.retry_after ?? Number.POSITIVE_INFINITY));
  throw err('notifications_rate_limited', {
    detail: 'Every requested channel is over its limit for this user',
    headers: { 'Retry-After': String(retryAfter) },
    extras: { channels: result.channels, retry_after: retryAfter },
  });
}
