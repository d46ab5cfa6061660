import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';

/**
 * The operator pages (dev inbox: every user's messages; dead letters: redrive) need the admin key,
 * like the JSON API behind them. A browser cannot send X-Admin-Key, so a small form trades the key
 * for a cookie holding an HMAC of it (never the key itself): HttpOnly, and SameSite=Strict so
 * another site cannot make the browser post a redrive (no CSRF token needed).
 */
const COOKIE = 'notify_admin';

export function adminGate(app: FastifyInstance, adminApiKey: string | undefined) {
  const token = adminApiKey
    ? createHmac('sha256', adminApiKey).update('notify.pages.admin').digest('base64url')
    : '';
  const valid = (request: FastifyRequest) => {
    if (!adminApiKey) return true;
    const given = cookie(request.headers.cookie, COOKIE) ?? '';
    return given.length === token.length && timingSafeEqual(Buffer.from(given), Buffer.from(token));
  };
  const login = (reply: FastifyReply, next: string, failed = false) =>
    reply.code(401).page('/notify/pages/login', {
      title: 'Admin key needed',
      styles: ['/static/notify/notify.css'],
      next,
      failed,
    });

  app.post<{ Body: { key?: string; next?: string } }>(
    '/notify/admin-session',
    {
      schema: {
        hide: true,
        body: Type.Object({ key: Type.String({ maxLength: 500 }), next: Type.String({ maxLength: 500 }) }),
      },
    },
    async (request, reply) => {
      const next = safeNext(request.body.next);
      const given = Buffer.from(request.body.key ?? '');
      const expected = Buffer.from(adminApiKey ?? '');
      if (!adminApiKey || given.length !== expected.length || !timingSafeEqual(given, expected)) {
        return login(reply, next, true);
      }
      const secure = request.protocol === 'https' ? '; Secure' : '';
      reply.header(
        'set-cookie',
        `${COOKIE}=${token}; Path=/notify; HttpOnly; SameSite=Strict; Max-Age=43200${secure}`,
      );
      return reply.redirect(next, 303);
    },
  );

  /** Answers with the login form and returns false when the request has no valid admin cookie. */
  return (request: FastifyRequest, reply: FastifyReply): boolean => {
    if (valid(request)) return true;
    login(reply, safeNext(request.method === 'GET' ? request.url : '/notify'));
    return false;
  };
}

/** Only a path on this site, so the form cannot be used to bounce a user elsewhere. */
function safeNext(next: string | undefined): string {
  return next && /^\/notify(\/|\?|$)/.test(next) && !next.startsWith('//') ? next : '/notify';
}

function cookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}
