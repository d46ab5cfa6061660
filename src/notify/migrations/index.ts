import type { Migrations } from '../../platform/db/migrate.ts';
import { coreMigrations } from './core.ts';
import { inAppMigrations } from './in-app.ts';
import { inboxMigrations } from './inbox.ts';
import { templateMigrations } from './templates.ts';

/**
 * The notify module's migrations, in one history table: the core's tables ('001_…'), the
 * templates ('100_…'), the dev inbox ('200_…') and the in-app feed ('300_…'); the keys sort in that order.
 */
export const notifyMigrations: Migrations = {
  ...coreMigrations,
  ...templateMigrations,
  ...inboxMigrations,
  ...inAppMigrations,
};
