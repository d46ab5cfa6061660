import { sql } from 'kysely';
import { isUniqueViolation } from '../../platform/db/errors.ts';
import { createGroup } from '../../platform/db/group.ts';
import type { Db } from '../../platform/db/index.ts';
import { createStatements } from '../../platform/db/prepared.ts';
import type { Channel, NotificationAccepted } from '../api.ts';
import type { PushSubscription, StoredMessage } from '../ports.ts';
import type { AttemptRow, DeliveryRow, NotificationRow, NotifyDb, PreferencesRow } from '../tables.ts';

export type NewDelivery = Pick<DeliveryRow, 'channel' | 'status' | 'reason' | 'scheduled_for'>;
export type NewNotification = Omit<NotificationRow, 'accepted' | 'request_hash'> & {
  accepted: NotificationAccepted;
  /** Called while the statement is built, for each of its rows in turn (accept.ts, `requestHash`). */
  request_hash: () => string;
};

export interface AcceptLookupInput {
  userId: string;
  clientId: string | null;
  withSubscriptions: boolean;
}

export interface ClaimInput {
  notificationId: string;
  channel: Channel;
  now: Date;
  /**
   * Set `sending` on an open and due delivery (the default). A delivery whose provider is local
   * (the dev inbox) is only read: the statement that stores its message records it, at once.
   */
  mark?: boolean;
}

export interface Claimed {
  /** What the worker decides on (the claim reads no more: each column is parsed per message). */
  delivery: Pick<DeliveryRow, 'notification_id' | 'channel' | 'user_id' | 'status' | 'scheduled_for'>;
  notification: Pick<NotificationRow, 'user_id' | 'type' | 'data'>;
  prefs?: PreferencesRow;
  subscriptions: PushSubscription[];
  /** Set to `sending` by this claim: it was open and due (and the claim was to mark it). */
  claimed: boolean;
}

interface SentInput {
  notificationId: string;
  channel: Channel;
  provider: string;
  providerMessageId: string;
  content: string;
  sentAt: Date;
}

interface ReceiptInput {
  provider: string | null;
  providerMessageId: string;
  at: Date;
}

export interface AcceptLookup {
  earlier?: NotificationRow;
  prefs?: PreferencesRow;
  subscriptions: PushSubscription[];
}

