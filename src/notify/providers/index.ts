/**
 * PLACEHOLDER (notify-core branch): replaced in the merge by the notify-edge branch's providers
 * (dev inbox, SMTP, Web Push, SMS, breakers). Here every channel goes to an in-memory dev inbox.
 */
import type { Migrations } from '../../platform/db/migrate.ts';
import type { PlatformDeps } from '../../platform/module.ts';
import { CHANNELS, type Channel } from '../api.ts';
import type { ChannelSender, OutboundMessage } from '../ports.ts';

export const providerMigrations: Migrations = {};

export function createChannelSenders(_deps: PlatformDeps): Record<Channel, ChannelSender> {
  const inbox: OutboundMessage[] = [];
  const sender = (channel: Channel): ChannelSender => ({
    async send(message) {
      inbox.push(message);
      return { provider: `dev-inbox-${channel}`, providerMessageId: `dev-${message.deliveryId}` };
    },
    states: () => [{ provider: `dev-inbox-${channel}`, channel, state: 'closed' }],
    close: async () => {},
  });
  return Object.fromEntries(CHANNELS.map((channel) => [channel, sender(channel)])) as Record<
    Channel,
    ChannelSender
  >;
}
