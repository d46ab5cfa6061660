import { sql } from 'kysely';
import type { Db } from '../platform/db/index.ts';
import type { Channel, ChannelOutcome, NotificationAccepted, Priority } from './api.ts';
import type { PushSubscription } from './ports.ts';

export type DeliveryStatus = ChannelOutcome | 'sending' | 'sent' | 'delivered' | 'failed' | 'dead_lettered';
export type Lane = 'realtime' | 'batch';

export interface PreferencesRow {
  user_id: string;
  push_enabled: boolean;
  sms_enabled: boolean;
  email_enabled: boolean;
  /** `HH:MM:SS` as PostgreSQL prints a `time`. */
  quiet_hours_start: string | null;
  quiet_hours_end: string | null;
  timezone: string;
  email: string | null;
  phone: string | null;
  locale: string | null;
}

export interface NotificationRow {
  id: string;
  user_id: string;
  client_id: string | null;
  request_hash: string | null;
  type: string;
  priority: Priority;
  lane: Lane;
  batch_id: string | null;
  data: Record<string, unknown>;
  accepted: NotificationAccepted;
  created_at: Date;
}

export interface DeliveryRow {
  notification_id: string;
  channel: Channel;
  user_id: string;
  lane: Lane;
  status: DeliveryStatus;
  reason: string | null;
  content: string | null;
  provider: string | null;
  provider_message_id: string | null;
  attempts: number;
  created_at: Date;
  scheduled_for: Date | null;
  published_at: Date | null;
  sent_at: Date | null;
  delivered_at: Date | null;
}

export interface AttemptRow {
  notification_id: string;
  channel: Channel;
  attempt: number;
  at: Date;
  error: string | null;
  provider: string | null;
}

export type NewDelivery = Pick<DeliveryRow, 'channel' | 'status' | 'reason' | 'scheduled_for'>;

