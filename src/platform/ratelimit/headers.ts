import type { FastifyReply } from 'fastify';
import type { RateDecision, RatePolicy } from './index.ts';

/**
 * IETF draft-ietf-httpapi-ratelimit-headers: `RateLimit-Policy` names the quota, `RateLimit`
 * reports what is left; a refused request also gets `Retry-After` in seconds.
 */
export function setRateLimitHeaders(reply: FastifyReply, policy: RatePolicy, decision: RateDecision): void {
  const resetSec = Math.ceil(decision.resetMs / 1000);
  reply.header('RateLimit-Policy', policyHeader(policy));
  reply.header('RateLimit', `"${policy.name}";r=${decision.remaining};t=${resetSec}`);
  if (!decision.allowed) reply.header('Retry-After', String(Math.max(1, resetSec)));
}

/**
 * The same headers as a record, for a limit decided where no reply is at hand (a service, the
 * auth hook): pass it as an error's `headers`.
 */
export function rateLimitHeaders(policy: RatePolicy, decision: RateDecision): Record<string, string> {
  const resetSec = Math.ceil(decision.resetMs / 1000);
  return {
    'RateLimit-Policy': policyHeader(policy),
    RateLimit: `"${policy.name}";r=${decision.remaining};t=${resetSec}`,
    ...(decision.allowed ? {} : { 'Retry-After': String(Math.max(1, resetSec)) }),
  };
}

/** A policy's header, written once per policy (policies are long-lived objects of the settings). */
const policyHeaders = new WeakMap<RatePolicy, string>();
function policyHeader(policy: RatePolicy): string {
  let header = policyHeaders.get(policy);
  if (header === undefined) {
    header = `"${policy.name}";q=${policy.points};w=${policy.durationSec}`;
    policyHeaders.set(policy, header);
  }
  return header;
}
