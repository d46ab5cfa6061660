import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { type AppError, platformError } from '../errors.ts';
import { rateLimitHeaders } from '../ratelimit/headers.ts';
import type { RateLimiter, RatePolicy } from '../ratelimit/index.ts';
import { type Access, describeAccess, SCHEMES, type SecurityScheme, securityOf } from './access.ts';
import { type Caller, PUBLIC_CALLER, sameUser } from './caller.ts';
import { grants, type KeyGrants, keyDigest, keyGrants } from './keys.ts';
import { createStaffSessions, type StaffSession, type StaffSessions } from './sessions.ts';
import { createUserTokens, type UserTokens } from './user-tokens.ts';

export type { Access } from './access.ts';
export { actingUser, type Caller, callerId } from './caller.ts';

/**
 * A module's own credential (paste's API keys): `resolve` answers undefined when the request
 * carries none of this kind, `null` when it carries one that is wrong, else the account's id.
 */
export interface AccountScheme {
  name: string;
  openapi: SecurityScheme;
  resolve(request: FastifyRequest): Promise<string | null | undefined>;
}

type Staff = Omit<StaffSession, 'exp'>;

export interface Auth {
  userTokens: UserTokens;
  sessions: StaffSessions;
  /** Registers a module's account scheme; call it while the module is created (before /openapi.json is). */
  addScheme(scheme: AccountScheme): void;
  /**
   * Who an operator or admin key signs in as on the sign-in page; undefined for a wrong key (which
   * counts against the address like any wrong credential: 429 once too many).
   */
  signIn(request: FastifyRequest, key: string): Promise<Staff | undefined>;
  /** The securitySchemes of /openapi.json. */
  securitySchemes(): Record<string, SecurityScheme>;
}

/** Wrong credentials per address before that address is refused for a while (brute force). */
export const FAILED_CREDENTIALS: RatePolicy = { name: 'auth.failures', points: 30, durationSec: 600 };

/**
 * The platform's one auth hook. A route declares `config.access` (access.ts); this installs, on
 * that route only, an onRequest hook (before the body is read and before idempotency) that proves
 * the caller and sets `request.caller`, and writes the declaration into the route's OpenAPI
 * `security`. Routes without credentials pay nothing.
 */
