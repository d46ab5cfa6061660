import { Counter } from 'prom-client';
import { createOutboundGuard } from '../platform/http/outbound.ts';
import { retentionJob } from '../platform/jobs/retention.ts';
import type { ModuleInstance, PlatformDeps, ServiceModule } from '../platform/module.ts';
import type { Consumer, Queue } from '../platform/queue/index.ts';
import { CHANNELS, type Channel, type NotifyApi } from './api.ts';
import { createDeliveryHandler } from './delivery/handler.ts';
import { createDigestRepository } from './digests/repository.ts';
import { digestRetention } from './digests/retention.ts';
import { digestRoutes } from './digests/routes.ts';
import { createDigests } from './digests/service.ts';
import { createLiveFeed } from './feed/live.ts';
import { createFeedRepository } from './feed/repository.ts';
import { feedRetention } from './feed/retention.ts';
import { feedRoutes } from './feed/routes.ts';
import { createFeedService, type FeedAnnouncement, feedChannel } from './feed/service.ts';
import { notifyMigrations } from './migrations/index.ts';
import { createAccept, IN_PROCESS } from './notifications/accept.ts';
import { createChannelLimits } from './notifications/limits.ts';
import { createOutbox, type DeliveryMessage, topicFor } from './notifications/outbox.ts';
import { createNotifyRepository } from './notifications/repository.ts';
import { notificationRetention } from './notifications/retention.ts';
import { notificationsRoutes } from './notifications/routes.ts';
import { createNotifyService } from './notifications/service.ts';
import { notifyPages } from './pages/routes.ts';
import type { ChannelSender, TemplateRenderer } from './ports.ts';
import { createContactsCache, invalidating } from './preferences/contacts-cache.ts';
import { createPreferencesRepository } from './preferences/repository.ts';
import { preferencesRoutes } from './preferences/routes.ts';
import { checkContact, createPreferencesService } from './preferences/service.ts';
import { unsubscribeRoutes } from './preferences/unsubscribe.ts';
import {
  createChannelSenders,
  inboxRetention,
  providerRoutes,
  type ReceiptOutcome,
} from './providers/index.ts';
import { loadNotifySettings, type NotifySettings } from './settings.ts';
import { templateRoutes } from './templates/routes.ts';
import { createTemplateRenderer } from './templates/service.ts';

/** Test doubles a test passes to the factory (test/support/notify.ts); production uses none. */
export interface NotifyModuleOptions {
  templates?: TemplateRenderer;
  senders?: Record<Channel, ChannelSender>;
}

/** Notifications (README.md): accept → outbox → per-channel queues → workers → providers. */
export function createNotifyModule(doubles: NotifyModuleOptions = {}): ServiceModule {
  return { name: 'notify', migrations: notifyMigrations, create: (deps) => createNotify(deps, doubles) };
}

export const notifyModule = createNotifyModule();

