import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { AppError } from '../../platform/errors.ts';
import { PUBLIC_OR_OWNER } from '../accounts.ts';
import type { PastePagesOptions } from './routes.ts';
import { missingPage, SCRIPTS, STYLES } from './views.ts';

const SHORT_URL = /^[0-9A-Za-z]{1,8}$/;

/**
 * What follows a create on the pages: the "Paste created" page the form redirects to, and the
 * delete button (the creator's page holds the delete token; anyone else types it, or the owner's
 * API key). Tokens travel in cookies and form bodies only, never in a URL.
 */
export const pasteManageRoutes: FastifyPluginAsyncTypebox<PastePagesOptions> = async (app, options) => {
  const { pastes, cookies } = options;
  const page = { schema: { hide: true }, config: { access: PUBLIC_OR_OWNER } } as const;

  app.get<{ Params: { short_url: string } }>('/:short_url/created', page, async (request, reply) => {
    const { short_url: shortUrl } = request.params;
    const flash = SHORT_URL.test(shortUrl) ? cookies.created(request, shortUrl) : undefined;
    // Another browser, or later: the creator's moment is over, the paste itself is what is left.
    if (!flash) return reply.redirect(`/${shortUrl}`, 303);
    const url = `${request.publicOrigin}/${shortUrl}`;
    return reply.header('cache-control', 'no-store').page('/paste/pages/created', {
      title: 'Paste created',
      created: { ...flash, url, api_url: `${request.publicOrigin}/api/v1/paste/${shortUrl}` },
      styles: STYLES,
      scripts: SCRIPTS,
    });
  });

  app.post<{ Params: { short_url: string }; Body: { token?: unknown } | undefined }>(
    '/:short_url/delete',
    page,
    async (request, reply) => {
      const { short_url: shortUrl } = request.params;
      if (!SHORT_URL.test(shortUrl)) return missingPage(reply, shortUrl);
      const token = typeof request.body?.token === 'string' ? request.body.token.trim() : '';
      if (token === '') {
        return refused(
          reply.code(400),
          shortUrl,
          'Type the delete token, or your API key if the paste is yours',
        );
      }
      // One field for both: the owner's API key (pk_…) or the paste's delete token.
      const owner = token.startsWith('pk_') ? await pastes.userByKey(token) : undefined;
      try {
        await pastes.deletePaste(shortUrl, {
          user: owner ? { id: owner.id } : undefined,
          deleteToken: owner ? undefined : token,
        });
      } catch (error) {
        if (!(error instanceof AppError) || error.status >= 500) throw error;
        if (error.code === 'paste_not_found') return missingPage(reply, shortUrl);
        return refused(reply.code(error.status), shortUrl, error.message);
      }
      cookies.clearCreated(request, reply, shortUrl);
      return reply.page('/platform/pages/message', {
        title: 'Paste deleted',
        message: `Paste ${shortUrl} is deleted: its link answers "Paste deleted" from now on.`,
        link: { href: '/paste', title: 'Create a new paste' },
      });
    },
  );
};

function refused(reply: FastifyReply, shortUrl: string, reason: string) {
  return reply.page('/platform/pages/message', {
    title: 'Not deleted',
    message: `${reason}.`,
    link: { href: `/${shortUrl}`, title: 'Back to the paste' },
  });
}
