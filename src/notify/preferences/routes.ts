import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ChannelLimits } from '../notifications/limits.ts';
import { USER_DATA } from '../notifications/routes.ts';
import { UserParams } from '../notifications/schemas.ts';
import {
  Limits,
  Preferences,
  PreferencesPatch,
  PreferencesPut,
  PushSubscriptionBody,
  PushSubscriptionDelete,
} from './schemas.ts';
import type { PreferencesService } from './service.ts';

const tags = ['notifications'];
/** A change that can be refused: invalid preferences, a push endpoint refused or one too many (422, 409). */
const CHANGES = { ...USER_DATA, openapi: { problems: [409, 422] } } as const;

/** A user's preferences, push subscriptions and what is left of each limit. */
export const preferencesRoutes: FastifyPluginAsyncTypebox<{
  preferences: PreferencesService;
  limits: ChannelLimits;
}> = async (app, { preferences, limits }) => {
  const prefs = { tags, params: UserParams, response: { 200: Preferences } };
  app.get(
    '/api/users/:userId/notification-preferences',
    { config: USER_DATA, schema: { ...prefs, summary: 'Preferences' } },
    (r) => preferences.get(r.params.userId),
  );
  app.put(
    '/api/users/:userId/notification-preferences',
    { config: CHANGES, schema: { ...prefs, summary: 'Replace the preferences', body: PreferencesPut } },
    (r) => preferences.replace(r.params.userId, r.body),
  );
  app.patch(
    '/api/users/:userId/notification-preferences',
    { config: CHANGES, schema: { ...prefs, summary: 'Change some preferences', body: PreferencesPatch } },
    (r) => preferences.update(r.params.userId, r.body),
  );

  app.post(
    '/api/users/:userId/push-subscriptions',
    {
      config: CHANGES,
      schema: {
        tags,
        summary: 'Add a Web Push subscription',
        params: UserParams,
        body: PushSubscriptionBody,
        response: { 201: PushSubscriptionBody },
      },
    },
    async (request, reply) => {
      await preferences.addSubscription(request.params.userId, request.body);
      return reply.code(201).send(request.body);
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
        response: { 204: { type: 'null', description: 'Removed' } },
      },
    },
    async (request, reply) => {
      await preferences.deleteSubscription(request.params.userId, request.query.endpoint);
      return reply.code(204).send(null);
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
    async (request) => ({ limits: await limits.overview(request.params.userId) }),
  );
};
