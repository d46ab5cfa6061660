import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { duration } from '../../platform/env.ts';
import { err } from '../errors.ts';
import { DigestBody, DigestList, DigestParams, DigestSetting } from './schemas.ts';
import type { Digests } from './service.ts';

const tags = ['notifications'];
const MINUTE = 60_000;
const WEEK = 7 * 86_400_000;

/** Like templates, digest settings decide what every user receives: admins write, `notify:templates` reads. */
const read = { access: { service: 'notify:templates', admin: true } } as const;

/** `/api/notification-types/{type}/digest`: which types are digestible and their window. */
export const digestRoutes: FastifyPluginAsyncTypebox<{ digests: Digests }> = async (app, { digests }) => {
  app.get(
    '/api/notification-types/digests',
    {
      config: read,
      schema: {
        tags,
        summary: 'Digestible notification types and their windows',
        response: { 200: DigestList },
      },
    },
    async () => ({ digests: await digests.list() }),
  );

  app.get(
    '/api/notification-types/:type/digest',
    {
      config: { ...read, openapi: { problems: [404] } },
      schema: {
        tags,
        summary: "A type's digest window",
        params: DigestParams,
        response: { 200: DigestSetting },
      },
    },
    async (request) => digests.get(request.params.type),
  );

  app.put(
    '/api/notification-types/:type/digest',
    {
      config: { access: { admin: true }, openapi: { problems: [422] } },
      schema: {
        tags,
        summary: 'Make a type digestible (or change its window)',
        description:
          "Events of this type for one user and channel inside a window are delivered as one message whose template gets them as `items` (and `count`). `every`: a window of that length from its first event; `daily_at`: until the next HH:MM in the user's zone. Windows already open keep their end.",
        params: DigestParams,
        body: DigestBody,
        response: { 200: DigestSetting },
      },
    },
    async (request) => {
      const { every, daily_at } = request.body;
      if ((every === undefined) === (daily_at === undefined)) {
        throw err('invalid_digest', 'Give exactly one of every and daily_at');
      }
      let everySeconds: number | null = null;
      if (every !== undefined) {
        try {
          everySeconds = duration('every', every, MINUTE, WEEK) / 1000;
        } catch (error) {
          throw err('invalid_digest', (error as Error).message);
        }
      }
      return digests.set({
        type: request.params.type,
        every_seconds: everySeconds,
        daily_at: daily_at ?? null,
      });
    },
  );

  app.delete(
    '/api/notification-types/:type/digest',
    {
      config: { access: { admin: true }, openapi: { problems: [404] } },
      schema: {
        tags,
        summary: 'Stop digesting a type (windows already open are still sent as one message)',
        params: DigestParams,
        response: { 204: { type: 'null', description: 'No longer digestible' } },
      },
    },
    async (request, reply) => {
      await digests.remove(request.params.type);
      return reply.code(204).send(null);
    },
  );
};
