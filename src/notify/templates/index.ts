/**
 * PLACEHOLDER (notify-core branch): replaced in the merge by the notify-edge branch's LiquidJS
 * templates. Just enough for the delivery core to run: fixed plain-text templates.
 */

import type { Db } from '../../platform/db/index.ts';
import type { Migrations } from '../../platform/db/migrate.ts';
import { BOOKING_NOTIFICATION_TYPES, type Channel } from '../api.ts';
import type { TemplateProblem, TemplateRenderer } from '../ports.ts';

export const templateMigrations: Migrations = {};

const VARIABLES: Record<string, readonly string[]> = {
  ...BOOKING_NOTIFICATION_TYPES,
  test_alert: ['message'],
  security_alert: ['message'],
};

export function createTemplateRenderer(_db: Db): TemplateRenderer {
  return {
    async check(type, channels, data) {
      const needed = VARIABLES[type];
      return channels.flatMap((channel): TemplateProblem[] => {
        if (!needed) return [{ channel, reason: 'unknown_type' as const }];
        const missing = needed.filter((name) => data[name] === undefined);
        return missing.length ? [{ channel, reason: 'missing_variables' as const, missing }] : [];
      });
    },
    async render(type, channel: Channel, data) {
      const needed = VARIABLES[type];
      if (!needed) throw new Error(`no template ${type}.${channel}`);
      const text = `${type}: ${needed.map((name) => `${name}=${JSON.stringify(data[name])}`).join(', ')}`;
      return channel === 'sms' ? { text } : { subject: type, text };
    },
    async types() {
      return Object.keys(VARIABLES);
    },
  };
}
