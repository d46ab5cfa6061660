import type { Db } from '../../platform/db/index.ts';
import type { Channel } from '../api.ts';
import type { NotifyDb, TemplateRow } from '../tables.ts';

/** SQL only: the stored templates (`notify_templates`). */
export function templateRepository(database: Db) {
  const db: NotifyDb = database.withTables();
  return {
    list: (filter: { type?: string; channel?: string } = {}) => {
      let query = db.selectFrom('notify_templates').selectAll().orderBy('id');
      if (filter.type) query = query.where('type', '=', filter.type);
      if (filter.channel) query = query.where('channel', '=', filter.channel as Channel);
      return query.execute();
    },
    get: (id: string) =>
      db.selectFrom('notify_templates').selectAll().where('id', '=', id).executeTakeFirst(),
    getMany: (ids: string[]) =>
      db.selectFrom('notify_templates').selectAll().where('id', 'in', ids).execute(),
    types: async () =>
      (await db.selectFrom('notify_templates').select('type').distinct().orderBy('type').execute()).map(
        (row) => row.type,
      ),
    /** Inserts or replaces; `created` tells which, for 201 vs 200. */
    upsert: async (row: Omit<TemplateRow, 'updated_at'>, now: Date, onlyIfMissing = false) => {
      const existed = await db
        .selectFrom('notify_templates')
        .select('id')
        .where('id', '=', row.id)
        .executeTakeFirst();
      const insert = db.insertInto('notify_templates').values({ ...row, updated_at: now });
      const result = await (onlyIfMissing
        ? insert.onConflict((c) => c.column('id').doNothing())
        : insert.onConflict((c) =>
            c.column('id').doUpdateSet({
              subject: row.subject,
              body: row.body,
              html_body: row.html_body,
              link: row.link,
              updated_at: now,
            }),
          )
      )
        .returningAll()
        .executeTakeFirst();
      return { row: result, created: !existed && result !== undefined };
    },
    remove: async (id: string) =>
      (await db.deleteFrom('notify_templates').where('id', '=', id).executeTakeFirst()).numDeletedRows > 0n,
  };
}

export type TemplateRepository = ReturnType<typeof templateRepository>;
