import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../../platform/errors.ts';
import { serveStatic } from '../../platform/pages/index.ts';
import { CHANNELS } from '../api.ts';
import { inboxRepository } from '../providers/inbox.ts';
import type { NotifyPagesDeps, PreferencesPatch } from './deps.ts';
import { channelTimeline } from './timeline.ts';

export type * from './deps.ts';

const hide = { hide: true };
/**
 * The console shows every user's messages, preferences and deliveries: admins only (an admin page
 * session; development signs the admin in by itself, production asks at /sign-in).
 */
const staff = { access: { admin: true } } as const;
/** The landing page and its lookup forms show nothing stored: anyone (the lookups lead to staff pages). */
const anyone = { access: { public: true } } as const;
const common = { styles: ['/static/notify/notify.css'] };
/** A channel, or '' for every channel (the form's first option). */
const ChannelFilter = Type.Union([
  Type.Literal(''),
  Type.Literal('push'),
  Type.Literal('sms'),
  Type.Literal('email'),
]);
const UserId = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' });

/** The notification pages: landing, dev inbox, a notification's timeline, dead letters, preferences. */
export const notifyPages: FastifyPluginAsyncTypebox<NotifyPagesDeps> = async (app, deps) => {
  serveStatic(app, 'notify', new URL('./static/', import.meta.url));
  const inbox = inboxRepository(deps.db);
  const notFound = (reply: FastifyReply, title: string, message: string) =>
    reply.code(404).page('/platform/pages/message', {
      title,
      message,
      tone: 'bad',
      link: { href: '/notify', title: 'Back to notifications' },
    });

  app.get('/notify', { config: anyone, schema: hide }, async (_request, reply) =>
    reply.page('/notify/pages/index', { ...common, title: 'Notifications' }),
  );

  // The feed page shows nothing stored by itself: its script reads the browser's own guest
  // identity and calls the feed API with that user's token.
  app.get('/notify/feed', { config: anyone, schema: hide }, async (_request, reply) =>
    reply.page('/notify/pages/feed', {
      ...common,
      title: 'Your notifications',
      scripts: ['/static/notify/notification-feed.js', '/static/notify/feed-page.js'],
    }),
  );

  /** The dev inbox's filter: one user, one channel. */
  const inboxFilter = {
    user: Type.Optional(Type.String({ maxLength: 64 })),
    channel: Type.Optional(ChannelFilter),
  };

  app.get(
    '/notify/inbox',
    {
      config: staff,
      schema: {
        ...hide,
        querystring: Type.Object({ ...inboxFilter, message: Type.Optional(Type.String({ format: 'uuid' })) }),
      },
    },
    async (request, reply) => {
      const { user, message } = request.query;
      const channel = request.query.channel || undefined;
      const messages = await inbox.list({ userId: user || undefined, channel, limit: 200 });
      const selected = message ? await inbox.get(message) : undefined;
      const query = (id: string) =>
        `/notify/inbox?${new URLSearchParams({ ...(user ? { user } : {}), ...(channel ? { channel } : {}), message: id })}`;
      const filter = new URLSearchParams({ ...(user ? { user } : {}), ...(channel ? { channel } : {}) });
      return reply.page('/notify/pages/inbox', {
        ...common,
        title: 'Dev inbox',
        scripts: ['/static/notify/inbox.js'],
        newest: messages[0]?.id ?? '',
        pollUrl: `/notify/inbox/newest?${filter}`,
        refreshUrl: `/notify/inbox?${filter}`,
        user: user ?? '',
        channel: channel ?? '',
        channels: CHANNELS,
        messages: messages.map((row) => ({ ...row, href: query(row.id), at: row.created_at.toISOString() })),
        selected: selected && { ...selected, at: selected.created_at.toISOString() },
      });
    },
  );

  // Polled by the inbox page (a mail catcher shows new mail without a reload): the newest message id.
  app.get(
    '/notify/inbox/newest',
    {
      config: staff,
      schema: {
        ...hide,
        querystring: Type.Object(inboxFilter),
      },
    },
    async (request, reply) => {
      const [newest] = await inbox.list({
        userId: request.query.user || undefined,
        channel: request.query.channel || undefined,
        limit: 1,
      });
      return reply.header('cache-control', 'no-store').send({ id: newest?.id ?? null });
    },
  );

  // The landing page's lookup forms: each sends one field and lands on the page it names.
  const lookup = (path: string, field: string, maxLength: number, target: (value: string) => string) =>
    app.get(
      path,
      {
        config: anyone,
        schema: { ...hide, querystring: Type.Object({ [field]: Type.Optional(Type.String({ maxLength })) }) },
      },
      async (request, reply) => {
        const value = request.query[field]?.trim();
        return reply.redirect(value ? target(encodeURIComponent(value)) : '/notify', 303);
      },
    );
  lookup('/notify/notifications', 'id', 100, (id) => `/notify/notifications/${id}`);
  lookup('/notify/users', 'user', 64, (user) => `/notify/users/${user}/preferences`);

  app.get(
    '/notify/notifications/:id',
    {
      config: staff,
      schema: { ...hide, params: Type.Object({ id: Type.String({ maxLength: 100 }) }) },
    },
    async (request, reply) => {
      const notification = await orNotFound(deps.getNotification(request.params.id));
      if (!notification)
        return notFound(reply, 'Notification not found', `No notification ${request.params.id}.`);
      return reply.page('/notify/pages/timeline', {
        ...common,
        title: `Notification ${notification.id}`,
        notification,
        channels: notification.channels.map((status) => ({
          ...status,
          events: channelTimeline(notification, status),
        })),
      });
    },
  );

  app.get(
    '/notify/dead-letters',
    {
      config: staff,
      schema: {
        ...hide,
        querystring: Type.Object({
          redriven: Type.Optional(Type.String({ maxLength: 100 })),
          error: Type.Optional(Type.String({ maxLength: 300 })),
        }),
      },
    },
    async (request, reply) => {
      return reply.page('/notify/pages/dead-letters', {
        ...common,
        title: 'Dead letters',
        items: await deps.listDeadLetters(),
        redriven: request.query.redriven,
        error: request.query.error,
      });
    },
  );

  // A plain form post (CSP allows form-action 'self'), so the button works without JavaScript.
  app.post(
    '/notify/dead-letters/:id/redrive',
    {
      config: staff,
      schema: { ...hide, params: Type.Object({ id: Type.String({ maxLength: 100 }) }) },
    },
    async (request, reply) => {
      try {
        await deps.redrive(request.params.id);
        return reply.redirect(
          `/notify/dead-letters?${new URLSearchParams({ redriven: request.params.id })}`,
          303,
        );
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        return reply.redirect(`/notify/dead-letters?${new URLSearchParams({ error: error.message })}`, 303);
      }
    },
  );

  app.get(
    '/notify/users/:id/preferences',
    {
      config: staff,
      schema: {
        ...hide,
        params: Type.Object({ id: UserId }),
        querystring: Type.Object({ saved: Type.Optional(Type.String({ maxLength: 1 })) }),
      },
    },
    async (request, reply) => {
      const preferences = await orNotFound(deps.getPreferences(request.params.id));
      if (!preferences)
        return notFound(reply, 'User not found', `No preferences for user ${request.params.id}.`);
      return reply.page('/notify/pages/preferences', {
        ...common,
        title: 'Notification preferences',
        userId: request.params.id,
        preferences,
        saved: request.query.saved === '1',
        scripts: ['/static/notify/preferences.js'],
      });
    },
  );

  app.post(
    '/notify/users/:id/preferences',
    {
      config: staff,
      schema: { ...hide, params: Type.Object({ id: UserId }) },
    },
    async (request, reply) => {
      await deps.updatePreferences(request.params.id, fromForm(request.body));
      return reply.redirect(
        `/notify/users/${encodeURIComponent(request.params.id)}/preferences?saved=1`,
        303,
      );
    },
  );
};

/** A 404 AppError from the core reads as "not there" (the page answers 404 itself). */
async function orNotFound<T>(promise: Promise<T | undefined>): Promise<T | undefined> {
  try {
    return await promise;
  } catch (error) {
    if (error instanceof AppError && error.status === 404) return undefined;
    throw error;
  }
}

/**
 * An HTML form sends only checked boxes and empty strings for cleared fields. The time zone is
 * required by the API, so an empty one is left out rather than cleared.
 */
export function fromForm(body: unknown): PreferencesPatch {
  const field = (name: string) => {
    const value =
      body !== null && typeof body === 'object' ? (body as Record<string, unknown>)[name] : undefined;
    return typeof value === 'string' ? value : '';
  };
  const text = (name: string) => field(name).trim() || null;
  const patch: PreferencesPatch = {
    push_enabled: field('push_enabled') === 'on',
    sms_enabled: field('sms_enabled') === 'on',
    email_enabled: field('email_enabled') === 'on',
    quiet_hours_start: text('quiet_hours_start'),
    quiet_hours_end: text('quiet_hours_end'),
    email: text('email'),
    phone: text('phone'),
    locale: text('locale'),
  };
  const timezone = text('timezone');
  if (timezone) patch.timezone = timezone;
  return patch;
}