/** SQL only; the rules live in accept.ts and delivery/handler.ts. */
export function createNotifyRepository(database: Db, options: { prepare?: boolean } = {}) {
  const db: NotifyDb = database.withTables();
  const statements = createStatements(database, options.prepare ?? false);
  const run = statements.query;
  async function acceptLookups(inputs: AcceptLookupInput[]): Promise<AcceptLookup[]> {
    // The keys as a jsonb document, not arrays: PostgreSQL sizes `unnest` of an array parameter by
    // its value, so the prepared statement never settled on a generic plan and was planned again
    // on every call (longer than it took to run); a document's row count is a fixed estimate, so
    // after five calls the generic plan is kept.
    const keys = inputs.map((i) => [i.userId, i.clientId, i.withSubscriptions]);
    // Raw SQL: a batch of keys as one jsonb document with per-key subqueries, run as a named prepared statement.
    const rows = await run(
      'notify_accept_lookup',
      sql<{
        earlier: (Omit<NotificationRow, 'created_at'> & { created_at: string }) | null;
        prefs: PreferencesRow | null;
        subscriptions: { endpoint: string; p256dh: string; auth: string }[] | null;
      }>`select
          (select to_jsonb(n) from notifications n where n.user_id = k.user_id and n.client_id = k.client_id)
            as earlier,
          (select to_jsonb(p) from (select user_id, push_enabled, sms_enabled, email_enabled, in_app_enabled,
              email_marketing_enabled, quiet_hours_start::text as quiet_hours_start, quiet_hours_end::text as quiet_hours_end,
              timezone, email, phone, locale, version
            from notify_preferences where user_id = k.user_id) p) as prefs,
          case when k.push then (select coalesce(jsonb_agg(jsonb_build_object('endpoint', s.endpoint,
              'p256dh', s.p256dh, 'auth', s.auth) order by s.created_at), '[]'::jsonb)
            from notify_push_subscriptions s where s.user_id = k.user_id) end as subscriptions
        from (select r->>0 as user_id, r->>1 as client_id, (r->>2)::boolean as push, position
          from jsonb_array_elements(${JSON.stringify(keys)}::jsonb) with ordinality as t(r, position)) k
        order by k.position`,
    );
    return rows.map(({ earlier, prefs, subscriptions }) => ({
      earlier: earlier ? { ...earlier, created_at: new Date(earlier.created_at) } : undefined,
      prefs: prefs ?? undefined,
      subscriptions: (subscriptions ?? []).map((s) => ({
        endpoint: s.endpoint,
        keys: { p256dh: s.p256dh, auth: s.auth },
      })),
    }));
  }
  const acceptLookupGroup = createGroup<AcceptLookupInput, AcceptLookup>({
    one: async (input) => (await acceptLookups([input]))[0],
    many: acceptLookups,
  });

  /** Which of the notifications were stored: one whose client id is taken is not (nor its deliveries). */
  async function insertNotifications(items: { n: NewNotification; deliveries: NewDelivery[] }[]) {
    // The rows as one JSON document (JSON.stringify is native; pg escaped the elements of a text[]
    // per column in JavaScript), each row an array with its deliveries inside: jsonb is parsed
    // once (json was parsed again for each jsonb column), holds no key names to sort, and one
    // document is parsed instead of two. Times go as ISO strings: a Date sends JSON.stringify off
    // its fast path.
    const rows = items.map(({ n, deliveries }) => [
      n.id,
      n.user_id,
      n.client_id,
      n.request_hash(),
      n.type,
      n.priority,
      n.lane,
      n.batch_id,
      n.data,
      n.accepted,
      n.created_at.toISOString(),
      deliveries.map((d) => [d.channel, d.status, d.reason, d.scheduled_for?.toISOString() ?? null]),
      n.sent_by,
    ]);
    const document = JSON.stringify(rows);
    // A plain insert first: a taken client id fails the whole statement, and the same rows go
    // again with the client id's index as the arbiter, which skips the taken ones. Nearly every
    // statement holds no replay, and the arbiter's search before each row is a second descent of
    // that index per row; a statement that meets a replay pays for both.
    let stored: { missing: string[] }[];
    // Raw SQL: notifications and their deliveries from one jsonb document in one data-modifying CTE
    // (INSERT_NEW), run as a named prepared statement.
    try {
      stored = await statements.text<{ missing: string[] }>('notify_insert', INSERT_NEW, [document]);
    } catch (error) {
      if (!isUniqueViolation(error, 'notifications_client_id')) throw error;
      stored = await statements.text<{ missing: string[] }>('notify_insert_arbiter', INSERT_SKIPPING_TAKEN, [
        document,
      ]);
    }
    // One row naming the notifications not stored (nearly always none) rather than a row per
    // stored one: the API would parse a result row per notification to learn that all were stored.
    const missing = stored[0]?.missing ?? [];
    if (missing.length === 0) return items.map(() => true);
    const skipped = new Set(missing);
    return items.map(({ n }) => !skipped.has(n.id));
  }
  const insertGroup = createGroup<{ n: NewNotification; deliveries: NewDelivery[] }, boolean>({
    one: async (item) => (await insertNotifications([item]))[0],
    many: insertNotifications,
    // Two requests with one client id never share a statement: the second must see the first.
    key: ({ n }) => (n.client_id === null ? n.id : `${n.user_id}\n${n.client_id}`),
    // One insert at a time: the accepts arriving meanwhile wait for it and share the next one, so
    // statements and commits per accept fall as the load rises.
    maxInFlight: 1,
  });

  async function claimMany(inputs: ClaimInput[]): Promise<(Claimed | undefined)[]> {
    // Raw SQL: a batch claim (unnest with ordinality, an update CTE joined back to the reads), prepared.
    const rows = await run(
      'notify_claim_marking',
      sql<
        Claimed['delivery'] & {
          position: string;
          type: string;
          data: Record<string, unknown>;
          prefs: PreferencesRow | null;
          subscriptions: { endpoint: string; p256dh: string; auth: string }[] | null;
          claimed: boolean;
        }
      >`with k as (
          select * from unnest(${inputs.map((i) => i.notificationId)}::uuid[], ${inputs.map((i) => i.channel)}::text[],
            ${inputs.map((i) => i.now)}::timestamptz[], ${inputs.map((i) => i.mark ?? true)}::boolean[])
            with ordinality as k(notification_id, channel, now, mark, position)),
        claimed as (
          update notification_deliveries d set status = 'sending', updated_at = k.now,
            published_at = coalesce(d.published_at, k.now)
          from k where k.mark and d.notification_id = k.notification_id and d.channel = k.channel
            and d.status in ('queued', 'scheduled', 'sending') and (d.scheduled_for is null or d.scheduled_for <= k.now)
          returning d.notification_id, d.channel)
        select k.position, d.notification_id, d.channel, d.user_id, d.status, d.scheduled_for, n.type, n.data,
          (claimed.notification_id is not null) as claimed,
          (select to_jsonb(p) from (
            select user_id, push_enabled, sms_enabled, email_enabled, in_app_enabled, email_marketing_enabled,
              quiet_hours_start::text as quiet_hours_start,
              quiet_hours_end::text as quiet_hours_end, timezone, email, phone, locale
            from notify_preferences where user_id = d.user_id) p) as prefs,
          case when d.channel = 'push' then (select coalesce(jsonb_agg(jsonb_build_object('endpoint', s.endpoint,
              'p256dh', s.p256dh, 'auth', s.auth) order by s.created_at), '[]'::jsonb)
            from notify_push_subscriptions s where s.user_id = d.user_id) end as subscriptions
        from k join notification_deliveries d on d.notification_id = k.notification_id and d.channel = k.channel
          join notifications n on n.id = d.notification_id
          left join claimed on claimed.notification_id = k.notification_id and claimed.channel = k.channel`,
    );
    const byPosition = new Map(rows.map((row) => [Number(row.position), row]));
    return inputs.map((_, i) => {
      const row = byPosition.get(i + 1);
      if (!row) return undefined;
      const { position: _p, type, data, prefs, subscriptions, claimed, ...delivery } = row;
      return {
        // The row as it was before this claim (the statement's snapshot): `status` is the old one.
        delivery,
        notification: { user_id: delivery.user_id, type, data },
        prefs: prefs ?? undefined,
        subscriptions: (subscriptions ?? []).map((s) => ({
          endpoint: s.endpoint,
          keys: { p256dh: s.p256dh, auth: s.auth },
        })),
        claimed,
      };
    });
  }
  const claimGroup = createGroup<ClaimInput, Claimed | undefined>({
    one: async (input) => (await claimMany([input]))[0],
    many: claimMany,
    key: (input) => `${input.notificationId}:${input.channel}`,
  });

  // Statements that join a batch given as JSON to the deliveries also name the ids as an array:
  // PostgreSQL guesses 100 rows for `json_to_recordset`, and against a table of a few thousand
  // deliveries its generic plan then scanned the whole table for every batch; `= any(array(...))`
  // makes it probe the primary key.
  //
  // A successful try is counted (`attempts`) but not logged as a row: the delivery's own columns
  // (`sent_at`, `provider`) describe it, and the status view lists it from them (service.ts `withSuccesses`).
  // The row was an insert and two index entries per delivery, for what the delivery already says.
  async function recordSentMany(inputs: SentInput[]): Promise<void> {
    // Raw SQL: a batch update from json_to_recordset, prepared.
    await run(
      'notify_record_sent_json',
      sql`with s as (
          select * from json_to_recordset(${JSON.stringify(inputs)}::json)
            as s("notificationId" uuid, channel text, provider text, "providerMessageId" text, content text,
              "sentAt" timestamptz))
        update notification_deliveries d set attempts = d.attempts + 1, status = 'sent', reason = null,
          content = s.content, provider = s.provider, provider_message_id = s."providerMessageId",
          sent_at = s."sentAt", updated_at = s."sentAt"
        from s where d.notification_id = any(array(select "notificationId" from s))
          and d.notification_id = s."notificationId" and d.channel = s.channel`,
    );
  }
  const recordSentGroup = createGroup<SentInput, void>({
    one: (input) => recordSentMany([input]),
    many: async (inputs) => {
      await recordSentMany(inputs);
      return inputs.map(() => undefined);
    },
    key: (input) => `${input.notificationId}:${input.channel}`,
  });

  /**
   * The local provider's send (the dev inbox): each message's row is stored and its delivery
   * recorded as delivered — the inbox holding it is its delivery — in one statement, for deliveries
   * still open. A delivery an earlier copy of its queue message settled stores nothing, so a message
   * is stored once however often it comes; one already in the inbox (stored by `send`, the
   * fallback's path, before a crash) is not stored again. With `versions` (a message rendered from
   * what the accept knew, outbox.ts), a message is stored only while its user's preferences still
   * have that write count: the address, locale and zone it was rendered with, the switch that let
   * it through. Answers the delivery ids recorded. The delivery keeps neither the text (the inbox
   * row has it) nor the provider's message id (no receipt will look for it): each was another copy
   * in the row, and the id one more index entry.
   */
  async function deliverLocally(
    provider: string,
    rows: StoredMessage[],
    versions?: (number | null)[],
  ): Promise<Set<string>> {
    const input = versions ? rows.map((row, i) => ({ ...row, version: versions[i] })) : rows;
    // Raw SQL: an update CTE and the inbox insert it gates, from one JSON document, prepared.
    const recorded = await run(
      'notify_deliver_locally_checked',
      sql<{ delivery_id: string }>`with m as (
          select * from json_to_recordset(${JSON.stringify(input)}::json)
            as m(id uuid, delivery_id text, notification_id uuid, channel text, type text, user_id text,
              address text, subject text, text text, html text, provider_message_id text, created_at timestamptz,
              version integer)),
        d as (
          update notification_deliveries d set status = 'delivered', attempts = d.attempts + 1, reason = null,
            provider = ${provider}, sent_at = m.created_at, delivered_at = m.created_at, updated_at = m.created_at,
            published_at = coalesce(d.published_at, m.created_at)
          from m where d.notification_id = any(array(select notification_id from m))
            and d.notification_id = m.notification_id and d.channel = m.channel
            and d.status in ('queued', 'scheduled', 'sending')
            and (m.version is null or exists (select from notify_preferences p
              where p.user_id = d.user_id and p.version = m.version))
          returning d.notification_id, d.channel),
        stored as (
          insert into notify_inbox (id, delivery_id, notification_id, channel, type, user_id, address, subject,
            text, html, provider_message_id, created_at)
          select m.id, m.delivery_id, m.notification_id, m.channel, m.type, m.user_id, m.address, m.subject,
            m.text, m.html, m.provider_message_id, m.created_at
          from m join d on d.notification_id = m.notification_id and d.channel = m.channel
          on conflict (delivery_id) do nothing)
        select m.delivery_id from m join d on d.notification_id = m.notification_id and d.channel = m.channel`,
    );
    return new Set(recorded.map((row) => row.delivery_id));
  }

  async function markDeliveredMany(inputs: ReceiptInput[]): Promise<boolean[]> {
    // Provider message ids are unique ids (UUIDs, provider sids); the receipts webhook names the
    // provider kind, not the instance that sent, so `null` matches on the message id alone.
    // Raw SQL: a batch update from unnest with ordinality, answering each input's position; prepared.
    const rows = await run(
      'notify_mark_delivered',
      sql<{ position: string }>`with r as (
          select * from unnest(${inputs.map((i) => i.provider)}::text[], ${inputs.map((i) => i.providerMessageId)}::text[],
            ${inputs.map((i) => i.at)}::timestamptz[]) with ordinality as r(provider, provider_message_id, at, position))
        update notification_deliveries d set status = 'delivered', delivered_at = r.at, updated_at = r.at
        from r where d.provider_message_id = r.provider_message_id
          and (r.provider is null or d.provider = r.provider) and d.status in ('sending', 'sent')
        returning r.position`,
    );
    const done = new Set(rows.map((row) => Number(row.position)));
    return inputs.map((_, i) => done.has(i + 1));
  }
  const markDeliveredGroup = createGroup<ReceiptInput, boolean>({
    one: async (input) => (await markDeliveredMany([input]))[0],
    many: markDeliveredMany,
    key: (input) => input.providerMessageId,
  });

  return {
    async byClientId(userId: string, clientId: string): Promise<NotificationRow | undefined> {
      return db
        .selectFrom('notifications')
        .selectAll()
        .where('user_id', '=', userId)
        .where('client_id', '=', clientId)
        .executeTakeFirst();
    },

    /**
     * What accepting needs first, in one round trip: the notification stored under the client id
     * (when one is given), the user's preferences and, when push is asked for, the push
     * subscriptions. Concurrent accepts share one query (group commit, `createGroup`).
     */
    acceptLookup: (input: AcceptLookupInput) => acceptLookupGroup(input),
    /** An id older than the dedup window may be used again: the old record lets go of it. */
    async releaseClientId(id: string): Promise<void> {
      await db.updateTable('notifications').set({ client_id: null }).where('id', '=', id).execute();
    },

    /**
     * The notification and its deliveries in one statement (a data-modifying CTE), so all of it
     * is stored or none. Concurrent accepts share the statement, its round trip and its commit
     * (group commit); when the shared statement fails, each accept is tried alone, so one bad
     * row fails only its own request. False when the client id is taken (nothing stored).
     */
    insert: (n: NewNotification, deliveries: NewDelivery[]) => insertGroup({ n, deliveries }),
    /** The queue has these deliveries' messages (the claim marks the rest, see outbox.ts). */
    async markManyPublished(
      deliveries: { notificationId: string; channel: Channel }[],
      now: Date,
    ): Promise<void> {
      if (deliveries.length === 0) return;
      // Raw SQL: a batch update joined to unnest of two arrays, prepared.
      await run(
        'notify_mark_published',
        sql`update notification_deliveries d set published_at = ${now}
        from unnest(${deliveries.map((x) => x.notificationId)}::uuid[], ${deliveries.map((x) => x.channel)}::text[])
          as m(notification_id, channel)
        where d.notification_id = m.notification_id and d.channel = m.channel`,
      );
    },

    /** Deliveries neither a claim nor the sweep has marked: due schedules, publishes lost or still queued. */
    async unpublished(now: Date, createdBefore: Date, limit: number): Promise<DeliveryRow[]> {
      // The expression of the partial index notification_deliveries_unpublished.
      const due = sql<Date>`coalesce(scheduled_for, created_at)`;
      return db
        .selectFrom('notification_deliveries')
        .selectAll()
        .where('published_at', 'is', null)
        .where('status', 'in', ['queued', 'scheduled'])
        .where(due, '<=', now)
        .where((eb) => eb.or([eb('scheduled_for', 'is not', null), eb('created_at', '<=', createdBefore)]))
        .orderBy(due)
        .limit(limit)
        .execute();
    },

    async notification(id: string): Promise<NotificationRow | undefined> {
      if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return undefined;
      return db.selectFrom('notifications').selectAll().where('id', '=', id).executeTakeFirst();
    },

    async deliveriesOf(ids: string[]): Promise<DeliveryRow[]> {
      if (ids.length === 0) return [];
      return db
        .selectFrom('notification_deliveries')
        .selectAll()
        .where('notification_id', 'in', ids)
        .orderBy(sql`array_position(array['push', 'sms', 'email', 'in_app'], channel)`)
        .execute();
    },

    async attemptsOf(id: string): Promise<AttemptRow[]> {
      return db
        .selectFrom('notification_attempts')
        .select(['notification_id', 'channel', 'attempt', 'at', 'error', 'provider'])
        .where('notification_id', '=', id)
        .orderBy('id')
        .execute();
    },

    async history(
      userId: string,
      limit: number,
      before?: { at: Date; id: string },
    ): Promise<NotificationRow[]> {
      let query = db.selectFrom('notifications').selectAll().where('user_id', '=', userId);
      if (before) {
        query = query.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(before.at, before.id)));
      }
      return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
    },

    async delivery(notificationId: string, channel: Channel): Promise<DeliveryRow | undefined> {
      return db
        .selectFrom('notification_deliveries')
        .selectAll()
        .where('notification_id', '=', notificationId)
        .where('channel', '=', channel)
        .executeTakeFirst();
    },

    /**
     * What the worker needs in one round trip, and the claim: the delivery (as it was), its
     * notification, the user's preferences and push subscriptions; a delivery still open and due
     * is set to `sending` in the same statement (`claimed`), and marked published: the worker got
     * its message (outbox.ts). Concurrent claims share the statement (group commit).
     */
    claim: (notificationId: string, channel: Channel, now: Date) =>
      claimGroup({ notificationId, channel, now }),
    /** `claim` for a batch the caller gathered itself (the worker's `deliverMany`), in one statement. */
    claimMany,
    deliverLocally,
    async updateDelivery(
      notificationId: string,
      channel: Channel,
      fields: Partial<
        Pick<DeliveryRow, 'status' | 'reason' | 'content' | 'provider' | 'provider_message_id' | 'sent_at'>
      >,
      now: Date,
    ): Promise<void> {
      await db
        .updateTable('notification_deliveries')
        .set({ ...fields, updated_at: now })
        .where('notification_id', '=', notificationId)
        .where('channel', '=', channel)
        // A cancel that won the race with a worker's read stays: the sender took it back.
        .where('status', '!=', 'cancelled')
        .execute();
    },

    /**
     * The notification's pending deliveries (`queued`, `scheduled`) set `cancelled`, in one
     * statement: a worker's claim takes only open ones, so a delivery is either claimed
     * (`sending`) or cancelled, never both. Answers the channels it cancelled.
     */
    async cancelPending(notificationId: string, now: Date): Promise<Channel[]> {
      const rows = await db
        .updateTable('notification_deliveries')
        .set({ status: 'cancelled', reason: 'cancelled', updated_at: now })
        .where('notification_id', '=', notificationId)
        .where('status', 'in', ['queued', 'scheduled'])
        .returning('channel')
        .execute();
      return rows.map((row) => row.channel);
    },

    /** Whether a send with this provider message id is recorded (a receipt that changed nothing). */
    async knowsProviderMessage(providerMessageId: string): Promise<boolean> {
      const row = await db
        .selectFrom('notification_deliveries')
        .select('notification_id')
        .where('provider_message_id', '=', providerMessageId)
        .limit(1)
        .executeTakeFirst();
      return row !== undefined;
    },

    /**
     * A provider's delivery receipt (for the receipts webhook): `sent` → `delivered`. Returns
     * false for an unknown message; a repeated receipt changes nothing. Concurrent receipts share
     * one statement.
     */
    markDelivered: (provider: string | null, providerMessageId: string, at: Date) =>
      markDeliveredGroup({ provider, providerMessageId, at }),

    /**
     * A successful provider try in one statement: counts the attempt and records the delivery as
     * `sent` (what `recordAttempt` followed by `updateDelivery` did in three).
     * Concurrent sends of different deliveries share the statement (group commit).
     */
    recordSent: (
      notificationId: string,
      channel: Channel,
      sent: { provider: string; providerMessageId: string; content: string; sentAt: Date },
    ) => recordSentGroup({ notificationId, channel, ...sent }),

    /**
     * Counts a provider try on the delivery and logs it. Answers the try's number in the retry
     * schedule (the tries since the delivery was last redriven).
     */
    async recordAttempt(
      notificationId: string,
      channel: Channel,
      attempt: { at: Date; error: string | null; provider: string | null },
    ): Promise<number> {
      const counted = await db
        .updateTable('notification_deliveries')
        .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
        .where('notification_id', '=', notificationId)
        .where('channel', '=', channel)
        .returning(['attempts', 'attempt_base'])
        .executeTakeFirst();
      const number = counted?.attempts ?? 0;
      await db
        .insertInto('notification_attempts')
        .values({ notification_id: notificationId, channel, attempt: number, ...attempt })
        .execute();
      return number - (counted?.attempt_base ?? 0);
    },

    /** A dead-lettered delivery opened again (`queued`) with a fresh retry schedule. */
    async reopenRedriven(notificationId: string, channel: Channel, now: Date): Promise<void> {
      await db
        .updateTable('notification_deliveries')
        .set((eb) => ({
          status: 'queued',
          reason: 'redriven',
          attempt_base: eb.ref('attempts'),
          updated_at: now,
        }))
        .where('notification_id', '=', notificationId)
        .where('channel', '=', channel)
        .where('status', '!=', 'cancelled')
        .execute();
    },
  };
}

