import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { Auth } from './index.ts';

const Form = Type.Object({
  key: Type.String({ maxLength: 512 }),
  next: Type.Optional(Type.String({ maxLength: 500 })),
});

/**
 * The staff sign-in page: an operator or admin key traded for a page session (sessions.ts), so
 * panels, door scanners and admin pages work in a browser. Wrong keys count against the address
 * like any other wrong credential.
 */
export function registerSignIn(app: FastifyInstance, auth: Auth): void {
  const form = (reply: FastifyReply, next: string, failed = false) =>
    reply.code(failed ? 401 : 200).page('/platform/auth/pages/sign-in', { title: 'Sign in', next, failed });

  app.get<{ Querystring: { next?: string } }>(
    '/sign-in',
    {
      schema: {
        hide: true,
        querystring: Type.Object({ next: Type.Optional(Type.String({ maxLength: 500 })) }),
      },
    },
    (request, reply) => form(reply, safeNext(request.query.next)),
  );

  app.post<{ Body: { key: string; next?: string } }>(
    '/sign-in',
    { schema: { hide: true, body: Form } },
    async (request, reply) => {
      const next = safeNext(request.body.next);
      const staff = await auth.signIn(request, request.body.key);
      if (!staff) return form(reply, next, true);
      auth.sessions.set(request, reply, auth.sessions.issue(staff));
      return reply.redirect(next, 303);
    },
  );

  app.post('/sign-out', { schema: { hide: true } }, (request, reply) => {
    auth.sessions.clear(request, reply);
    return reply.redirect('/', 303);
  });
}

/** Only a path of this site, so the form cannot bounce a user to another one. */
export function safeNext(next: string | undefined): string {
  return next && /^\/(?![/\\])/.test(next) ? next : '/';
}
