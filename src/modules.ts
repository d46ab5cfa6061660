import { bookingModule } from './booking/module.ts';
import { notifyModule } from './notify/module.ts';
import { parkingModule } from './parking/module.ts';
import { pasteModule } from './paste/module.ts';
import { paymentsModule } from './payments/module.ts';
import type { ServiceName } from './platform/config.ts';
import type { ApiTag } from './platform/http/openapi.ts';
import type { ServiceModule } from './platform/module.ts';

/** The services shown on the home page and in every page's navigation. */
export const SERVICE_LINKS: { name: ServiceName; title: string; href: string; description: string }[] = [
  {
    name: 'paste',
    title: 'Text sharing',
    href: '/paste',
    description: 'Share text under a short, unguessable link, with expiry, privacy and passwords.',
  },
  {
    name: 'notify',
    title: 'Notifications',
    href: '/notify',
    description: 'Push, SMS and e-mail with preferences, quiet hours, limits and retries.',
  },
  {
    name: 'booking',
    title: 'Seat booking',
    href: '/movies',
    description: 'Find a movie, pick seats on the map, hold them and pay.',
  },
  {
    name: 'parking',
    title: 'Parking lot',
    href: '/parking',
    description: 'Entry and exit panels, pricing and live display boards.',
  },
];

/** The groups of /openapi.json; an operation's tags are among these (openapi.test.ts). */
export const API_TAGS: ApiTag[] = [
  { name: 'paste', description: 'Text sharing: create, read and delete pastes; accounts and their pastes.' },
  {
    name: 'notifications',
    description: 'Push, SMS and e-mail: sending, delivery status, templates, preferences, dead letters.',
  },
  {
    name: 'booking',
    description: 'Seat booking: catalogue and search, seat maps, holds, bookings, tickets.',
  },
  { name: 'booking admin', description: 'Seat booking back office: the catalogue, shows and their audits.' },
  { name: 'parking', description: 'The parking lot: entry and exit panels, tickets, fees, boards.' },
  {
    name: 'payments',
    description: 'Payments of bookings and parking fees: the hosted page, webhook, refunds.',
  },
  { name: 'users', description: 'Guest identities: a user id and the token that proves it.' },
  { name: 'platform', description: 'Health probes for load balancers and orchestrators.' },
];

const REGISTRY: ServiceModule[] = [paymentsModule, pasteModule, parkingModule, notifyModule, bookingModule];

/**
 * Every module a set of services (or internal modules, e.g. 'payments' in its tests) needs,
 * dependencies first; a module of `replacements` stands in for the registry's of its name.
 */
export function modulesFor(
  services: readonly ServiceModule['name'][],
  replacements: readonly ServiceModule[] = [],
): ServiceModule[] {
  const registry = REGISTRY.map((module) => replacements.find((r) => r.name === module.name) ?? module);
  const wanted = new Set<string>();
  const visit = (name: string) => {
    const module = registry.find((candidate) => candidate.name === name);
    if (!module || wanted.has(name)) return;
    for (const need of module.needs ?? []) visit(need);
    wanted.add(name);
  };
  for (const service of services) visit(service);
  return registry
    .filter((module) => wanted.has(module.name))
    .sort((a, b) => [...wanted].indexOf(a.name) - [...wanted].indexOf(b.name));
}
