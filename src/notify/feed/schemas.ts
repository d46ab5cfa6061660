import { Type } from 'typebox';
import { Timestamp, UserId } from '../notifications/schemas.ts';

/** Request and response schemas of a user's in-app feed (they also make /docs). */
const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

export const ItemId = Type.String({ format: 'uuid', description: "The item's notification id" });
export const FeedParams = Type.Object({ userId: UserId });
export const ItemParams = Type.Object({ userId: UserId, itemId: ItemId });

export const FeedQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  cursor: Type.Optional(Type.String({ maxLength: 100, description: '`next_cursor` of the previous page' })),
  filter: Type.Optional(
    Type.Union([Type.Literal('active'), Type.Literal('unread'), Type.Literal('archived')], {
      description: '`active` (default): everything not archived; `unread`; `archived`',
    }),
  ),
});

export const FeedItem = Type.Object({
  id: Type.String({ description: "The notification's id" }),
  type: Type.String(),
  title: Type.String(),
  body: Type.String(),
  link: Nullable(Type.String({ description: 'A path on this site or an https URL' })),
  created_at: Timestamp,
  seen_at: Nullable(Timestamp),
  read_at: Nullable(Timestamp),
  archived_at: Nullable(Timestamp),
  event_id: Type.String({ description: 'The SSE event id this item was (or would be) streamed with' }),
});

const LastEventId = Type.String({
  description:
    "The feed's newest event id when this was read: `Last-Event-ID` of the live stream that continues from here",
});

export const FeedPage = Type.Object({
  items: Type.Array(FeedItem),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
  unread: Type.Integer({ description: 'Items neither read nor archived' }),
  last_event_id: LastEventId,
});

export const Unread = Type.Object({ unread: Type.Integer(), last_event_id: LastEventId });

export const ItemPatch = Type.Object(
  {
    seen: Type.Optional(Type.Literal(true)),
    read: Type.Optional(Type.Boolean()),
    archived: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const ItemChanged = Type.Object({ item: FeedItem, unread: Type.Integer() });

export const MarkBody = Type.Object(
  {
    up_to: ItemId,
    mark: Type.Union(
      [
        Type.Literal('seen'),
        Type.Literal('read'),
        Type.Literal('unread'),
        Type.Literal('archived'),
        Type.Literal('unarchived'),
      ],
      { description: 'Applied to this item and every older one of the feed' },
    ),
  },
  { additionalProperties: false },
);
export const Marked = Type.Object({ updated: Type.Integer(), unread: Type.Integer() });

export const LiveHeaders = Type.Object({
  'last-event-id': Type.Optional(
    Type.String({ pattern: '^[0-9]{1,18}$', description: 'Resume after this event (EventSource sends it)' }),
  ),
});
