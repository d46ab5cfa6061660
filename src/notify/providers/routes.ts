import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Clock } from '../../platform/clock.ts';
import type { Db } from '../../platform/db/index.ts';
import { platformError } from '../../platform/errors.ts';
import { type ProviderSettings, readProviderSettings } from '../settings.ts';
import type { InboxRow } from '../tables.ts';
import { inboxRepository } from './inbox.ts';
import type { OnReceipt } from './index.ts';
import { receiptError, verifyReceipt } from './receipts.ts';

export interface ProviderRouteDeps {
  env: Readonly<Record<string, string | undefined>>;
  secret?: string;
  db: Db;
  clock: Clock;
  onReceipt: OnReceipt;
}

const tags = ['notifications'];
const PROVIDERS = ['inbox', 'smtp', 'webpush', 'http'];
const ChannelSchema = Type.Union([
  Type.Literal('push'),
  Type.Literal('sms'),
  Type.Literal('email'),
  Type.Literal('in_app'),
]);
const InboxMessage = Type.Object({
  id: Type.String(),
  delivery_id: Type.String(),
  notification_id: Type.String(),
  channel: ChannelSchema,
  type: Type.String(),
  user_id: Type.String(),
  address: Type.Union([Type.String(), Type.Null()]),
  subject: Type.Union([Type.String(), Type.Null()]),
  text: Type.String(),
  html: Type.Union([Type.String(), Type.Null()]),
  provider_message_id: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
});
const InboxQuery = Type.Object({
  user: Type.Optional(Type.String({ maxLength: 64 })),
  channel: Type.Optional(ChannelSchema),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
});

export const inboxJson = (row: InboxRow) => ({ ...row, created_at: row.created_at.toISOString() });

/** The receipts webhook and the dev inbox's JSON API. */
export const providerRoutes: FastifyPluginAsyncTypebox<ProviderRouteDeps> = async (app, deps) => {
  const settings = readProviderSettings(deps.env, deps.secret);
  const inbox = inboxRepository(deps.db);
  // The dev inbox shows every user's messages.
  const adminOnly = { config: { access: { admin: true } } } as const;

  await app.register(receiptRoute, { settings, onReceipt: deps.onReceipt, clock: deps.clock });

  app.get(
    '/api/notifications/push/vapid-public-key',
    {
      config: { access: { public: true }, openapi: { problems: [404] } },
      schema: {
        tags,
        summary:
          "The VAPID public key browsers subscribe with (PushManager.subscribe's applicationServerKey)",
        description:
          '404 when push does not go through Web Push (NOTIFY_PUSH_PROVIDER=inbox and no webpush fallback).',
        response: {
          200: Type.Object({ public_key: Type.String({ description: 'base64url, uncompressed P-256' }) }),
        },
      },
    },
    async () => {
      if (!settings.webPush) throw platformError('not_found', 'Push notifications do not use Web Push here');
      return { public_key: settings.webPush.publicKey };
    },
  );

  app.get(
    '/api/notifications/inbox',
    {
      ...adminOnly,
      schema: {
        tags,
        summary: 'Dev inbox: messages the embedded providers stored instead of sending (newest first)',
        querystring: InboxQuery,
        response: { 200: Type.Object({ messages: Type.Array(InboxMessage) }) },
      },
    },
    async (request) => {
      const query = request.query;
      const rows = await inbox.list({ userId: query.user, channel: query.channel, limit: query.limit });
      return { messages: rows.map(inboxJson) };
    },
  );

  app.get(
    '/api/notifications/inbox/:id',
    {
      config: { ...adminOnly.config, openapi: { problems: [404] } },
      schema: {
        tags,
        summary: 'Dev inbox: one message',
        params: Type.Object({ id: Type.String({ format: 'uuid' }) }),
        response: { 200: InboxMessage },
      },
    },
    async (request) => {
      const row = await inbox.get(request.params.id);
      if (!row) throw platformError('not_found', 'No such message in the dev inbox');
      return inboxJson(row);
    },
  );
};

/** The receipts webhook: the signature covers the exact bytes sent, so this scope keeps the raw body. */
const receiptRoute: FastifyPluginAsyncTypebox<{
  settings: ProviderSettings;
  clock: Clock;
  onReceipt: ProviderRouteDeps['onReceipt'];
}> = async (scope, { settings, clock, onReceipt }) => {
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser(
    'application/json',
    { parseAs: 'string', bodyLimit: 64 * 1024 },
    (_r, body, done) => done(null, body),
  );
  scope.post(
    '/api/notifications/receipts/:provider',
    {
      // The provider's signature over the exact body is the credential, checked in the handler
      // (it needs the raw bytes, which an onRequest hook never sees).
      config: {
        access: { public: true },
        openapi: { problems: [401, 404, 415], headers: { 404: ['Retry-After'] } },
      },
      schema: {
        tags,
        summary: 'Delivery receipt from a provider (signed webhook)',
        description:
          'No API key: the signature is the credential, so providers call it without one. ' +
          'Body `{id, type: "message.delivered", data: {provider_message_id, delivered_at?}}`, signed like Standard ' +
          'Webhooks: webhook-id, webhook-timestamp (Unix seconds, within 5 minutes), webhook-signature ' +
          '"v1,<base64 HMAC-SHA256 of id.timestamp.body>" keyed with NOTIFY_RECEIPT_SECRET. Bad signature → 401. ' +
          'A message id not recorded yet (a receipt faster than the send it confirms) → 404 ' +
          '`receipt_message_unknown` with Retry-After: send it again; a repeat of an applied receipt → 200 `applied: false`.',
        params: Type.Object({ provider: Type.String({ maxLength: 20 }) }),
        response: { 200: Type.Object({ received: Type.Boolean(), applied: Type.Boolean() }) },
      },
    },
    async (request) => {
      if (!PROVIDERS.includes(request.params.provider)) throw receiptError('unknown_provider');
      if (typeof request.body !== 'string') {
        throw platformError('unsupported_media_type', 'Receipts are application/json');
      }
      const now = clock.now();
      const receipt = verifyReceipt(settings.receiptSecret, request.body, request.headers, now);
      if (receipt.type !== 'message.delivered') return { received: true, applied: false };
      const at = receipt.data.delivered_at ? new Date(receipt.data.delivered_at) : now;
      const outcome = (await onReceipt(receipt.data.provider_message_id, at)) ?? 'applied';
      // A carrier may report before the send is recorded: a non-2xx makes it send the receipt again.
      if (outcome === 'unknown')
        throw receiptError('receipt_message_unknown', { headers: { 'Retry-After': '2' } });
      return { received: true, applied: outcome === 'applied' };
    },
  );
};
