import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../../platform/errors.ts';
import { serveStatic } from '../../platform/pages/index.ts';
import { CHANNELS } from '../api.ts';
import { inboxRepository } from '../providers/inbox.ts';
import type {
  ChannelStatusView,
  NotificationView,
  NotifyPagesDeps,
  PreferencesPatch,
  PreferencesView,
} from './deps.ts';
import { channelTimeline } from './timeline.ts';
import {
  FIELD_WORDS,
  type FieldError,
  fieldErrors,
  formatTime,
  problemWords,
  reasonWords,
  statusWords,
  TIME_ZONES,
} from './words.ts';

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

  /** Each user's stored zone (UTC for a user without preferences), looked up once per page. */
  const zonesOf = async (userIds: string[]) => {
    const zones = await deps.timeZones([...new Set(userIds)]);
    return (userId: string) => zones.get(userId) ?? 'UTC';
  };

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
      const zoneOf = await zonesOf([
        ...messages.map((m) => m.user_id),
        ...(selected ? [selected.user_id] : []),
      ]);
      const when = (row: { created_at: Date; user_id: string }) => ({
        at: row.created_at.toISOString(),
        when: formatTime(row.created_at, zoneOf(row.user_id)),
      });
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
        messages: messages.map((row) => ({ ...row, href: query(row.id), ...when(row) })),
        selected: selected && { ...selected, ...when(selected) },
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
      const zone = (await zonesOf([notification.user_id]))(notification.user_id);
      return reply.page('/notify/pages/timeline', {
        ...common,
        title: `Notification ${notification.id}`,
        notification,
        zone,
        created: formatTime(notification.created_at, zone),
        channels: notification.channels.map((status) => channelView(notification, status, zone)),
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
          notification: Type.Optional(Type.String({ maxLength: 100 })),
          channel: Type.Optional(ChannelFilter),
          // A problem code, said in words here: the page never shows text a link brought along.
          error: Type.Optional(Type.String({ maxLength: 64, pattern: '^[a-z_]+$' })),
        }),
      },
    },
    async (request, reply) => {
      const { redriven, notification: notificationId, channel } = request.query;
      const items = await deps.listDeadLetters();
      const zoneOf = await zonesOf(items.map((d) => d.user_id));
      // What became of a redrive: the API answered "queued", the worker decides the rest.
      const status =
        redriven && notificationId && channel
          ? (await orNotFound(deps.getNotification(notificationId)))?.channels.find(
              (c) => c.channel === channel,
            )
          : undefined;
      const outcome = redriven ? redriveOutcome(status) : undefined;
      const isIt = (d: { notification_id: string; channel: string }) =>
        d.notification_id === notificationId && d.channel === channel;
      // The worker records the failure before the queue files the message as dead again: until the
      // letter is back, the page's script waits for it, so the list and the notice agree.
      const letterDue = outcome?.tone === 'bad' && DEAD.includes(status?.status ?? '') && !items.some(isIt);
      const watch = outcome?.open || letterDue ? { notification: notificationId, channel } : undefined;
      return reply.page('/notify/pages/dead-letters', {
        ...common,
        title: 'Dead letters',
        scripts: watch ? ['/static/notify/dead-letters.js'] : [],
        items: items.map((d) => ({
          ...d,
          when: formatTime(d.dead_at, zoneOf(d.user_id)),
          reason: reasonWords(d.error),
          failedAgain: outcome?.tone === 'bad' && isIt(d),
        })),
        outcome,
        watch,
        error: request.query.error && problemWords(request.query.error),
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
        const redriven = await deps.redrive(request.params.id);
        const query = new URLSearchParams({
          redriven: redriven.id,
          notification: redriven.notification_id,
          channel: redriven.channel,
        });
        return reply.redirect(`/notify/dead-letters?${query}`, 303);
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        return reply.redirect(`/notify/dead-letters?${new URLSearchParams({ error: error.code })}`, 303);
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
      return reply.page(
        '/notify/pages/preferences',
        preferencesPage(request.params.id, preferences, { saved: request.query.saved === '1' }),
      );
    },
  );

  app.post(
    '/notify/users/:id/preferences',
    {
      config: staff,
      schema: { ...hide, params: Type.Object({ id: UserId }) },
    },
    async (request, reply) => {
      const patch = fromForm(request.body);
      try {
        await deps.updatePreferences(request.params.id, patch);
      } catch (error) {
        const errors = error instanceof AppError ? error.extras.errors : undefined;
        if (!(error instanceof AppError && error.status < 500 && Array.isArray(errors))) throw error;
        // Shown again as sent, each problem at its field (nothing was stored).
        const sent = Object.fromEntries(
          Object.entries(patch).map(([name, value]) => [name, typeof value === 'string' ? value : '']),
        );
        const current = await deps.getPreferences(request.params.id);
        return reply.code(error.status).page(
          '/notify/pages/preferences',
          preferencesPage(
            request.params.id,
            { ...(current as PreferencesView), ...patch },
            {
              errors: fieldErrors(errors as FieldError[], sent),
            },
          ),
        );
      }
      return reply.redirect(
        `/notify/users/${encodeURIComponent(request.params.id)}/preferences?saved=1`,
        303,
      );
    },
  );

  app.get(
    '/notify/users/:id/history',
    {
      config: staff,
      schema: {
        ...hide,
        params: Type.Object({ id: UserId }),
        querystring: Type.Object({ cursor: Type.Optional(Type.String({ maxLength: 200 })) }),
      },
    },
    async (request, reply) => {
      const userId = request.params.id;
      const history = await deps.history(userId, HISTORY_PAGE, request.query.cursor);
      const zone = (await zonesOf([userId]))(userId);
      return reply.page('/notify/pages/history', {
        ...common,
        title: `Notifications of user ${userId}`,
        userId,
        zone,
        notifications: history.notifications.map((n) => ({
          ...n,
          created: formatTime(n.created_at, zone),
          channels: n.channels.map((status) => channelView(n, status, zone)),
        })),
        next: history.next_cursor
          ? `/notify/users/${encodeURIComponent(userId)}/history?${new URLSearchParams({ cursor: history.next_cursor })}`
          : undefined,
      });
    },
  );
};

