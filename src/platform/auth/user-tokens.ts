import { platformError } from '../errors.ts';
import { signature, signatureMatches } from '../signing.ts';

/**
 * Who a user is: a token signed with the app secret, `UT1.<user id>.<HMAC>`. An identity provider
 * holding the same secret can issue them for its users; for everyone else `POST /api/v1/guests`
 * issues a fresh random user id with its token (guest checkout). Nobody can get a token for a user
 * id that already exists, so nobody can act as another user.
 */
export interface UserTokens {
  issue(userId: string): string;
  /** The user proven by an `Authorization: Bearer <token>` header, or undefined if none is sent. */
  userOf(authorization: string | undefined): string | undefined;
}

const PURPOSE = 'user';
/** Tokens kept proven: a user's next requests skip the HMAC. */
const PROVEN_MAX = 50_000;
const TOKEN = /^Bearer\s+UT1\.([A-Za-z0-9_-]{1,64})\.([\w-]{43})\s*$/i;

export function createUserTokens(secret: string): UserTokens {
  // Tokens already proven, by their exact text: a user's requests come one after another, and the
  // HMAC is the dearest step of a request's credential check. Only a token that passed is kept, so
  // a lookup tells a caller nothing it did not send itself. Oldest first out (a Map keeps insertion
  // order): a lookup then costs one Map read, where an LRU would also reorder its list.
  const proven = new Map<string, string>();
  const userOf = (authorization: string | undefined) => {
    if (authorization === undefined) return undefined;
    const known = proven.get(authorization);
    if (known !== undefined) return known;
    const match = TOKEN.exec(authorization);
    if (!match || !signatureMatches(secret, PURPOSE, [match[1]], match[2])) {
      throw platformError('unauthorized', {
        detail: 'The Authorization header does not carry a valid user token',
        headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
      });
    }
    if (proven.size >= PROVEN_MAX) proven.delete(proven.keys().next().value!);
    proven.set(authorization, match[1]);
    return match[1];
  };
  return {
    issue: (userId) => `UT1.${userId}.${signature(secret, PURPOSE, [userId])}`,
    userOf,
  };
}
