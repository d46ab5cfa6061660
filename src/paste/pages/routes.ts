import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../platform/errors.ts';
import { serveStatic } from '../../platform/pages/index.ts';
import { isPreview, PUBLIC_OR_OWNER, readerOf } from '../accounts.ts';
import { asksForHtml, isUpload, PageForm, sendCreatedText } from '../commandline.ts';
import {
  createFromCommandLine,
  createRouteOptions,
  spendAndCreate,
  useCreateBodyParsers,
} from '../create.ts';
import { pasteError } from '../errors.ts';
import { LANGUAGES } from '../highlight.ts';
import type { PasteReads } from '../reads.ts';
import { sendRaw } from '../routes.ts';
import { CreatePasteQuery, homeCreateBody, problems } from '../schemas.ts';
import type { CreateInput, PasteService } from '../service.ts';
import type { PageCookies } from './cookies.ts';
import { pasteManageRoutes } from './manage.ts';
import { ENCRYPTED_SCRIPTS, ENCRYPTED_STYLES, missingPage, pageData, viewPage } from './views.ts';

const SHORT_URL = /^[0-9A-Za-z]{1,8}$/;
const EXPIRY_CHOICES = [
  { value: '', label: 'Never' },
  { value: '600', label: '10 minutes' },
  { value: '3600', label: '1 hour' },
  { value: '86400', label: '1 day' },
  { value: '604800', label: '1 week' },
  { value: '2592000', label: '30 days' },
  { value: '31536000', label: '1 year' },
];

interface FormFields {
  content?: string;
  syntax?: string;
  expires_in?: string;
  password?: string;
  burn_after_read?: string;
  is_private?: string;
  api_key?: string;
}

export interface PastePagesOptions {
  pastes: PasteService;
  reads: PasteReads;
  cookies: PageCookies;
}

/**
 * The HTML side: the create form (at / and /paste), paste pages, and their error pages. Pages
 * have no body schema (their errors are shown on the page, not as problem+json), so the posted
 * fields' types are declared on each route.
 */