export function registerAuth(
  app: FastifyInstance,
  deps: { config: Config; limiter: RateLimiter; clock: Clock },
): Auth {
  const { config, limiter, clock } = deps;
  const userTokens = createUserTokens(config.secret);
  const sessions = createStaffSessions(config.secret, () => clock.now());
  const services = keyGrants(config.serviceKeys);
  const operators = keyGrants(config.operatorKeys);
  const adminDigest = keyDigest(config.adminApiKey);
  const accountSchemes = new Map<string, AccountScheme>();
  const blockedUntil = new Map<string, number>();

  const callerSlot = Symbol('caller');
  app.decorateRequest('caller', {
    getter(this: FastifyRequest & { [callerSlot]?: Caller }) {
      return this[callerSlot] ?? PUBLIC_CALLER;
    },
    setter(this: FastifyRequest & { [callerSlot]?: Caller }, caller: Caller) {
      this[callerSlot] = caller;
    },
  });

  app.addHook('onRoute', (route: RouteOptions) => {
    const access = route.config?.access;
    if (!access) return;
    if (route.schema && !route.schema.hide) {
      route.schema = {
        ...route.schema,
        security: securityOf(access),
        description: [route.schema.description, describeAccess(access)].filter(Boolean).join('\n\n'),
      };
    }
    // Public alone needs no proof; everything else is checked first thing.
    if (isPublicOnly(access)) return;
    // A page (hidden from the API description) sends a browser to the sign-in page instead of a 401.
    const page = route.schema?.hide === true;
    // Callback style, so a public request that carries no credential (a paste read) goes on
    // without a promise; anything else is proven before the body is read.
    const check = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
      if (access.public && !carriesCredential(request, access)) return done();
      // The common case, a right key, session or token of a kind the route takes, is decided here
      // without a promise; account schemes, refusals and sign-in redirects take the long way.
      const proven = access.account === undefined ? provenAtOnce(request, access) : undefined;
      if (proven !== undefined) {
        try {
          request.caller = ownerChecked(request, access, proven);
        } catch (error) {
          return done(error as Error);
        }
        return done();
      }
      authenticate(request, reply, access, page).then((caller) => {
        // No caller: a page was redirected to the sign-in page, and that reply is sent.
        if (caller === undefined) return;
        request.caller = caller;
        done();
      }, done);
    };
    const existing = route.onRequest === undefined ? [] : [route.onRequest].flat();
    route.onRequest = [check, ...existing] as RouteOptions['onRequest'];
  });

  async function authenticate(
    request: FastifyRequest,
    reply: FastifyReply,
    access: Access,
    page: boolean,
  ): Promise<Caller | undefined> {
    const address = request.ip;
    const until = blockedUntil.get(address);
    if (until !== undefined) {
      if (until > Date.now()) throw tooManyFailures(until - Date.now());
      blockedUntil.delete(address);
    }
    let refusal: 'invalid' | 'scope' | undefined;
    for (const found of await presented(request, access)) {
      if (found === 'invalid') refusal = 'invalid';
      else if (found === 'scope') refusal ??= 'scope';
      else return ownerChecked(request, access, found);
    }
    if (refusal === 'invalid') return failed(address, challenge(access, 'invalid_token'));
    // Nothing of the kinds this route takes (say, HTTP Basic in front of a public page): public,
    // and never a sign-in redirect.
    if (refusal === undefined && access.public) return PUBLIC_CALLER;
    if (page) return signInPage(request, reply, access);
    if (refusal === 'scope') {
      throw platformError('forbidden', { detail: 'These credentials do not allow this operation' });
    }
    throw platformError('unauthorized', {
      detail: `This operation needs credentials. ${describeAccess(access)}`,
      headers: { 'WWW-Authenticate': challenge(access) },
    });
  }

  /** The first right credential of an accepted kind, unless the address is refused for now. */
  function provenAtOnce(request: FastifyRequest, access: Access): Caller | undefined {
    // Reading the address costs a socket lookup; nobody is blocked most of the time.
    if (blockedUntil.size > 0 && blockedUntil.has(request.ip)) return undefined;
    for (const found of presentedKeys(request, access)) if (typeof found === 'object') return found;
    return undefined;
  }

  /** Every credential of an accepted kind the request carries: a caller, or why it does not count. */
  async function presented(
    request: FastifyRequest,
    access: Access,
  ): Promise<(Caller | 'invalid' | 'scope')[]> {
    const found = presentedKeys(request, access);
    if (access.account) {
      const scheme = accountSchemes.get(access.account);
      if (!scheme) throw new Error(`account scheme ${access.account} is not registered`);
      const userId = await scheme.resolve(request);
      if (userId === null) found.push('invalid');
      else if (userId !== undefined) found.push({ kind: 'account', scheme: scheme.name, userId });
    }
    return found;
  }

  /** The platform's own kinds (keys, sessions, user tokens): all decided without I/O. */
  function presentedKeys(request: FastifyRequest, access: Access): (Caller | 'invalid' | 'scope')[] {
    const found: (Caller | 'invalid' | 'scope')[] = [];
    const headers = request.headers;
    if (access.admin && headers['x-admin-key'] !== undefined) {
      found.push(
        keyDigest(String(headers['x-admin-key'])) === adminDigest
          ? { kind: 'admin', name: 'admin-key' }
          : 'invalid',
      );
    }
    if (access.service && headers['x-api-key'] !== undefined) {
      found.push(scopedKey('service', services, headers['x-api-key'], access.service));
    }
    if (access.operator && headers['x-operator-key'] !== undefined) {
      found.push(scopedKey('operator', operators, headers['x-operator-key'], access.operator));
    }
    if (access.operator || access.admin) {
      const value = sessions.presented(request);
      if (value !== undefined) found.push(sessionCaller(value, access));
    }
    if (access.user && headers.authorization?.startsWith('Bearer UT1.')) {
      try {
        const userId = userTokens.userOf(headers.authorization);
        if (userId !== undefined) found.push({ kind: 'user', userId });
      } catch {
        found.push('invalid');
      }
    }
    return found;
  }

  function sessionCaller(value: string, access: Access): Caller | 'invalid' | 'scope' {
    const session = sessions.verify(value);
    // An expired session is not a guess: the page signs in again instead of counting a failure.
    if (!session) return 'scope';
    if (session.kind === 'admin') return access.admin ? { kind: 'admin', name: session.name } : 'scope';
    const scopes = new Set(session.scopes);
    return access.operator && grants({ scopes }, access.operator)
      ? { kind: 'operator', name: session.name, scopes }
      : 'scope';
  }

  async function failed(address: string, authenticate?: string): Promise<never> {
    const decision = await limiter.consume(FAILED_CREDENTIALS, address);
    if (!decision.allowed) {
      blockedUntil.set(address, Date.now() + decision.resetMs);
      throw tooManyFailures(decision.resetMs);
    }
    // The guesses left from this address, as on every limited route.
    throw platformError('unauthorized', {
      detail: 'The credentials sent are not valid',
      headers: {
        ...rateLimitHeaders(FAILED_CREDENTIALS, decision),
        ...(authenticate ? { 'WWW-Authenticate': authenticate } : {}),
      },
    });
  }

  /**
   * A staff page without a session: development signs in the demo operator (or admin) by itself,
   * production sends the browser to the sign-in page and back.
   */
  function signInPage(request: FastifyRequest, reply: FastifyReply, access: Access): Caller | undefined {
    const staff = devStaff(access);
    if (staff) {
      sessions.set(request, reply, sessions.issue(staff));
      return staff.kind === 'admin'
        ? { kind: 'admin', name: staff.name }
        : { kind: 'operator', name: staff.name, scopes: new Set(staff.scopes) };
    }
    const next = request.method === 'GET' ? request.url : '/';
    reply.redirect(`/sign-in?next=${encodeURIComponent(next)}`, 303);
    return undefined;
  }

  function devStaff(access: Access): Staff | undefined {
    if (!config.development) return undefined;
    const demo = config.operatorKeys.find((grant) => grant.scopes.has('*'));
    if (access.operator && demo) return { kind: 'operator', name: demo.name, scopes: [...demo.scopes] };
    if (access.admin) return { kind: 'admin', name: 'dev-admin', scopes: ['admin'] };
    return undefined;
  }

  async function signIn(request: FastifyRequest, key: string): Promise<Staff | undefined> {
    if (keyDigest(key) === adminDigest) return { kind: 'admin', name: 'admin', scopes: ['admin'] };
    const grant = operators.find(key);
    if (grant) return { kind: 'operator', name: grant.name, scopes: [...grant.scopes] };
    await failed(request.ip).catch((error: AppError) => {
      if (error.status === 429) throw error;
    });
    return undefined;
  }

  return {
    userTokens,
    sessions,
    addScheme: (scheme) => void accountSchemes.set(scheme.name, scheme),
    signIn,
    securitySchemes: () => ({
      [SCHEMES.user]: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'UT1',
        description: 'A user token: POST /api/v1/guests, or an identity provider holding APP_SECRET',
      },
      [SCHEMES.service]: {
        type: 'apiKey',
        in: 'header',
        name: 'x-api-key',
        description: 'A service API key (SERVICE_KEYS); the roles listed are the scopes it needs',
      },
      [SCHEMES.operator]: {
        type: 'apiKey',
        in: 'header',
        name: 'x-operator-key',
        description: 'An operator key (OPERATOR_KEYS): door staff, parking panels and attendants',
      },
      [SCHEMES.admin]: { type: 'apiKey', in: 'header', name: 'x-admin-key', description: 'The admin key' },
      [SCHEMES.session]: {
        type: 'apiKey',
        in: 'cookie',
        name: 'staff_session',
        description: 'A staff page session from the sign-in page (/sign-in)',
      },
      ...Object.fromEntries([...accountSchemes.values()].map((scheme) => [scheme.name, scheme.openapi])),
    }),
  };
}

