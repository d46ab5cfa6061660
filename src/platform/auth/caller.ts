import type { FastifyRequest } from 'fastify';
import { platformError } from '../errors.ts';

/** Who is calling, as the platform's auth hook proved it (`request.caller`). */
export type Caller =
  | { kind: 'public' }
  | { kind: 'user'; userId: string }
  | { kind: 'service'; name: string; scopes: ReadonlySet<string> }
  | { kind: 'operator'; name: string; scopes: ReadonlySet<string> }
  | { kind: 'admin'; name: string }
  /** A module's own credential (paste's API keys): `userId` in that module's terms. */
  | { kind: 'account'; scheme: string; userId: string };

export const PUBLIC_CALLER: Caller = Object.freeze({ kind: 'public' });

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook on every route that declares `config.access`; public otherwise. */
    caller: Caller;
  }
}

/**
 * The user a request acts for. A user's token decides it: a body's `user_id` that names someone
 * else is refused (403) rather than silently replaced, so a client bug shows. Services and admins
 * act on behalf of the user they name.
 */
export function actingUser(request: FastifyRequest, named: string | undefined): string {
  const caller = request.caller;
  if (caller.kind === 'user') {
    if (named !== undefined && !sameUser(named, caller.userId)) {
      throw platformError('forbidden', {
        detail: "user_id names another user than the token's; leave it out or send your own",
      });
    }
    return caller.userId;
  }
  if (named === undefined) {
    throw platformError('validation_failed', {
      detail: 'user_id is required when the caller is not a user',
      extras: { errors: [{ field: 'body.user_id', message: 'is required' }] },
    });
  }
  return named;
}

/** A short, stable name of the caller for logs and idempotency scopes (never a secret). */
export function callerId(caller: Caller): string {
  switch (caller.kind) {
    case 'public':
      return 'public';
    case 'user':
      return `user:${caller.userId}`;
    case 'account':
      return `${caller.scheme}:${caller.userId}`;
    default:
      return `${caller.kind}:${caller.name}`;
  }
}

/** Whether this caller may see everything of any user (operators of the whole system). */
export function isStaff(caller: Caller): boolean {
  return caller.kind === 'admin' || caller.kind === 'service';
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** User ids compare exactly (`alice` is not `ALICE`), except UUIDs, which RFC 9562 compares without case. */
export function sameUser(a: string, b: string): boolean {
  return a === b || (UUID.test(a) && UUID.test(b) && a.toLowerCase() === b.toLowerCase());
}