export const pastePageRoutes: FastifyPluginAsyncTypebox<PastePagesOptions> = async (app, options) => {
  const { pastes, reads, cookies } = options;
  serveStatic(app, 'paste', new URL('./static/', import.meta.url));
  const hide = { schema: { hide: true } };
  // Pages are public; a paste page also answers its owner's key (Authorization: Bearer pk_…),
  // proven by the platform like on the API, so a private paste's page opens for its owner.
  const open = { ...hide, config: { access: { public: true } } } as const;
  const reading = { ...hide, config: { access: PUBLIC_OR_OWNER } } as const;

  const form = (reply: FastifyReply, home: boolean, values: FormFields = {}, error?: string) =>
    reply.page('/paste/pages/form', {
      title: home ? 'Home' : 'New paste',
      home,
      languages: LANGUAGES,
      expiries: EXPIRY_CHOICES,
      values,
      error,
      origin: reply.request.publicOrigin,
      // The form can encrypt in the browser (static/encrypted.js).
      styles: ENCRYPTED_STYLES,
      scripts: ENCRYPTED_SCRIPTS,
    });
  app.get('/', open, (_request, reply) => form(reply, true));
  app.get('/paste', open, (_request, reply) => form(reply, false));

  // POST / is where the create form posts, and what curl users type (`curl -F file=@f host/`,
  // `curl --data-binary @f host/`): its own scope has the create routes' body parsers.
  await app.register(async (scope) => {
    useCreateBodyParsers(scope, { pageForm: true });
    scope.post(
      '/',
      {
        schema: {
          tags: ['paste'],
          summary: 'Create a paste from the form or the command line (`curl -F file=@file host/`)',
          operationId: 'postPasteAtRoot',
          description:
            'The create form (a browser: answered with a page), or what curl sends: a multipart upload ' +
            '(`-F file=@file`, options as other fields), or the text itself (`--data-binary @file`: an ' +
            'x-www-form-urlencoded body that is not the form, of `content=…` and the form’s fields, is the text). ' +
            'A client that does not ask for HTML gets the URL as text/plain, the delete token in X-Delete-Token, ' +
            'and problem+json errors. Limits as POST /api/v1/paste.',
          body: homeCreateBody,
          querystring: CreatePasteQuery,
          response: {
            201: {
              content: {
                'text/plain': { schema: { type: 'string' } },
                'text/html': { schema: { type: 'string' } },
              },
            },
            ...problems(400, 401, 413, 415, 422, 429),
          },
        },
        ...createRouteOptions,
      },
      async (request, reply) => {
        const { body } = request;
        if (body instanceof PageForm) return formCreate(request, reply, body.fields);
        if (typeof body === 'string' || isUpload(body))
          return createFromCommandLine(pastes, request, reply, body);
        return formCreate(request, reply, {});
      },
    );
  });

  /** The form's fields: a browser gets the page (or the form again with the mistake), others the URL. */
  async function formCreate(request: FastifyRequest, reply: FastifyReply, fields: FormFields) {
    if (!asksForHtml(request)) {
      const owner = await formOwner(fields.api_key);
      return sendCreatedText(reply, await spendAndCreate(pastes, request, reply, formInput(fields), owner));
    }
    try {
      const owner = await formOwner(fields.api_key);
      const created = await spendAndCreate(pastes, request, reply, formInput(fields), owner);
      // POST/redirect/GET: a reload of the answer shows it again and creates nothing (cookies.ts).
      cookies.setCreated(request, reply, created);
      return reply.redirect(`/${created.short_url}/created`, 303);
    } catch (error) {
      if (!(error instanceof AppError) || error.status >= 500) throw error;
      for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
      return form(reply.code(error.status), false, { ...fields, password: '' }, error.message);
    }
  }

  app.get<{ Params: { short_url: string } }>('/:short_url', reading, async (request, reply) => {
    const { short_url: shortUrl } = request.params;
    // One URL, two answers: the page for browsers, the text for curl (`curl host/abc123`).
    reply.header('vary', 'Accept');
    if (!asksForHtml(request)) return readText(request, reply, shortUrl);
    if (!SHORT_URL.test(shortUrl)) return missingPage(reply, shortUrl);
    const cached = reads.peek(shortUrl);
    if (cached?.open) {
      if (request.method !== 'HEAD') reads.countView(cached);
      return viewPage(reads, reply, cached);
    }
    // A GET never burns (browsers prefetch, bots preview): a burn-after-read paste takes a deliberate POST.
    return readPage(options, request, reply, shortUrl, { preview: true });
  });

  await app.register(pasteManageRoutes, options);

  app.post<{ Params: { short_url: string }; Body: { password?: unknown } | undefined }>(
    '/:short_url',
    reading,
    async (request, reply) => {
      const { short_url: shortUrl } = request.params;
      if (!SHORT_URL.test(shortUrl)) return missingPage(reply, shortUrl);
      const password = typeof request.body?.password === 'string' ? request.body.password : undefined;
      return readPage(options, request, reply, shortUrl, { password });
    },
  );

  /**
   * The paste's text for a client that does not ask for HTML, as /{id}/raw answers it (ETag,
   * problem+json errors), except that, like the page, a GET of this URL never burns: a
   * burn-after-read paste is read at /{id}/raw.
   */
  async function readText(request: FastifyRequest, reply: FastifyReply, shortUrl: string) {
    if (!SHORT_URL.test(shortUrl)) throw pasteError('paste_not_found', `No paste ${shortUrl}`);
    const cached = reads.peek(shortUrl);
    if (cached?.open) {
      if (request.method !== 'HEAD') reads.countView(cached);
      return sendRaw(request, reply, cached, false);
    }
    const outcome = await pastes.read(shortUrl, { ...readerOf(request), preview: true }, { text: true });
    if (outcome.kind === 'preview') {
      return reply
        .header('cache-control', 'no-store')
        .type('text/plain; charset=utf-8')
        .send(
          `This paste is deleted after it is read once. Read it with: curl ${request.publicOrigin}/${shortUrl}/raw\n`,
        );
    }
    if (!isPreview(request)) reads.countView(outcome.entry);
    return sendRaw(request, reply, outcome.entry, false);
  }

  /**
   * The form's API-key field: a browser cannot send Authorization, so the key comes in the body
   * and is looked up the way the platform's pasteKey scheme does (by its hash).
   */
  async function formOwner(apiKey: string | undefined) {
    if (!apiKey) return undefined;
    const user = await pastes.userByKey(apiKey.trim());
    if (!user) throw pasteError('invalid_api_key', 'No account has this API key');
    return user;
  }
};

