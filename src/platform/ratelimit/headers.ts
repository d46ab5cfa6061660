import type { FastifyReply } from 'fastify';
import type { RateDecision, RatePolicy } from './index.ts';

/**
 * IETF draft-ietf-httpapi-ratelimit-headers: `RateLimit-Policy` names the quota, `RateLimit`
 * reports what is left; a refused request also gets `Retry-After` in seconds.
 */
export function setRateLimitHeaders(reply: FastifyReply, policy: RatePolicy, decision: RateDecision): void {
  const resetSec = Math.ceil(decision.resetMs / 1000);
  reply.header('RateLimit-Policy', `"${policy.name}";q=${policy.points};w=${policy.durationSec}`);
  reply.header('RateLimit', `"${policy.name}";r=${decision.remaining};t=${resetSec}`);
  if (!decision.allowed) reply.header('Retry-After', String(Math.max(1, resetSec)));
}
