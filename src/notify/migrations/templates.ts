import { type Kysely, sql } from 'kysely';
import type { Migrations } from '../../platform/db/migrate.ts';
import type { Channel } from '../api.ts';
import { defaultTemplates } from '../templates/defaults.ts';
import { parseTemplateId } from '../templates/ids.ts';
import { firstDefaults } from './first-defaults.ts';

/**
 * Keys start with '100_' so they sort after the delivery core's '001_' ones in the notify
 * module's single history table. The spec's Template (id, channel, subject, body) plus the
 * HTML part and the parsed id (type, locale) so `types()` and lookups need no string surgery.
 */
export const templateMigrations: Migrations = {
  '100_notify_templates': {
    async up(db: Kysely<unknown>) {
      await sql`
        create table notify_templates (
          id varchar(50) primary key,
          type varchar(20) not null,
          channel varchar(20) not null check (channel in ('push', 'sms', 'email')),
          locale varchar(10),
          subject text not null default '',
          body text not null,
          html_body text,
          updated_at timestamptz not null default now()
        )`.execute(db);
      await sql`create index notify_templates_type on notify_templates (type)`.execute(db);
      // The channels this table's check allowed then; migration 300 seeds the in-app ones.
      await seedDefaults(db, ['push', 'sms', 'email']);
    },
  },
  // Times in the event's zone with the zone named, amounts with their currency (issue 24): the
  // first defaults showed a Delhi show's 19:30 as "14:00" and "Paid: 900.00". Only defaults nobody
  // edited are replaced (their text is still the first one, part for part).
  '101_notify_templates_zones_money': {
    async up(db: Kysely<unknown>) {
      const current = new Map(defaultTemplates().map((seed) => [seed.id, seed]));
      for (const first of firstDefaults()) {
        const seed = current.get(first.id);
        if (!seed || (seed.subject === first.subject && seed.body === first.body && seed.html === first.html))
          continue;
        await sql`
          update notify_templates
          set subject = ${seed.subject}, body = ${seed.body}, html_body = ${seed.html ?? null}, updated_at = now()
          where id = ${first.id} and subject = ${first.subject} and body = ${first.body}
            and html_body is not distinct from ${first.html ?? null}`.execute(db);
      }
    },
  },
};

/** Inserts the default templates of `channels` that are missing; operators' edits are never overwritten. */
export async function seedDefaults(db: Kysely<unknown>, channels: readonly Channel[]): Promise<void> {
  for (const seed of defaultTemplates()) {
    const { type, channel, locale } = parseTemplateId(seed.id)!;
    if (!channels.includes(channel)) continue;
    if (channel === 'in_app') {
      await sql`
        insert into notify_templates (id, type, channel, locale, subject, body, link)
        values (${seed.id}, ${type}, ${channel}, ${locale ?? null}, ${seed.subject}, ${seed.body}, ${seed.link ?? null})
        on conflict (id) do nothing`.execute(db);
      continue;
    }
    await sql`
      insert into notify_templates (id, type, channel, locale, subject, body, html_body)
      values (${seed.id}, ${type}, ${channel}, ${locale ?? null}, ${seed.subject}, ${seed.body}, ${seed.html ?? null})
      on conflict (id) do nothing`.execute(db);
  }
}