/**
 * A paste page through the service's read checks: the paste, a burn button (a preview of a
 * burn-after-read paste), the password form, or the 404/410 page.
 */
async function readPage(
  { pastes, reads, cookies }: PastePagesOptions,
  request: FastifyRequest,
  reply: FastifyReply,
  shortUrl: string,
  options: { password?: string; preview?: boolean },
) {
  try {
    const reader = readerOf(request, options.password, cookies.unlocked(request, shortUrl));
    const outcome = await pastes.read(shortUrl, {
      ...reader,
      preview: reader.preview || options.preview === true,
    });
    if (outcome.kind === 'preview')
      return reply.page('/paste/pages/unlock', pageData(outcome.entry, { burn: true }));
    const { paste } = outcome.entry;
    if (paste.burn_after_read) {
      return viewPage(reads, reply.header('cache-control', 'no-store'), outcome.entry, { burned: true });
    }
    if (paste.password_hash !== null && options.password !== undefined) {
      // The right password: proven for this paste in this browser for a while, so the page
      // (reloaded), Raw and Download open without it; and the POST is not left to be resent.
      cookies.setUnlocked(request, reply, shortUrl);
      return reply.redirect(`/${shortUrl}`, 303);
    }
    // An unlocked paste's Raw and Download answer to the unlock cookie; a private one's only to its
    // owner's key, which a browser's link does not send.
    return viewPage(reads, reply.header('cache-control', 'private, no-store'), outcome.entry, {
      rawLinks: !paste.is_private,
    });
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
    switch (error.code) {
      case 'paste_not_found':
        return missingPage(reply, shortUrl);
      case 'paste_expired':
      case 'paste_deleted':
        return reply.code(410).page('/platform/pages/message', {
          title: error.code === 'paste_expired' ? 'Paste expired' : 'Paste deleted',
          message: `${error.message}. Pastes that are gone stay gone.`,
          link: { href: '/paste', title: 'Create a new paste' },
        });
      case 'password_required':
      case 'wrong_password':
      case 'too_many_password_attempts': {
        const found = await reads.lookup(shortUrl);
        if (found?.state !== 'live') return missingPage(reply, shortUrl);
        return reply.code(error.status).page(
          '/paste/pages/unlock',
          pageData(found.entry, {
            password: true,
            burn: found.entry.paste.burn_after_read,
            error: error.code === 'password_required' ? undefined : error.message,
          }),
        );
      }
      default:
        throw error;
    }
  }
}

/** The form's fields as a create: checked before the create allowance is spent, as the API's are. */
function formInput(fields: FormFields): CreateInput {
  if (!fields.content) throw pasteError('invalid_option', 'Write or paste some text first');
  const expires = fields.expires_in ? Number(fields.expires_in) : undefined;
  if (expires !== undefined && !Number.isInteger(expires))
    throw pasteError('invalid_option', 'Pick an expiry from the list');
  return {
    // Browsers submit a textarea with CRLF line breaks whatever was typed or pasted (HTML spec).
    content: (fields.content ?? '').replaceAll('\r\n', '\n'),
    syntax: fields.syntax || undefined,
    expires_in: expires,
    password: fields.password || undefined,
    burn_after_read: fields.burn_after_read === 'on' || fields.burn_after_read === 'true',
    is_private: fields.is_private === 'on' || fields.is_private === 'true',
  };
}