export type NotifyRepository = ReturnType<typeof createNotifyRepository>;

/** The rows of the accept's insert (`$1`, as insertNotifications writes them). */
const INSERT_ROWS = `select (r->>0)::uuid as id, r->>1 as user_id, r->>2 as client_id, r->>3 as request_hash,
    r->>4 as type, r->>5 as priority, r->>6 as lane, (r->>7)::uuid as batch_id, r->8 as data, r->9 as accepted,
    (r->>10)::timestamptz as created_at, r->11 as deliveries, r->>12 as sent_by, position
  from jsonb_array_elements($1::jsonb) with ordinality as t(r, position)`;
const INSERT_NOTIFICATIONS = `insert into notifications (id, user_id, client_id, request_hash, type, priority, lane,
    batch_id, data, accepted, created_at, sent_by)
  select id, user_id, client_id, request_hash, type, priority, lane, batch_id, data, accepted, created_at, sent_by
  from v`;
/** The deliveries of the notifications in `source` (`v`, or `v` joined to those stored). */
const insertDeliveries = (source: string) => `insert into notification_deliveries (notification_id, channel,
    user_id, lane, status, reason, created_at, scheduled_for, updated_at)
  select v.id, e->>0, v.user_id, v.lane, e->>1, e->>2, v.created_at, (e->>3)::timestamptz, v.created_at
  from ${source} cross join lateral jsonb_array_elements(v.deliveries) with ordinality as x(e, position)
  order by v.position, x.position`;

/**
 * The notifications and their deliveries, each row new: a taken client id fails the statement.
 * It answers an empty `missing`, and returns nothing from the insert to join its deliveries to.
 */
const INSERT_NEW = `with v as (${INSERT_ROWS}), n as (${INSERT_NOTIFICATIONS}), d as (${insertDeliveries('v')})
  select '{}'::text[] as missing`;

/**
 * The same, skipping notifications whose client id is taken (and their deliveries); `missing`
 * names them. The conflict names the client id's index: with no target every unique index is an
 * arbiter, and the primary key (a fresh uuidv7) was searched once more per row.
 */
const INSERT_SKIPPING_TAKEN = `with v as (${INSERT_ROWS}),
  n as (${INSERT_NOTIFICATIONS}
    on conflict (user_id, client_id) where client_id is not null do nothing returning id),
  d as (${insertDeliveries('v join n on n.id = v.id')})
  select array(select v.id::text from v where v.id not in (select id from n)) as missing`;
