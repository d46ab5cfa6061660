import { sql } from 'kysely';
import type { Db } from '../../platform/db/index.ts';
import type { PushSubscription } from '../ports.ts';
import type { NotifyDb, PreferencesRow } from '../tables.ts';

/** The columns of a user's preferences, times as PostgreSQL prints a `time` (`HH:MM:SS`). */
const preferenceColumns = (db: NotifyDb) =>
  db
    .selectFrom('notify_preferences')
    .select([
      'user_id',
      'push_enabled',
      'sms_enabled',
      'email_enabled',
      'in_app_enabled',
      'email_marketing_enabled',
      sql<string | null>`quiet_hours_start::text`.as('quiet_hours_start'),
      sql<string | null>`quiet_hours_end::text`.as('quiet_hours_end'),
      'timezone',
      'email',
      'phone',
      'locale',
    ]);

/** SQL only: a user's preferences and push subscriptions (rules in service.ts). */
export function createPreferencesRepository(database: Db) {
  const db: NotifyDb = database.withTables();
  return {
    async preferences(userId: string): Promise<PreferencesRow | undefined> {
      return preferenceColumns(db).where('user_id', '=', userId).executeTakeFirst();
    },

    /** Every field; each write counts (`version`), which the accept's snapshot checks. */
    async savePreferences(p: PreferencesRow, now: Date): Promise<void> {
      const { version: _, ...row } = p;
      await db
        .insertInto('notify_preferences')
        .values({ ...row, updated_at: now })
        .onConflict((conflict) =>
          conflict.column('user_id').doUpdateSet((eb) => ({
            version: sql<number>`notify_preferences.version + 1`,
            push_enabled: eb.ref('excluded.push_enabled'),
            sms_enabled: eb.ref('excluded.sms_enabled'),
            email_enabled: eb.ref('excluded.email_enabled'),
            in_app_enabled: eb.ref('excluded.in_app_enabled'),
            email_marketing_enabled: eb.ref('excluded.email_marketing_enabled'),
            quiet_hours_start: eb.ref('excluded.quiet_hours_start'),
            quiet_hours_end: eb.ref('excluded.quiet_hours_end'),
            timezone: eb.ref('excluded.timezone'),
            email: eb.ref('excluded.email'),
            phone: eb.ref('excluded.phone'),
            locale: eb.ref('excluded.locale'),
            updated_at: eb.ref('excluded.updated_at'),
          })),
        )
        .execute();
    },

    /** Sets the given addresses only, so a concurrent preference change is not overwritten. */
    async setContact(userId: string, contact: { email?: string; phone?: string }, now: Date): Promise<void> {
      const email = contact.email ?? null;
      const phone = contact.phone ?? null;
      await db
        .insertInto('notify_preferences')
        .values({ user_id: userId, email, phone, updated_at: now })
        .onConflict((conflict) =>
          conflict.column('user_id').doUpdateSet((eb) => ({
            version: sql<number>`notify_preferences.version + 1`,
            email: sql<string | null>`coalesce(${email}, notify_preferences.email)`,
            phone: sql<string | null>`coalesce(${phone}, notify_preferences.phone)`,
            updated_at: eb.ref('excluded.updated_at'),
          })),
        )
        .execute();
    },

    /** The one-click unsubscribe: one switch, nothing else of the row (idempotent; a new row otherwise default). */
    async unsubscribeEmailMarketing(userId: string, now: Date): Promise<void> {
      await db
        .insertInto('notify_preferences')
        .values({
          user_id: userId,
          email: null,
          phone: null,
          email_marketing_enabled: false,
          updated_at: now,
        })
        .onConflict((conflict) =>
          conflict.column('user_id').doUpdateSet((eb) => ({
            version: sql<number>`notify_preferences.version + 1`,
            email_marketing_enabled: false,
            updated_at: eb.ref('excluded.updated_at'),
          })),
        )
        .execute();
    },

    /** The stored zones of these users (the console shows each user's times in their zone). */
    async timeZones(userIds: readonly string[]): Promise<Map<string, string>> {
      if (userIds.length === 0) return new Map();
      const rows = await db
        .selectFrom('notify_preferences')
        .select(['user_id', 'timezone'])
        .where('user_id', 'in', [...userIds])
        .execute();
      return new Map(rows.map((row) => [row.user_id, row.timezone]));
    },

    async subscriptions(userId: string): Promise<PushSubscription[]> {
      const rows = await db
        .selectFrom('notify_push_subscriptions')
        .select(['endpoint', 'p256dh', 'auth'])
        .where('user_id', '=', userId)
        .orderBy('created_at')
        .execute();
      return rows.map((row) => ({ endpoint: row.endpoint, keys: { p256dh: row.p256dh, auth: row.auth } }));
    },

    /**
     * Adds or updates (same endpoint) a subscription while the user holds fewer than `max`; false
     * when the user is full. A per-user advisory lock orders concurrent adds, so a burst cannot
     * pass the count together.
     */
    async addSubscription(
      userId: string,
      subscription: PushSubscription,
      now: Date,
      max: number,
    ): Promise<boolean> {
      return db.transaction().execute(async (trx) => {
        await trx
          .selectNoFrom(
            sql`pg_advisory_xact_lock(hashtext(${`notify_push_subscriptions:${userId}`}))`.as('locked'),
          )
          .execute();
        const { held, known } = await trx
          .selectFrom('notify_push_subscriptions')
          .select([
            sql<number>`count(*)::int`.as('held'),
            sql<boolean>`coalesce(bool_or(endpoint = ${subscription.endpoint}), false)`.as('known'),
          ])
          .where('user_id', '=', userId)
          .executeTakeFirstOrThrow();
        if (!known && held >= max) return false;
        const { endpoint, keys } = subscription;
        await trx
          .insertInto('notify_push_subscriptions')
          .values({ user_id: userId, endpoint, p256dh: keys.p256dh, auth: keys.auth, created_at: now })
          .onConflict((conflict) =>
            conflict.columns(['user_id', 'endpoint']).doUpdateSet((eb) => ({
              p256dh: eb.ref('excluded.p256dh'),
              auth: eb.ref('excluded.auth'),
            })),
          )
          .execute();
        return true;
      });
    },

    async deleteSubscription(userId: string, endpoint: string): Promise<boolean> {
      const result = await db
        .deleteFrom('notify_push_subscriptions')
        .where('user_id', '=', userId)
        .where('endpoint', '=', endpoint)
        .executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}

export type PreferencesRepository = ReturnType<typeof createPreferencesRepository>;
