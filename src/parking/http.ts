import type { FastifyRequest } from 'fastify';
import { platformError } from '../platform/errors.ts';

/** Route config the parking features share: the OpenAPI tag and who may call what (README, Access). */
export const tags = ['parking'];

/** Each route declares who may call it; the platform enforces it. */
export const access = {
  public: { access: { public: true } },
  /** A public read: a weak ETag and revalidation (platform/http/conditional.ts). */
  publicRead: { access: { public: true }, cache: 'revalidate' },
  panel: { access: { operator: 'parking:panel' } },
  attendant: { access: { operator: 'parking:attendant' } },
  admin: { access: { admin: true } },
  /** A driver's own things (reservations): a user token, as from `POST /api/v1/guests`. */
  user: { access: { user: true } },
} as const;

/** The user a `user` route acts for (the platform proved the token before the handler runs). */
export function callerUser(request: FastifyRequest): string {
  const caller = request.caller;
  if (caller.kind !== 'user') throw platformError('unauthorized', 'A user token is required');
  return caller.userId;
}
