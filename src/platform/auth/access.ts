/**
 * Who may call a route, declared next to it and enforced by the platform's auth hook:
 *
 *   app.post('/api/notifications', { config: { access: { service: 'notify:send', admin: true } }, schema }, …)
 *
 * The same declaration becomes the operation's OpenAPI `security`, so /docs shows the lock and the
 * spec is the contract. Kinds (README, Security): public, user, service, operator, admin, plus a
 * module's own account scheme (paste's API keys).
 */
export interface Access {
  /** Anyone, without credentials. With other kinds, their credentials are optional. */
  public?: true;
  /**
   * The signed user token. `{param}`: only for that user's own data, named by this path
   * parameter; another user's token gets 404, so the answer does not even confirm the user exists.
   */
  user?: true | { param: string };
  /** A service API key with this scope (other services, back offices). */
  service?: string;
  /** An operator key or signed-in staff page session with this scope (door staff, panels). */
  operator?: string;
  /** The admin key or an admin page session. */
  admin?: true;
  /** A module's own credential scheme, e.g. paste's `pasteKey`. */
  account?: string;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
  }
}

/** The names of the securitySchemes in /openapi.json. */
export const SCHEMES = {
  user: 'userToken',
  service: 'serviceKey',
  operator: 'operatorKey',
  admin: 'adminKey',
  session: 'staffSession',
} as const;

export type SecurityRequirement = Record<string, string[]>;

/** An OpenAPI securitySchemes entry, of the two types this app uses. */
export type SecurityScheme =
  | { type: 'http'; scheme: 'bearer'; bearerFormat?: string; description?: string }
  | { type: 'apiKey'; in: 'header' | 'cookie'; name: string; description?: string };

/** The OpenAPI `security` of an access declaration (an empty object: credentials optional). */
export function securityOf(access: Access): SecurityRequirement[] {
  const requirements: SecurityRequirement[] = [];
  if (access.public) requirements.push({});
  if (access.user) requirements.push({ [SCHEMES.user]: [] });
  if (access.account) requirements.push({ [access.account]: [] });
  if (access.service) requirements.push({ [SCHEMES.service]: [access.service] });
  if (access.operator) {
    requirements.push({ [SCHEMES.operator]: [access.operator] }, { [SCHEMES.session]: [access.operator] });
  }
  if (access.admin) requirements.push({ [SCHEMES.admin]: [] }, { [SCHEMES.session]: ['admin'] });
  // Public alone is `security: []`: no credential at all.
  return requirements.length === 1 && access.public ? [] : requirements;
}

/** A sentence for an operation's description: who may call it. */
export function describeAccess(access: Access): string {
  const who: string[] = [];
  if (access.user) who.push(typeof access.user === 'object' ? "the user's own token" : 'a user token');
  if (access.account) who.push(`an account key (${access.account})`);
  if (access.service) who.push(`a service key with \`${access.service}\``);
  if (access.operator) who.push(`an operator with \`${access.operator}\``);
  if (access.admin) who.push('an admin');
  if (access.public) return who.length ? `Public; ${who.join(', ')} may add what only they see.` : 'Public.';
  return `Caller: ${who.join(', or ')}.`;
}
