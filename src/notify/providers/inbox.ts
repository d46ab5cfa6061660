import { sql } from 'kysely';
import type { Clock } from '../../platform/clock.ts';
import { createGroup } from '../../platform/db/group.ts';
import type { Db } from '../../platform/db/index.ts';
import { createStatements } from '../../platform/db/prepared.ts';
import { uuidv7 } from '../../platform/ids.ts';
import type { RetentionPolicy } from '../../platform/jobs/retention.ts';
import type { Channel } from '../api.ts';
import type { OutboundMessage, Provider, SendResult } from '../ports.ts';
import type { InboxRow, NotifyDb } from '../tables.ts';

export function inboxRepository(database: Db, options: { prepare?: boolean } = {}) {
  const db: NotifyDb = database.withTables();
  const run = createStatements(database, options.prepare ?? false).query;
  // The rows as one JSON document (JSON.stringify is native), so the statement text never varies and
  // is prepared once per connection (platform/db/prepared.ts); as a text[] per column pg escaped
  // every element in JavaScript, the messages' text and HTML included. It answers the delivery ids
  // it stored, not `returning *`: the rows are the caller's own, and the text and HTML of every
  // message travelled back to the worker for nothing.
  const insertNew = async (rows: InboxRow[]): Promise<Set<string>> => {
    // Raw SQL: a batch insert from json_to_recordset, on conflict skipped, prepared.
    const inserted = await run(
      'notify_inbox_store_json',
      sql<
        Pick<InboxRow, 'delivery_id'>
      >`insert into notify_inbox (id, delivery_id, notification_id, channel, type,
          user_id, address, subject, text, html, provider_message_id, created_at)
        select * from json_to_recordset(${JSON.stringify(rows)}::json)
          as v(id uuid, delivery_id text, notification_id text, channel text, type text, user_id text,
            address text, subject text, text text, html text, provider_message_id text, created_at timestamptz)
        on conflict (delivery_id) do nothing
        returning delivery_id`,
    );
    return new Set(inserted.map((row) => row.delivery_id));
  };
  /**
   * Stores once per delivery id; a repeat returns the row stored the first time. Messages the
   * workers send at the same time share one insert (group commit); a repeat, which the shared
   * insert skips, is looked up alone.
   */
  const store = createGroup<InboxRow, InboxRow | undefined>({
    one: async (row) => {
      if ((await insertNew([row])).has(row.delivery_id)) return row;
      return db
        .selectFrom('notify_inbox')
        .selectAll()
        .where('delivery_id', '=', row.delivery_id)
        .executeTakeFirstOrThrow();
    },
    many: async (rows) => {
      const inserted = await insertNew(rows);
      return rows.map((row) => (inserted.has(row.delivery_id) ? row : undefined));
    },
    key: (row) => row.delivery_id,
    retry: (row) => row === undefined,
  });
  return {
    /** Newest first. */
    list: (filter: { userId?: string; channel?: Channel; limit?: number } = {}) => {
      let query = db
        .selectFrom('notify_inbox')
        .selectAll()
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(filter.limit ?? 100);
      if (filter.userId) query = query.where('user_id', '=', filter.userId);
      if (filter.channel) query = query.where('channel', '=', filter.channel);
      return query.execute();
    },
    get: (id: string) => db.selectFrom('notify_inbox').selectAll().where('id', '=', id).executeTakeFirst(),
    store: async (row: InboxRow): Promise<InboxRow> => (await store(row))!,
  };
}

export type InboxRepository = ReturnType<typeof inboxRepository>;

/** The dev inbox keeps a week: enough to look at, and a long-running dev server does not grow forever. */
export const INBOX_RETENTION_MS = 7 * 24 * 3600_000;

/** The inbox's policy in the notify module's retention job: messages stored before the week. */
export function inboxRetention(database: Db, keepMs = INBOX_RETENTION_MS): RetentionPolicy {
  const db: NotifyDb = database.withTables();
  return {
    table: 'notify_inbox',
    keepMs,
    async removeBatch(cutoff, limit) {
      // The oldest first, on the `created_at` index (notify_inbox_recent).
      const result = await db
        .deleteFrom('notify_inbox')
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('notify_inbox')
            .select('id')
            .where('created_at', '<', cutoff)
            .orderBy('created_at')
            .limit(limit),
        )
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
    async oldest() {
      const row = await db
        .selectFrom('notify_inbox')
        .select('created_at')
        .orderBy('created_at')
        .limit(1)
        .executeTakeFirst();
      return row?.created_at;
    },
  };
}

function addressOf(message: OutboundMessage): string | null {
  const { recipient } = message;
  if (message.channel === 'email') return recipient.email ?? null;
  if (message.channel === 'sms') return recipient.phone ?? null;
  return recipient.pushSubscriptions?.map((s) => s.endpoint).join(' ') || null;
}

/** The inbox row of a message: ids from the pooled UUIDv7 source (no crypto call per message). */
function inboxRow(channel: Channel, message: OutboundMessage, at: Date): InboxRow {
  return {
    id: uuidv7(),
    delivery_id: message.deliveryId,
    notification_id: message.notificationId,
    channel,
    type: message.type,
    user_id: message.recipient.userId,
    address: addressOf(message),
    subject: message.message.subject ?? null,
    text: message.message.text,
    html: message.message.html ?? null,
    provider_message_id: `inbox-${uuidv7()}`,
    created_at: at,
  };
}

/**
 * The embedded provider of every channel: it "sends" by storing the rendered message, which the
 * dev inbox page shows like a mail catcher. It is `local`: the delivery core stores its rows
 * itself, in the statement that records the delivery as delivered (the inbox holding a message
 * is its delivery). `send`, the path of a fallback or of a half-open circuit's probe, stores on
 * its own; `onStored` lets the caller emit a delivery receipt then.
 */
export function createInboxProvider(
  channel: Channel,
  deps: { db: Db; clock: Clock; onStored?: (result: SendResult) => void; prepare?: boolean },
): Provider {
  const repository = inboxRepository(deps.db, { prepare: deps.prepare });
  return {
    name: 'inbox',
    channel,
    local: { row: (message, at) => inboxRow(channel, message, at) },
    async send(message) {
      const row = await repository.store(inboxRow(channel, message, deps.clock.now()));
      const result = { providerMessageId: row.provider_message_id, provider: 'inbox' };
      deps.onStored?.(result);
      return result;
    },
  };
}
