import type { FastifyReply, FastifyRequest } from 'fastify';
import { actingUser, isStaff } from '../platform/auth/caller.ts';
import { platformError } from '../platform/errors.ts';
import { setRateLimitHeaders } from '../platform/ratelimit/headers.ts';
import type { RateDecision, RateLimiter, RatePolicy } from '../platform/ratelimit/index.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The user a booking request acts for: the token's user (a body `user_id` naming someone else is
 * 403), as booking stores it, a lower-case UUID. An identity provider may issue tokens for ids of
 * another shape; those cannot hold or book here.
 */
export function bookingUser(request: FastifyRequest, named?: string): string {
  const userId = actingUser(request, named).toLowerCase();
  if (!UUID.test(userId)) {
    throw platformError('forbidden', {
      detail: "Booking needs a user id that is a UUID; this token's is not",
    });
  }
  return userId;
}

/**
 * Whose holds and bookings the caller may see: a user only their own (their id; anyone else's
 * is answered 404), the admin and services everyone's (undefined).
 */
export function ownerScope(request: FastifyRequest): string | undefined {
  const caller = request.caller;
  if (caller.kind === 'user') return caller.userId.toLowerCase();
  if (isStaff(caller)) return undefined;
  throw platformError('forbidden', { detail: 'These credentials do not allow this operation' });
}

/**
 * onRequest hook counting a request against its client address (after the auth hook, before the
 * body is read): RateLimit headers on every answer, 429 past the policy. Callback style, so a
 * limiter whose counters are in this process decides without a promise.
 */
export function perAddress(limiter: RateLimiter, policy: RatePolicy, what: string) {
  const answer = (reply: FastifyReply, decision: RateDecision) => {
    setRateLimitHeaders(reply, policy, decision);
    if (decision.allowed) return undefined;
    return platformError('rate_limited', {
      detail: `At most ${policy.points} ${what} per ${policy.durationSec} s from one address`,
    });
  };
  return (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    const key = `ip:${request.ip}`;
    const now = limiter.consumeNow?.(policy, key);
    if (now !== undefined) return done(answer(reply, now));
    limiter.consume(policy, key).then((decision) => done(answer(reply, decision)), done);
  };
}