/** SQL only; the rules live in accept.ts and delivery.ts. */
export function createNotifyRepository(db: Db) {
  return {
    async preferences(userId: string): Promise<PreferencesRow | undefined> {
      const { rows } = await sql<PreferencesRow>`select user_id, push_enabled, sms_enabled, email_enabled,
          quiet_hours_start::text as quiet_hours_start, quiet_hours_end::text as quiet_hours_end,
          timezone, email, phone, locale
        from notify_preferences where user_id = ${userId}`.execute(db);
      return rows[0];
    },

    async savePreferences(p: PreferencesRow, now: Date): Promise<void> {
      await sql`insert into notify_preferences (user_id, push_enabled, sms_enabled, email_enabled,
          quiet_hours_start, quiet_hours_end, timezone, email, phone, locale, updated_at)
        values (${p.user_id}, ${p.push_enabled}, ${p.sms_enabled}, ${p.email_enabled}, ${p.quiet_hours_start}::time,
          ${p.quiet_hours_end}::time, ${p.timezone}, ${p.email}, ${p.phone}, ${p.locale}, ${now})
        on conflict (user_id) do update set push_enabled = excluded.push_enabled, sms_enabled = excluded.sms_enabled,
          email_enabled = excluded.email_enabled, quiet_hours_start = excluded.quiet_hours_start,
          quiet_hours_end = excluded.quiet_hours_end, timezone = excluded.timezone, email = excluded.email,
          phone = excluded.phone, locale = excluded.locale, updated_at = excluded.updated_at`.execute(db);
    },

    /** Sets the given addresses only, so a concurrent preference change is not overwritten. */
    async setContact(userId: string, contact: { email?: string; phone?: string }, now: Date): Promise<void> {
      await sql`insert into notify_preferences (user_id, email, phone, updated_at)
        values (${userId}, ${contact.email ?? null}, ${contact.phone ?? null}, ${now})
        on conflict (user_id) do update set email = coalesce(${contact.email ?? null}, notify_preferences.email),
          phone = coalesce(${contact.phone ?? null}, notify_preferences.phone), updated_at = excluded.updated_at`.execute(
        db,
      );
    },

    async subscriptions(userId: string): Promise<PushSubscription[]> {
      const { rows } = await sql<{ endpoint: string; p256dh: string; auth: string }>`
        select endpoint, p256dh, auth from notify_push_subscriptions where user_id = ${userId} order by created_at`.execute(
        db,
      );
      return rows.map((row) => ({ endpoint: row.endpoint, keys: { p256dh: row.p256dh, auth: row.auth } }));
    },

    async addSubscription(userId: string, subscription: PushSubscription, now: Date): Promise<void> {
      await sql`insert into notify_push_subscriptions (user_id, endpoint, p256dh, auth, created_at)
        values (${userId}, ${subscription.endpoint}, ${subscription.keys.p256dh}, ${subscription.keys.auth}, ${now})
        on conflict (user_id, endpoint) do update set p256dh = excluded.p256dh, auth = excluded.auth`.execute(
        db,
      );
    },

    async deleteSubscription(userId: string, endpoint: string): Promise<boolean> {
      const result = await sql`delete from notify_push_subscriptions
        where user_id = ${userId} and endpoint = ${endpoint}`.execute(db);
      return Number(result.numAffectedRows ?? 0n) > 0;
    },

    async byClientId(userId: string, clientId: string): Promise<NotificationRow | undefined> {
      const { rows } = await sql<NotificationRow>`select * from notifications
        where user_id = ${userId} and client_id = ${clientId}`.execute(db);
      return rows[0];
    },

    /**
     * What accepting needs first, in one round trip: the notification stored under the client id
     * (when one is given) and the user's preferences.
     */
    async acceptLookup(
      userId: string,
      clientId: string | null,
    ): Promise<{ earlier?: NotificationRow; prefs?: PreferencesRow }> {
      const { rows } = await sql<{
        earlier: (Omit<NotificationRow, 'created_at'> & { created_at: string }) | null;
        prefs: PreferencesRow | null;
      }>`select (select to_jsonb(n) from notifications n where n.user_id = ${userId} and n.client_id = ${clientId})
            as earlier,
          (select to_jsonb(p) from (select user_id, push_enabled, sms_enabled, email_enabled,
              quiet_hours_start::text as quiet_hours_start, quiet_hours_end::text as quiet_hours_end,
              timezone, email, phone, locale
            from notify_preferences where user_id = ${userId}) p) as prefs`.execute(db);
      const { earlier, prefs } = rows[0];
      return {
        earlier: earlier ? { ...earlier, created_at: new Date(earlier.created_at) } : undefined,
        prefs: prefs ?? undefined,
      };
    },

    /** An id older than the dedup window may be used again: the old record lets go of it. */
    async releaseClientId(id: string): Promise<void> {
      await sql`update notifications set client_id = null where id = ${id}::uuid`.execute(db);
    },

    /**
     * The notification and its deliveries in one statement (a data-modifying CTE), so all of it
     * is stored or none, in one round trip and one commit instead of begin, n + 1 inserts, commit.
     */
    async insert(
      n: Omit<NotificationRow, 'accepted'> & { accepted: NotificationAccepted },
      deliveries: NewDelivery[],
    ) {
      await sql`with n as (
          insert into notifications (id, user_id, client_id, request_hash, type, priority, lane, batch_id,
            data, accepted, created_at)
          values (${n.id}::uuid, ${n.user_id}, ${n.client_id}, ${n.request_hash}, ${n.type}, ${n.priority}, ${n.lane},
            ${n.batch_id}::uuid, ${JSON.stringify(n.data)}::jsonb, ${JSON.stringify(n.accepted)}::jsonb,
            ${n.created_at})
          returning id, user_id, lane, created_at)
        insert into notification_deliveries (notification_id, channel, user_id, lane, status, reason,
          created_at, scheduled_for, updated_at)
        select n.id, d.channel, n.user_id, n.lane, d.status, d.reason, n.created_at, d.scheduled_for, n.created_at
        from n cross join unnest(${deliveries.map((d) => d.channel)}::text[], ${deliveries.map((d) => d.status)}::text[],
          ${deliveries.map((d) => d.reason)}::text[], ${deliveries.map((d) => d.scheduled_for)}::timestamptz[])
          with ordinality as d(channel, status, reason, scheduled_for, position)
        order by d.position`.execute(db);
    },

    async markPublished(notificationId: string, channel: Channel, now: Date): Promise<void> {
      await sql`update notification_deliveries set published_at = ${now}
        where notification_id = ${notificationId}::uuid and channel = ${channel}`.execute(db);
    },

    /** `markPublished` for many deliveries in one statement. */
    async markManyPublished(
      deliveries: { notificationId: string; channel: Channel }[],
      now: Date,
    ): Promise<void> {
      if (deliveries.length === 0) return;
      await sql`update notification_deliveries d set published_at = ${now}
        from unnest(${deliveries.map((x) => x.notificationId)}::uuid[], ${deliveries.map((x) => x.channel)}::text[])
          as m(notification_id, channel)
        where d.notification_id = m.notification_id and d.channel = m.channel`.execute(db);
    },

    /** Deliveries whose message the queue may not have: due schedules and publishes that never confirmed. */
    async unpublished(now: Date, createdBefore: Date, limit: number): Promise<DeliveryRow[]> {
      const { rows } = await sql<DeliveryRow>`select * from notification_deliveries
        where published_at is null and status in ('queued', 'scheduled')
          and coalesce(scheduled_for, created_at) <= ${now}
          and (scheduled_for is not null or created_at <= ${createdBefore})
        order by coalesce(scheduled_for, created_at) limit ${limit}`.execute(db);
      return rows;
    },

    async notification(id: string): Promise<NotificationRow | undefined> {
      if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return undefined;
      const { rows } = await sql<NotificationRow>`select * from notifications where id = ${id}::uuid`.execute(
        db,
      );
      return rows[0];
    },

    async deliveriesOf(ids: string[]): Promise<DeliveryRow[]> {
      if (ids.length === 0) return [];
      const { rows } = await sql<DeliveryRow>`select * from notification_deliveries
        where notification_id in (${sql.join(ids.map((id) => sql`${id}::uuid`))})
        order by array_position(array['push', 'sms', 'email'], channel)`.execute(db);
      return rows;
    },

    async attemptsOf(id: string): Promise<AttemptRow[]> {
      const { rows } = await sql<AttemptRow>`select notification_id, channel, attempt, at, error, provider
        from notification_attempts where notification_id = ${id}::uuid order by id`.execute(db);
      return rows;
    },

    async history(
      userId: string,
      limit: number,
      before?: { at: Date; id: string },
    ): Promise<NotificationRow[]> {
      const { rows } = await sql<NotificationRow>`select * from notifications where user_id = ${userId}
        ${before ? sql`and (created_at, id) < (${before.at}, ${before.id}::uuid)` : sql``}
        order by created_at desc, id desc limit ${limit}`.execute(db);
      return rows;
    },

    async delivery(notificationId: string, channel: Channel): Promise<DeliveryRow | undefined> {
      const { rows } = await sql<DeliveryRow>`select * from notification_deliveries
        where notification_id = ${notificationId}::uuid and channel = ${channel}`.execute(db);
      return rows[0];
    },

    /** What the worker needs in one round trip: the delivery, its notification and the user's preferences. */
    async forSend(
      notificationId: string,
      channel: Channel,
    ): Promise<
      | {
          delivery: DeliveryRow;
          notification: Pick<NotificationRow, 'user_id' | 'type' | 'data'>;
          prefs?: PreferencesRow;
        }
      | undefined
    > {
      const { rows } = await sql<
        DeliveryRow & { type: string; data: Record<string, unknown>; prefs: PreferencesRow | null }
      >`select d.*, n.type, n.data, (select to_jsonb(p) - 'updated_at' from (
            select user_id, push_enabled, sms_enabled, email_enabled, quiet_hours_start::text as quiet_hours_start,
              quiet_hours_end::text as quiet_hours_end, timezone, email, phone, locale
            from notify_preferences where user_id = d.user_id) p) as prefs
        from notification_deliveries d join notifications n on n.id = d.notification_id
        where d.notification_id = ${notificationId}::uuid and d.channel = ${channel}`.execute(db);
      const row = rows[0];
      if (!row) return undefined;
      const { type, data, prefs, ...delivery } = row;
      return { delivery, notification: { user_id: delivery.user_id, type, data }, prefs: prefs ?? undefined };
    },

    async updateDelivery(
      notificationId: string,
      channel: Channel,
      fields: Partial<
        Pick<DeliveryRow, 'status' | 'reason' | 'content' | 'provider' | 'provider_message_id' | 'sent_at'>
      >,
      now: Date,
    ): Promise<void> {
      const sets = Object.entries(fields).map(([column, value]) => sql`${sql.ref(column)} = ${value}`);
      await sql`update notification_deliveries set ${sql.join([...sets, sql`updated_at = ${now}`])}
        where notification_id = ${notificationId}::uuid and channel = ${channel}`.execute(db);
    },

    /**
     * A provider's delivery receipt (for the receipts webhook): `sent` → `delivered`. Returns
     * false for an unknown message; a repeated receipt changes nothing.
     */
    async markDelivered(provider: string | null, providerMessageId: string, at: Date): Promise<boolean> {
      // Provider message ids are unique ids (UUIDs, provider sids); the receipts webhook names the
      // provider kind, not the instance that sent, so `null` matches on the message id alone.
      const result = await sql`update notification_deliveries set status = 'delivered', delivered_at = ${at},
          updated_at = ${at}
        where provider_message_id = ${providerMessageId}
          and (${provider}::text is null or provider = ${provider}) and status in ('sending', 'sent')`.execute(
        db,
      );
      return Number(result.numAffectedRows ?? 0n) > 0;
    },

    /**
     * A successful provider try in one statement: counts and logs the attempt and records the
     * delivery as `sent` (what `recordAttempt` followed by `updateDelivery` did in three).
     */
    async recordSent(
      notificationId: string,
      channel: Channel,
      sent: { at: Date; provider: string; providerMessageId: string; content: string; sentAt: Date },
    ): Promise<void> {
      await sql`with d as (
          update notification_deliveries set attempts = attempts + 1, status = 'sent', reason = null,
            content = ${sent.content}, provider = ${sent.provider}, provider_message_id = ${sent.providerMessageId},
            sent_at = ${sent.sentAt}, updated_at = ${sent.sentAt}
          where notification_id = ${notificationId}::uuid and channel = ${channel} returning attempts)
        insert into notification_attempts (notification_id, channel, attempt, at, error, provider)
        select ${notificationId}::uuid, ${channel}, attempts, ${sent.at}, null, ${sent.provider} from d`.execute(
        db,
      );
    },

    /** Counts a provider try on the delivery and logs it; returns the try's number. */
    async recordAttempt(
      notificationId: string,
      channel: Channel,
      attempt: { at: Date; error: string | null; provider: string | null },
    ): Promise<number> {
      const { rows } = await sql<{
        attempts: number;
      }>`update notification_deliveries set attempts = attempts + 1
        where notification_id = ${notificationId}::uuid and channel = ${channel} returning attempts`.execute(
        db,
      );
      const number = rows[0]?.attempts ?? 0;
      await sql`insert into notification_attempts (notification_id, channel, attempt, at, error, provider)
        values (${notificationId}::uuid, ${channel}, ${number}, ${attempt.at}, ${attempt.error}, ${attempt.provider})`.execute(
        db,
      );
      return number;
    },
  };
}

export type NotifyRepository = ReturnType<typeof createNotifyRepository>;
