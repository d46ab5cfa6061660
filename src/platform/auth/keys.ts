import { hash } from 'node:crypto';
import { ConfigError } from '../config-error.ts';

/**
 * A configured credential: a service API key or an operator key, with the scopes it grants.
 * `*` grants every scope (the development defaults use it).
 */
export interface KeyGrant {
  name: string;
  scopes: ReadonlySet<string>;
  key: string;
}

export const SERVICE_SCOPES = [
  'notify:send',
  'notify:read',
  'notify:contacts',
  'notify:templates',
  'booking:read',
] as const;
export const OPERATOR_SCOPES = ['parking:panel', 'parking:attendant', 'booking:door'] as const;

/** The documented development defaults (README, Security): every one is refused in production. */
export const DEV_KEYS = {
  admin: 'dev-admin-key',
  service: 'dev-service-key',
  operator: 'dev-operator-key',
} as const;
export const DEV_SERVICE_KEYS = `dev * ${DEV_KEYS.service}`;
export const DEV_OPERATOR_KEYS = `demo * ${DEV_KEYS.operator}`;

const NAME = /^[a-z0-9][a-z0-9_.-]{0,62}$/i;
const SCOPE = /^(\*|[a-z]+:[a-z_]+)$/;
const KEY = /^[\x21-\x7e]{8,512}$/;

/**
 * Parses `SERVICE_KEYS` / `OPERATOR_KEYS`: entries separated by `;` or new lines, each
 * `<name> <scope>[,<scope>…] <key>`, e.g. `backoffice notify:send,notify:contacts 9f3c…`.
 */
export function parseKeyGrants(variable: string, raw: string, known: readonly string[]): KeyGrant[] {
  const grants: KeyGrant[] = [];
  for (const entry of raw.split(/[;\n]/)) {
    const parts = entry.trim().split(/\s+/).filter(Boolean);
    if (parts.length === 0) continue;
    const [name, scopeList, key] = parts;
    if (parts.length !== 3 || !NAME.test(name) || !KEY.test(key)) {
      throw new ConfigError(
        `${variable} must list entries "<name> <scope>,<scope> <key>" separated by ";" (keys of 8 or more visible characters)`,
      );
    }
    const scopes = scopeList.split(',');
    for (const scope of scopes) {
      if (!SCOPE.test(scope) || (scope !== '*' && !known.includes(scope))) {
        throw new ConfigError(
          `${variable}: unknown scope "${scope}" for ${name} (known: ${known.join(', ')}, *)`,
        );
      }
    }
    if (grants.some((grant) => grant.name === name || grant.key === key)) {
      throw new ConfigError(`${variable}: ${name} is listed twice or shares its key with another entry`);
    }
    grants.push({ name, scopes: new Set(scopes), key });
  }
  return grants;
}

/**
 * Keys are found by the SHA-256 of what the caller sent: the map lookup compares digests, so its
 * time says nothing about how much of a key was right, and no key is compared by hand anywhere.
 */
export function keyDigest(key: string): string {
  // One-shot `hash`: every keyed request computes one, and a Hash object per call costs more than the digest.
  return hash('sha256', key, 'base64url');
}

/** The configured keys of one kind, found by what a caller presented. */
export interface KeyGrants {
  find(presented: string): KeyGrant | undefined;
}

/**
 * Keys are found by their digest (above), and a key once found is remembered by its text: a panel
 * or a service sends the same key on every request, and the digest is the dearest step of its
 * check. Only right keys are remembered, so the map holds at most the configured keys, and a
 * lookup by a wrong key compares strings only on a collision of V8's seeded string hashes.
 */
export function keyGrants(grants: readonly KeyGrant[]): KeyGrants {
  const byDigest = new Map(grants.map((grant) => [keyDigest(grant.key), grant]));
  const proven = new Map<string, KeyGrant>();
  return {
    find(presented) {
      const known = proven.get(presented);
      if (known !== undefined) return known;
      const grant = byDigest.get(keyDigest(presented));
      if (grant !== undefined) proven.set(presented, grant);
      return grant;
    },
  };
}

export function grants(grant: Pick<KeyGrant, 'scopes'>, scope: string): boolean {
  return grant.scopes.has('*') || grant.scopes.has(scope);
}