function carriesCredential(request: FastifyRequest, access: Access): boolean {
  const headers = request.headers;
  return (
    ((access.user || access.account) && headers.authorization !== undefined) ||
    (access.service && headers['x-api-key'] !== undefined) ||
    (access.operator && headers['x-operator-key'] !== undefined) ||
    (access.admin && headers['x-admin-key'] !== undefined) ||
    ((access.operator || access.admin) && headers.cookie !== undefined) ||
    false
  );
}

function isPublicOnly(access: Access): boolean {
  return (
    access.public === true &&
    !access.user &&
    !access.service &&
    !access.operator &&
    !access.admin &&
    !access.account
  );
}

/** A user's own data: another user's token is answered as if the data did not exist. */
function ownerChecked(request: FastifyRequest, access: Access, caller: Caller): Caller {
  if (caller.kind !== 'user' || typeof access.user !== 'object') return caller;
  const owner = (request.params as Record<string, string | undefined>)[access.user.param];
  if (owner === undefined || !sameUser(owner, caller.userId))
    throw platformError('not_found', 'No such user');
  return caller;
}

/** RFC 6750 / 7235: how to authenticate; `error` says why the credentials sent were refused. */
function challenge(access: Access, error?: 'invalid_token'): string {
  if (access.user || access.account) return error ? `Bearer error="${error}"` : 'Bearer';
  if (access.service) return 'ApiKey header="x-api-key"';
  if (access.operator) return 'ApiKey header="x-operator-key"';
  return 'ApiKey header="x-admin-key"';
}

function tooManyFailures(resetMs: number) {
  return platformError('rate_limited', {
    detail: 'Too many wrong credentials from this address; try again later',
    headers: rateLimitHeaders(FAILED_CREDENTIALS, {
      allowed: false,
      remaining: 0,
      resetMs,
      limit: FAILED_CREDENTIALS.points,
    }),
  });
}

/** A service or operator key as presented: its caller, 'scope' (right key, not this scope) or 'invalid'. */
function scopedKey(
  kind: 'service' | 'operator',
  keys: KeyGrants,
  presented: string | string[],
  scope: string,
): Caller | 'invalid' | 'scope' {
  const grant = keys.find(String(presented));
  if (!grant) return 'invalid';
  return grants(grant, scope) ? { kind, name: grant.name, scopes: grant.scopes } : 'scope';
}