async function createNotify(deps: PlatformDeps, doubles: NotifyModuleOptions): Promise<ModuleInstance> {
  const settings = loadNotifySettings(deps.config.env);
  const log = deps.log.child({ module: 'notify' });
  const { clock, queue } = deps;
  const db = deps.database.db;
  const templateStore = createTemplateRenderer(db, { currency: settings.currency });
  const templates = doubles.templates ?? templateStore;
  const contacts = createContactsCache({ pubsub: deps.pubsub, log });
  await contacts.ready;
  const repo = createNotifyRepository(db, { prepare: deps.database.kind === 'postgres' });
  const preferencesRepo = invalidating(createPreferencesRepository(db), contacts);
  // Push endpoints are client-given URLs: checked when subscribed and again at every send.
  const outbound = createOutboundGuard({ allow: settings.outboundAllow });
  // Receipts name the provider kind, not the instance that sent: match on the message id.
  const onReceipt = async (providerMessageId: string, deliveredAt: Date): Promise<ReceiptOutcome> => {
    if (await repo.markDelivered(null, providerMessageId, deliveredAt)) return 'applied';
    return (await repo.knowsProviderMessage(providerMessageId)) ? 'already' : 'unknown';
  };
  // The in-app feed's news reaches every API process's live streams through the platform pub/sub
  // (Redis when configured), as parking's boards do; a lost one is caught by the streams' reads.
  const announce = (userId: string, message: FeedAnnouncement) =>
    deps.pubsub.publish(feedChannel(userId), message).catch((error: unknown) => {
      log.warn({ err: error, userId }, 'feed announcement not published');
    });
  const senders =
    doubles.senders ??
    createChannelSenders({
      ...deps,
      onReceipt,
      onSubscriptionGone: (userId, endpoint) =>
        preferencesRepo.deleteSubscription(userId, endpoint).then(() => {}),
      outbound,
      announceFeed: (userId, seq) => announce(userId, { kind: 'item', seq }),
    });
  const limits = createChannelLimits({ limiter: deps.limiter, clock, settings });
  const outbox = createOutbox({ repo, queue, clock, log, republishAfterMs: settings.republishAfterMs });
  const digests = createDigests({ repo: createDigestRepository(db), clock, log });
  await digests.ready;
  const accept = createAccept({
    repo,
    templates,
    limits,
    outbox,
    clock,
    contacts,
    marketingTypes: settings.marketingTypes,
    sendAtMaxMs: settings.sendAtMaxMs,
    digests,
  });
  const service = createNotifyService({ repo, accept, templates, queue, clock });
  const feedRepo = createFeedRepository(db);
  const feed = createFeedService({ repo: feedRepo, clock, announce });
  const live = createLiveFeed({
    pubsub: deps.pubsub,
    sse: deps.sse,
    repo: feedRepo,
    log,
    pollMs: settings.feedPollMs,
  });
  const preferences = createPreferencesService({
    repo: preferencesRepo,
    clock,
    outbound,
    maxPushSubscriptions: settings.maxPushSubscriptions,
  });
  const handle = createDeliveryHandler({
    repo,
    templates,
    senders,
    clock,
    log,
    retryDelaysMs: settings.retryDelaysMs,
    counter: deliveriesCounter(deps),
    batchLingerMs: settings.workerLingerMs,
    marketingTypes: settings.marketingTypes,
  });
  for (const lane of ['realtime', 'batch'] as const) {
    for (const channel of CHANNELS) deps.metrics.watchQueueDepth(topicFor(lane, channel));
  }

  const api: NotifyApi = {
    send: (request, options) => service.send(request, { ...options, sender: IN_PROCESS }),
    cancel: (request) => service.cancelByClientId(request.user_id, request.id),
    async setContact(userId, contact) {
      checkContact(userId, contact);
      await preferencesRepo.setContact(userId, contact, clock.now());
    },
  };
  return {
    api,
    async routes(app) {
      const { env, secret } = deps.config;
      await app.register(notificationsRoutes, { service });
      await app.register(preferencesRoutes, { preferences, limits });
      await app.register(feedRoutes, { feed, live });
      await app.register(unsubscribeRoutes, { secret, repo: preferencesRepo, clock });
      await app.register(digestRoutes, { digests });
      await app.register(templateRoutes, { db, renderer: templateStore, clock });
      await app.register(providerRoutes, { env, secret, db, clock, onReceipt });
      await app.register(notifyPages, {
        db,
        getNotification: (id) => service.status(id),
        listDeadLetters: () => service.deadLetters(100),
        redrive: (id) => service.redrive(id),
        history: (userId, limit, cursor) => service.history(userId, limit, cursor),
        timeZones: (userIds) => preferencesRepo.timeZones(userIds),
        getPreferences: (userId) => preferences.get(userId),
        // The form has no "no time zone": an empty one keeps the current zone.
        updatePreferences: (userId, { timezone, ...patch }) =>
          preferences.update(userId, timezone ? { ...patch, timezone } : patch),
      });
    },
    startWorkers: () => startConsumers(queue, settings, handle),
    jobs: [
      {
        // Scheduled sends that are due, and publishes that never reached the queue (notifications/outbox.ts).
        name: 'notify.publish_due',
        schedule: '*/10 * * * * *',
        run: () => outbox.publishDue().then(() => {}),
      },
      {
        // Digest windows that are due become one message each (digests/service.ts).
        name: 'notify.digests',
        schedule: '*/10 * * * * *',
        run: () => digests.flushDue(accept).then(() => {}),
      },
      // Every minute, so each run is a few batches: a day's 30-day-old notifications spread
      // over the day rather than an hour's worth at once (README.md, "Retention").
      retentionJob(
        'notify.retention',
        '* * * * *',
        [
          notificationRetention(db, settings.retentionMs, clock),
          digestRetention(db, settings.retentionMs, clock),
          ...feedRetention(db, {
            keepMs: settings.feedRetentionMs,
            archivedKeepMs: settings.feedArchivedRetentionMs,
            clock,
          }),
          inboxRetention(db),
        ],
        { clock, metrics: deps.metrics },
      ),
    ],
    async health() {
      const states = Object.values(senders).flatMap((sender) => sender.states());
      const open = states.filter((s) => s.state !== 'closed');
      return { notify_providers: { status: open.length ? 'degraded' : 'ok', breakers: states } };
    },
    async close() {
      digests.close();
      await Promise.all([...Object.values(senders).map((sender) => sender.close()), contacts.close()]);
    },
  };
}

function deliveriesCounter(deps: PlatformDeps) {
  return new Counter({
    name: 'notify_deliveries_total',
    help: 'Notification delivery status changes by channel and status',
    labelNames: ['channel', 'status'] as const,
    registers: [deps.metrics.registry],
  });
}

/** Batch topics get their own, smaller consumers: a marketing blast never queues ahead of real-time. */
function startConsumers(
  queue: Queue,
  settings: NotifySettings,
  handle: ReturnType<typeof createDeliveryHandler>,
): Consumer[] {
  const consumers: Consumer[] = [];
  for (const channel of CHANNELS) {
    for (const [lane, concurrency] of [
      ['realtime', settings.realtimeConcurrency],
      ['batch', settings.batchConcurrency],
    ] as const) {
      const group = lane === 'batch' ? `notify-batch-${channel}` : `notify-${channel}`;
      consumers.push(
        queue.consume<DeliveryMessage>(
          topicFor(lane, channel),
          { group, retryDelaysMs: settings.retryDelaysMs, concurrency },
          handle,
        ),
      );
    }
  }
  return consumers;
}
