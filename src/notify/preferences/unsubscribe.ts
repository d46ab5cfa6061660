import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { Clock } from '../../platform/clock.ts';
import { signature, signatureMatches } from '../../platform/signing.ts';
import { err } from '../errors.ts';
import type { PreferencesRepository } from './repository.ts';

/**
 * The one-click unsubscribe of bulk e-mail (RFC 8058). Its link is in the mail's
 * `List-Unsubscribe` header: the path carries the user id signed with APP_SECRET, and that
 * signature is the only credential (the person reading the mail holds no token of ours). A mail
 * provider POSTs `List-Unsubscribe=One-Click` to it; people and link scanners GET it, and a GET
 * only shows a page with the button, because scanners follow every link in a mail.
 */
const PURPOSE = 'notify.unsubscribe.email_marketing';
export const UNSUBSCRIBE_PATH = '/notify/unsubscribe';
const TOKEN = /^([A-Za-z0-9_-]{1,64})\.([\w-]{43})$/;

export function unsubscribeToken(secret: string, userId: string): string {
  return `${userId}.${signature(secret, PURPOSE, [userId])}`;
}

export function unsubscribeUrl(baseUrl: string, secret: string, userId: string): string {
  return `${baseUrl}${UNSUBSCRIBE_PATH}/${unsubscribeToken(secret, userId)}`;
}

/** The user a token was made for, or undefined when it is not one of ours. */
export function unsubscribeUser(secret: string, token: string): string | undefined {
  const match = TOKEN.exec(token);
  return match && signatureMatches(secret, PURPOSE, [match[1]], match[2]) ? match[1] : undefined;
}

const Params = Type.Object({
  token: Type.String({ minLength: 45, maxLength: 108, pattern: '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$' }),
});
const anyone = { access: { public: true } } as const;
const common = { styles: ['/static/notify/notify.css'] };

export const unsubscribeRoutes: FastifyPluginAsyncTypebox<{
  secret: string;
  repo: Pick<PreferencesRepository, 'unsubscribeEmailMarketing'>;
  clock: Clock;
}> = async (scope, { secret, repo, clock }) => {
  // RFC 8058 lets the provider send the one-click body as multipart/form-data too; the body says
  // nothing the URL does not, so this scope reads none (formbody still takes the urlencoded one).
  scope.addContentTypeParser('multipart/form-data', { parseAs: 'string', bodyLimit: 4096 }, (_r, _b, done) =>
    done(null, undefined),
  );
  const userOf = (token: string) => {
    const userId = unsubscribeUser(secret, token);
    if (!userId) throw err('unsubscribe_link_invalid', 'This unsubscribe link is not one we sent');
    return userId;
  };
  const page = (reply: FastifyReply, title: string, message: string, token?: string) =>
    reply.header('cache-control', 'no-store').page('/notify/pages/unsubscribe', {
      ...common,
      title,
      message,
      action: token ? `${UNSUBSCRIBE_PATH}/${token}` : undefined,
    });

  scope.get(
    `${UNSUBSCRIBE_PATH}/:token`,
    {
      config: anyone,
      schema: {
        tags: ['notifications'],
        summary: 'Unsubscribe page (List-Unsubscribe link): a button, nothing changed by the GET',
        params: Params,
        response: {
          200: { description: 'An HTML page', content: { 'text/html': { schema: { type: 'string' } } } },
        },
      },
    },
    async (request, reply) => {
      userOf(request.params.token);
      return page(
        reply,
        'Unsubscribe',
        'Stop marketing e-mail to this address? Booking confirmations, tickets and security alerts still come.',
        request.params.token,
      );
    },
  );

  scope.post(
    `${UNSUBSCRIBE_PATH}/:token`,
    {
      config: { ...anyone, openapi: { problems: [404] } },
      schema: {
        tags: ['notifications'],
        summary:
          'One-click unsubscribe (RFC 8058): turns off marketing e-mail; the signed link is the credential',
        description:
          "Mail providers POST `List-Unsubscribe=One-Click`; the page's button posts here too. Idempotent. " +
          '404 `unsubscribe_link_invalid` for a link we did not sign.',
        params: Params,
        response: {
          200: { description: 'An HTML page', content: { 'text/html': { schema: { type: 'string' } } } },
        },
      },
    },
    async (request, reply) => {
      const userId = userOf(request.params.token);
      await repo.unsubscribeEmailMarketing(userId, clock.now());
      return page(reply, 'Unsubscribed', 'You will get no more marketing e-mail from us.');
    },
  );
};
