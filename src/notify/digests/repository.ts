import { sql } from 'kysely';
import { isUniqueViolation } from '../../platform/db/errors.ts';
import type { Db } from '../../platform/db/index.ts';
import type { Channel } from '../api.ts';
import type { NewDelivery, NewNotification } from '../notifications/repository.ts';
import type { DigestsTable, DigestTypesTable, NotifyDb } from '../tables.ts';

export type DigestType = Omit<DigestTypesTable, 'updated_at'>;
export type DigestWindow = Omit<DigestsTable, 'events'> & { events: number };

/** SQL of digests: the types' windows, the open windows and their events. Rules: service.ts. */
export function createDigestRepository(database: Db) {
  const db: NotifyDb = database.withTables();
  return {
    async types(): Promise<DigestType[]> {
      return db.selectFrom('notify_digest_types').select(['type', 'every_seconds', 'daily_at']).execute();
    },

    async setType(type: DigestType, now: Date): Promise<void> {
      await db
        .insertInto('notify_digest_types')
        .values({ ...type, updated_at: now })
        .onConflict((oc) =>
          oc
            .column('type')
            .doUpdateSet({ every_seconds: type.every_seconds, daily_at: type.daily_at, updated_at: now }),
        )
        .execute();
    },

    async deleteType(type: string): Promise<boolean> {
      const result = await db.deleteFrom('notify_digest_types').where('type', '=', type).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    /**
     * An event of a digestible type: its notification, its deliveries (`digested`) and its item
     * in the open window of each channel, opened when there is none, in one statement. The
     * upsert's row lock is held until the item is committed, so a flush (which updates the same
     * row) closes the window either before the upsert — which then opens a new one — or after the
     * item is in; and an event is in a window exactly when its notification is stored. False when
     * the client id is taken (nothing stored), as the core's insert answers.
     */
    async store(
      n: NewNotification,
      deliveries: NewDelivery[],
      windows: { channel: Channel; windowId: string; flushAt: Date }[],
    ): Promise<boolean> {
      // Raw SQL: one statement (its own transaction) with data-modifying CTEs, so the window's row
      // lock, which orders a user's concurrent events one after the other, is held for one round
      // trip only; as a transaction of four statements, a burst of one user's events held a pool
      // connection each while they waited, and the pool ran dry.
      try {
        await sql`with n as (
            insert into notifications (id, user_id, client_id, request_hash, type, priority, lane, batch_id, data,
              accepted, created_at, sent_by)
            values (${n.id}, ${n.user_id}, ${n.client_id}, ${n.request_hash()}, ${n.type}, ${n.priority}, ${n.lane},
              ${n.batch_id}, ${JSON.stringify(n.data)}::jsonb, ${JSON.stringify(n.accepted)}::jsonb, ${n.created_at},
              ${n.sent_by})),
          d as (
            insert into notification_deliveries (notification_id, channel, user_id, lane, status, reason, created_at,
              scheduled_for, updated_at)
            select ${n.id}, x.channel, ${n.user_id}, ${n.lane}, x.status, x.reason, ${n.created_at}, x.scheduled_for,
              ${n.created_at}
            from jsonb_to_recordset(${JSON.stringify(deliveries)}::jsonb)
              as x(channel text, status text, reason text, scheduled_for timestamptz)),
          w as (
            insert into notify_digests (id, user_id, type, channel, status, priority, events, flush_at, created_at)
            select x."windowId", ${n.user_id}, ${n.type}, x.channel, 'open', ${n.priority}, 1, x."flushAt", ${n.created_at}
            from jsonb_to_recordset(${JSON.stringify(windows)}::jsonb)
              as x("windowId" uuid, channel text, "flushAt" timestamptz)
            on conflict (user_id, type, channel) where status = 'open'
              do update set events = notify_digests.events + 1
            returning id)
          insert into notify_digest_items (digest_id, notification_id, data, created_at)
          select w.id, ${n.id}, ${JSON.stringify(n.data)}::jsonb, ${n.created_at} from w`.execute(db);
        return true;
      } catch (error) {
        if (isUniqueViolation(error, 'notifications_client_id')) return false;
        throw error;
      }
    },

    /**
     * Closes windows whose time has come (`open` → `closed`) and answers them. Windows another
     * process is closing, or that an event is joining right now, are skipped (SKIP LOCKED): the
     * next run takes them.
     */
    async closeDue(now: Date, limit: number): Promise<DigestWindow[]> {
      // Raw SQL: an update of the rows a locking subquery picked with SKIP LOCKED.
      const { rows } = await sql<DigestWindow>`
        update notify_digests set status = 'closed', closed_at = ${now}
        where id in (select id from notify_digests where status = 'open' and flush_at <= ${now}
          order by flush_at limit ${limit} for update skip locked)
        returning *`.execute(db);
      return rows;
    },

    /** Closed windows whose message was not stored within `before` (the process closing them stopped). */
    async stranded(before: Date, limit: number): Promise<DigestWindow[]> {
      return db
        .selectFrom('notify_digests')
        .selectAll()
        .where('status', '=', 'closed')
        .where('closed_at', '<=', before)
        .orderBy('closed_at')
        .limit(limit)
        .execute();
    },

    /** The window's events in the order they were accepted (ids are UUIDv7s: time order within a millisecond). */
    async items(
      digestId: string,
    ): Promise<{ notification_id: string; data: Record<string, unknown>; created_at: Date }[]> {
      return db
        .selectFrom('notify_digest_items')
        .select(['notification_id', 'data', 'created_at'])
        .where('digest_id', '=', digestId)
        .orderBy('created_at')
        .orderBy('notification_id')
        .execute();
    },

    /** The window's message is stored: `sent`, and its items (now in the message's data) go. */
    async markSent(digestId: string, notificationId: string | null): Promise<void> {
      await db.transaction().execute(async (trx) => {
        await trx
          .updateTable('notify_digests')
          .set({ status: 'sent', notification_id: notificationId })
          .where('id', '=', digestId)
          .execute();
        await trx.deleteFrom('notify_digest_items').where('digest_id', '=', digestId).execute();
      });
    },

    async window(id: string): Promise<DigestWindow | undefined> {
      return db.selectFrom('notify_digests').selectAll().where('id', '=', id).executeTakeFirst();
    },
  };
}

export type DigestRepository = ReturnType<typeof createDigestRepository>;
