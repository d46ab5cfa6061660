import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { platformError } from '../errors.ts';
import { signature, signatureMatches } from '../signing.ts';

/**
 * Who is asking, for the endpoints that show one user's data (booking and notification history).
 *
 * The services take `user_id` from their callers (the specs leave sign-in open), so the proof of
 * identity is a token signed with the app secret: `UT1.<user id>.<HMAC>`. An identity provider
 * holding the same secret can issue them for its users; for everyone else `POST /api/v1/guests`
 * issues a fresh random user id with its token (guest checkout). Nobody can get a token for a user
 * id that already exists, so nobody can read another user's history.
 */
export interface UserTokens {
  issue(userId: string): string;
  /** The user proven by an `Authorization: Bearer <token>` header, or undefined if none is sent. */
  userOf(authorization: string | undefined): string | undefined;
  /**
   * onRequest hook for `/users/{id}/…` routes: the token must be that user's (401 without a valid
   * token, 404 for another user's, so it does not even confirm the user exists); the admin key,
   * when given, lets operators in.
   */
  ownerOnly(
    userIdOf: (request: FastifyRequest) => string,
    options?: { adminApiKey?: string },
  ): (request: FastifyRequest) => Promise<void>;
}

const PURPOSE = 'user';
const TOKEN = /^Bearer\s+UT1\.([A-Za-z0-9_-]{1,64})\.([\w-]{43})\s*$/i;

export function createUserTokens(secret: string): UserTokens {
  const userOf = (authorization: string | undefined) => {
    if (authorization === undefined) return undefined;
    const match = TOKEN.exec(authorization);
    if (!match || !signatureMatches(secret, PURPOSE, [match[1]], match[2])) {
      throw platformError('unauthorized', {
        detail: 'The Authorization header does not carry a valid user token',
        headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
      });
    }
    return match[1];
  };
  return {
    issue: (userId) => `UT1.${userId}.${signature(secret, PURPOSE, [userId])}`,
    userOf,
    ownerOnly(userIdOf, options = {}) {
      const adminKey = options.adminApiKey === undefined ? undefined : Buffer.from(options.adminApiKey);
      return async (request) => {
        if (adminKey && isKey(request.headers['x-admin-key'], adminKey)) return;
        const user = userOf(request.headers.authorization);
        if (user === undefined) {
          throw platformError('unauthorized', {
            detail: "Send the user's token as Authorization: Bearer <token> (POST /api/v1/guests issues one)",
            headers: { 'WWW-Authenticate': 'Bearer' },
          });
        }
        if (user !== userIdOf(request)) throw platformError('not_found', 'No such user');
      };
    },
  };
}

function isKey(given: unknown, expected: Buffer): boolean {
  const actual = Buffer.from(typeof given === 'string' ? given : '');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