/** Notifications per page of a user's history. */
const HISTORY_PAGE = 20;

/** One channel's delivery as the pages show it: status and reason in words, times in the user's zone. */
function channelView(notification: NotificationView, status: ChannelStatusView, zone: string) {
  return {
    ...status,
    statusText: statusWords(status.status),
    reason: reasonWords(status.reason),
    events: channelTimeline(notification, status).map((event) => ({
      ...event,
      when: formatTime(event.at, zone),
      detail: event.detail && (reasonWords(event.detail) ?? { text: event.detail }),
    })),
  };
}

const OPEN = ['queued', 'sending', 'scheduled'];
/** A delivery in these ends as a dead letter again; `skipped` (no address, switched off) does not. */
const DEAD = ['failed', 'dead_lettered'];

/**
 * What the dead-letters page says after a redrive. The API only queues the delivery again
 * (`status: queued`); a worker then sends it, and a permanent failure (a refused number, no
 * address) fails again at once and is back in the list. So the page says what the delivery's
 * status says now, and while it is still open, its script watches for the outcome.
 */
export function redriveOutcome(status: ChannelStatusView | undefined): {
  tone: 'ok' | 'bad' | 'info';
  text: string;
  open: boolean;
} {
  if (!status || OPEN.includes(status.status)) {
    return { tone: 'info', text: 'Queued again: a worker sends it shortly.', open: Boolean(status) };
  }
  if (status.status === 'sent' || status.status === 'delivered') {
    return { tone: 'ok', text: `Sent again: ${statusWords(status.status).toLowerCase()}.`, open: false };
  }
  const reason = reasonWords(status.reason)?.text ?? statusWords(status.status);
  return {
    tone: 'bad',
    text: `Sent again — it failed again: ${reason.charAt(0).toLowerCase()}${reason.slice(1)}.`,
    open: false,
  };
}

function preferencesPage(
  userId: string,
  preferences: PreferencesView,
  state: { saved?: boolean; errors?: FieldError[] },
) {
  const zone = preferences.timezone ?? '';
  return {
    ...common,
    title: 'Notification preferences',
    userId,
    preferences,
    saved: state.saved ?? false,
    errors: Object.fromEntries((state.errors ?? []).map((e) => [e.field, e.message])),
    // A stored zone Intl lists under another name (an alias) stays choosable.
    zones: zone && !TIME_ZONES.includes(zone) ? [zone, ...TIME_ZONES] : TIME_ZONES,
    // UTC is what a user who never chose has: the page suggests the browser's zone instead.
    suggestZone: zone === 'UTC',
    words: JSON.stringify(FIELD_WORDS).replaceAll('<', '\\u003c'),
    scripts: ['/static/notify/preferences.js'],
  };
}

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
    in_app_enabled: field('in_app_enabled') === 'on',
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
