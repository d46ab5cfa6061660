import type { FastifyRequest } from 'fastify';
import type { Access, AccountScheme } from '../platform/auth/index.ts';
import type { Account, PasteService, Reader } from './service.ts';

/**
 * Paste accounts keep their own API keys (`pk_…`, POST /api/v1/users), registered with the
 * platform as the account scheme `pasteKey`: the platform's hook proves them (wrong keys are
 * 401 and throttled per address like any credential) and sets `request.caller`.
 */
export const PASTE_KEY = 'pasteKey';

/** Anyone; the owner's key, when sent, adds what only the owner may see or do. */
export const PUBLIC_OR_OWNER: Access = { public: true, account: PASTE_KEY };
export const OWNER_ONLY: Access = { account: PASTE_KEY };

/** Only `Bearer pk_…` is this scheme's credential; any other Authorization is not a paste key. */
const BEARER_PASTE_KEY = /^Bearer\s+(pk_\S+)\s*$/i;

export function pasteKeyScheme(service: PasteService): AccountScheme {
  return {
    name: PASTE_KEY,
    openapi: {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'pk_…',
      description:
        'A paste account API key (`pk_…`, shown once by POST /api/v1/users), sent as Authorization: Bearer',
    },
    async resolve(request) {
      const key = BEARER_PASTE_KEY.exec(request.headers.authorization ?? '')?.[1];
      if (key === undefined) return undefined;
      const user = await service.userByKey(key);
      return user ? String(user.id) : null;
    },
  };
}

/** The paste account the platform proved for this request, if any. */
export function accountOf(request: FastifyRequest): Account | undefined {
  const caller = request.caller;
  return caller.kind === 'account' && caller.scheme === PASTE_KEY ? { id: BigInt(caller.userId) } : undefined;
}

/** Link-preview fetchers (chat apps, social networks, search engines): they must never burn a paste. */
const PREVIEW_AGENTS =
  /bot\b|crawler|spider|slurp|facebookexternalhit|facebot|twitterbot|slackbot|slack-imgproxy|discordbot|telegrambot|whatsapp|linkedinbot|skypeuripreview|embedly|iframely|mattermost|pinterest|vkshare|redditbot|applebot|google-safety|bingpreview|outlook|teams|preview/i;

export function isPreview(request: FastifyRequest): boolean {
  return request.method === 'HEAD' || PREVIEW_AGENTS.test(request.headers['user-agent'] ?? '');
}

/**
 * The reader of a request; its account is the one the platform's auth hook proved. `unlocked`:
 * the request carries the pages' proof that this browser gave the paste's password (cookies.ts).
 */
export function readerOf(request: FastifyRequest, password?: string, unlocked = false): Reader {
  const header = request.headers['x-paste-password'];
  return {
    user: accountOf(request),
    ip: request.ip,
    password: password ?? (typeof header === 'string' ? header : undefined),
    unlocked,
    preview: isPreview(request),
  };
}
