import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import type { HTTPMethod } from 'find-my-way';
import type { Access } from '../auth/access.ts';
import { shadowRouter } from './methods.ts';

/**
 * The request headers a page may send. Those that prove a caller are allowed only to the origins
 * of CORS_ORIGINS: a page elsewhere may use the public operations, never act as someone.
 */
const REQUEST_HEADERS = [
  'content-type',
  'idempotency-key',
  'if-none-match',
  'last-event-id',
  'x-admission-token',
  'x-delete-token',
  'x-paste-password',
  'x-request-id',
];
const CREDENTIAL_HEADERS = ['authorization', 'x-api-key', 'x-operator-key', 'x-admin-key'];

/** Response headers a page's script may read beyond the safelisted few (Content-Type, Cache-Control…). */
const EXPOSED_HEADERS = [
  'content-disposition',
  'etag',
  'idempotent-replayed',
  'location',
  'ratelimit',
  'ratelimit-policy',
  'retry-after',
  'www-authenticate',
  'x-delete-token',
  'x-request-id',
].join(', ');

/**
 * How long a browser may reuse a preflight's answer. Short enough that an origin taken off
 * CORS_ORIGINS (a restart) is refused within ten minutes; Chromium caps it at two hours anyway.
 */
const PREFLIGHT_MAX_AGE_S = '600';

/** What a route allows across origins, from who may call it (its `config.access`). */
interface Policy {
  /** Public: any origin may call it without credentials (`*`). */
  anyOrigin: boolean;
  /** Takes credentials: only listed origins may send them, and they are told which origin may read. */
  credentialed: boolean;
  /** Takes the staff session cookie (operator, admin), so a listed origin's request may carry it. */
  cookies: boolean;
}

interface Grant {
  origin: string;
  credentials: boolean;
  allowHeaders: string;
}

export interface Cors {
  /** From the platform's onRequest hook, on a request that has an `Origin`: the route's CORS headers. */
  onRequest(request: FastifyRequest, reply: FastifyReply): void;
  /**
   * From the not-found handler (no route takes OPTIONS): a preflight for a method and path that a
   * route answers is answered 204, with CORS headers if its origin may call that route. False for
   * anything else, which keeps its 404 or 405.
   */
  preflight(request: FastifyRequest, reply: FastifyReply): boolean;
}

/**
 * CORS decided per route from its declared access (auth/access.ts), never from a list of paths:
 * public operations answer `Access-Control-Allow-Origin: *` without credentials, so any page may
 * read the catalogue or create a paste; credentialed ones only the origins in CORS_ORIGINS, each
 * echoed with `Vary: Origin`, and `Access-Control-Allow-Credentials` only where the route reads a
 * cookie. Bearer tokens and keys are not ambient, so no other page could send them anyway; the
 * list keeps a stolen or pasted key from being used by a page on some other origin. A route with
 * both (a paste read that the owner's key may also make) is public to every origin and
 * credentialed for the listed ones. Routes without an access declaration (pages, docs, /metrics)
 * get no CORS headers.
 */
export function registerCors(app: FastifyInstance, origins: readonly string[]): Cors {
  const listed = new Set(origins);
  const policies = new WeakMap<Access, Policy>();
  const router = shadowRouter(app);
  const methods = new Set<string>();
  const declared = new Set<string>();
  const publicGrant: Grant = { origin: '*', credentials: false, allowHeaders: REQUEST_HEADERS.join(', ') };
  const allHeaders = [...CREDENTIAL_HEADERS, ...REQUEST_HEADERS].join(', ');

  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat() as HTTPMethods[]) {
      const key = `${method} ${route.url}`;
      if (declared.has(key)) continue;
      declared.add(key);
      methods.add(method);
      router.on(method as HTTPMethod, route.url, () => {}, { access: route.config?.access });
    }
  });

  function policyOf(access: Access): Policy {
    let policy = policies.get(access);
    if (policy === undefined) {
      policy = {
        anyOrigin: access.public === true,
        credentialed: Boolean(
          access.user || access.service || access.operator || access.admin || access.account,
        ),
        cookies: Boolean(access.operator || access.admin),
      };
      policies.set(access, policy);
    }
    return policy;
  }

  /** The grant for this origin on a route of this access (none: no CORS headers), and whether it varies by origin. */
  function decide(access: Access, origin: string): { grant?: Grant; vary: boolean } {
    const policy = policyOf(access);
    if (policy.credentialed && listed.has(origin)) {
      return { grant: { origin, credentials: policy.cookies, allowHeaders: allHeaders }, vary: true };
    }
    // A route that is also credentialed answers listed origins differently: caches must tell them apart.
    if (policy.anyOrigin) return { grant: publicGrant, vary: policy.credentialed };
    return { vary: true };
  }

  function grantHeaders(reply: FastifyReply, { grant, vary }: { grant?: Grant; vary: boolean }) {
    if (vary) reply.header('vary', 'Origin');
    if (grant === undefined) return;
    reply.header('access-control-allow-origin', grant.origin);
    if (grant.credentials) reply.header('access-control-allow-credentials', 'true');
  }

  return {
    onRequest(request, reply) {
      const access = request.routeOptions.config?.access;
      const origin = request.headers.origin;
      if (access === undefined || origin === undefined) return;
      const decision = decide(access, origin);
      grantHeaders(reply, decision);
      if (decision.grant) reply.header('access-control-expose-headers', EXPOSED_HEADERS);
    },

    preflight(request, reply) {
      const origin = request.headers.origin;
      const method = request.headers['access-control-request-method'];
      if (request.method !== 'OPTIONS' || origin === undefined || typeof method !== 'string') return false;
      if (!methods.has(method)) return false;
      const found = router.find(method as HTTPMethod, request.url.split('?')[0]);
      if (found === null) return false;
      const access = (found.store as { access?: Access }).access;
      const decision = access === undefined ? { vary: false } : decide(access, origin);
      grantHeaders(reply, decision);
      if (decision.grant) {
        reply
          .header('access-control-allow-methods', method)
          .header('access-control-allow-headers', decision.grant.allowHeaders)
          .header('access-control-max-age', PREFLIGHT_MAX_AGE_S);
      }
      reply.code(204).send();
      return true;
    },
  };
}
