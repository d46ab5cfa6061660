import type { FastifyReply, FastifyRequest } from 'fastify';
import { signature, signatureMatches } from '../signing.ts';

/**
 * The page session of staff (operators and admins): a browser cannot send X-Operator-Key, so the
 * sign-in form trades a key for a signed cookie naming who signed in and what they may do (never
 * the key itself). HttpOnly; SameSite=Strict, so another site cannot make the browser use it
 * (no CSRF token needed: the API refuses form posts for JSON routes, and the cookie never rides
 * along on a cross-site request).
 */
export interface StaffSession {
  kind: 'operator' | 'admin';
  name: string;
  scopes: string[];
  /** Seconds since the epoch. */
  exp: number;
}

export const SESSION_COOKIE = 'staff_session';
const PURPOSE = 'staff-session';
const LIFETIME_S = 12 * 3600;

export function createStaffSessions(secret: string, now: () => Date) {
  const issue = (session: Omit<StaffSession, 'exp'>): string => {
    const payload = Buffer.from(
      JSON.stringify({ ...session, exp: Math.floor(now().getTime() / 1000) + LIFETIME_S }),
    ).toString('base64url');
    return `S1.${payload}.${signature(secret, PURPOSE, [payload])}`;
  };

  /** The session a cookie value proves; undefined for a forged, altered or expired one. */
  const verify = (value: string): StaffSession | undefined => {
    const [version, payload, sig] = value.split('.');
    if (version !== 'S1' || !payload || !sig || !signatureMatches(secret, PURPOSE, [payload], sig)) {
      return undefined;
    }
    const session = JSON.parse(Buffer.from(payload, 'base64url').toString()) as StaffSession;
    return session.exp * 1000 > now().getTime() ? session : undefined;
  };

  return {
    issue,
    verify,
    /** The cookie value sent with this request, if any. */
    presented: (request: FastifyRequest): string | undefined =>
      cookie(request.headers.cookie, SESSION_COOKIE),
    /** Sets the cookie on a reply (Secure when the request came over https). */
    set(request: FastifyRequest, reply: FastifyReply, value: string): void {
      reply.header('set-cookie', cookieHeader(request, value, LIFETIME_S));
    },
    clear(request: FastifyRequest, reply: FastifyReply): void {
      reply.header('set-cookie', cookieHeader(request, '', 0));
    },
  };
}

export type StaffSessions = ReturnType<typeof createStaffSessions>;

function cookieHeader(request: FastifyRequest, value: string, maxAge: number): string {
  const secure = request.protocol === 'https' ? '; Secure' : '';
  return `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${secure}`;
}

export function cookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) return part.slice(index + 1).trim();
  }
  return undefined;
}
