import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { USER_DATA } from '../notifications/routes.ts';
import type { LiveFeed } from './live.ts';
import {
  FeedPage,
  FeedParams,
  FeedQuery,
  ItemChanged,
  ItemParams,
  ItemPatch,
  LiveHeaders,
  MarkBody,
  Marked,
  Unread,
} from './schemas.ts';
import type { FeedService } from './service.ts';

const tags = ['notifications'];
/** An item or cursor that is not the user's: 404 / 400 (USER_DATA's callers: the user, notify:contacts, admin). */
const READ = { ...USER_DATA, openapi: { problems: [400] } } as const;
const ONE = { ...USER_DATA, openapi: { problems: [404] } } as const;
const EventStream = {
  description: 'Server-Sent Events',
  content: {
    'text/event-stream': {
      schema: {
        type: 'string',
        description: '`id: <seq>`, `event: item|unread|state`, `data: <JSON>` blocks',
      },
    },
  },
};

/** HTTP only: a user's in-app feed, its unread count, marks and the live stream. */
export const feedRoutes: FastifyPluginAsyncTypebox<{ feed: FeedService; live: LiveFeed }> = async (
  app,
  { feed, live },
) => {
  app.get(
    '/api/users/:userId/feed',
    {
      config: READ,
      schema: {
        tags,
        summary: "A user's in-app feed, newest first (keyset pages), with the unread count",
        params: FeedParams,
        querystring: FeedQuery,
        response: { 200: FeedPage },
      },
    },
    (request) => feed.page(request.params.userId, request.query),
  );

  app.get(
    '/api/users/:userId/feed/unread',
    {
      config: USER_DATA,
      schema: {
        tags,
        summary: 'How many feed items are neither read nor archived',
        params: FeedParams,
        response: { 200: Unread },
      },
    },
    (request) => feed.unread(request.params.userId),
  );

  app.get(
    '/api/users/:userId/feed/events',
    {
      config: { ...USER_DATA, openapi: { problems: [429] } },
      schema: {
        tags,
        summary:
          'Server-Sent Events of the feed: `item` (id = its event id) in feed order, `unread`, `state`; `Last-Event-ID` resumes',
        params: FeedParams,
        headers: LiveHeaders,
        response: { 200: EventStream },
      },
    },
    async (request, reply) =>
      live.stream(request.params.userId, request.headers['last-event-id'], request, reply),
  );

  app.patch(
    '/api/users/:userId/feed/:itemId',
    {
      config: ONE,
      schema: {
        tags,
        summary: 'Mark one item seen, read or unread, archived or not',
        params: ItemParams,
        body: ItemPatch,
        response: { 200: ItemChanged },
      },
    },
    (request) => feed.change(request.params.userId, request.params.itemId, request.body),
  );

  app.post(
    '/api/users/:userId/feed/mark',
    {
      config: ONE,
      schema: {
        tags,
        summary: 'Mark an item and every older one (e.g. "mark all as read" up to the newest shown)',
        params: FeedParams,
        body: MarkBody,
        response: { 200: Marked },
      },
    },
    (request) => feed.markUpTo(request.params.userId, request.body.up_to, request.body.mark),
  );
};
