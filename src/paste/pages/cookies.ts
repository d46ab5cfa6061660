import type { FastifyReply, FastifyRequest } from 'fastify';
import { cookie } from '../../platform/auth/sessions.ts';
import type { Clock } from '../../platform/clock.ts';
import { signature, signatureMatches } from '../../platform/signing.ts';

/**
 * Two short-lived signed cookies of the paste pages, so that neither a delete token nor a password
 * ever travels in a URL (URLs end up in access logs, proxies and the browser's history):
 *
 * - `paste_created` (Path=/{id}/created, 10 min): the create form answers 303 to /{id}/created,
 *   which shows the link and the delete token from this cookie. Reloading that page creates nothing
 *   (POST/redirect/GET) and shows the token again while the cookie lives; after that, or in another
 *   browser, /{id}/created redirects to the paste. Signed so that nothing but this server's answer
 *   can put a "Paste created" page on the screen.
 * - `paste_unlock` (Path=/{id}, 10 min): a right password on the page proves it for that one
 *   paste, so its page after a reload, its Raw and its Download links open without asking again.
 *   It holds no password, only the paste's id, its expiry and a signature.
 *
 * Both are HttpOnly, SameSite=Strict, and Secure over https.
 */
export const FLASH_LIFETIME_S = 600;
const CREATED = 'paste_created';
const UNLOCK = 'paste_unlock';

export interface CreatedFlash {
  short_url: string;
  expires_at: string | null;
  delete_token: string;
}

export type PageCookies = ReturnType<typeof createPageCookies>;

export function createPageCookies(secret: string, clock: Clock) {
  const now = () => Math.floor(clock.now().getTime() / 1000);
  const attributes = (request: FastifyRequest, path: string, maxAge: number) =>
    `Path=${path}; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${request.protocol === 'https' ? '; Secure' : ''}`;

  /** `<payload>.<until>.<signature>`: the signature covers the purpose, the paste, the payload and the time. */
  function seal(purpose: string, shortUrl: string, payload: string): string {
    const until = String(now() + FLASH_LIFETIME_S);
    return `${payload}.${until}.${signature(secret, purpose, [shortUrl, payload, until])}`;
  }
  function open(purpose: string, shortUrl: string, value: string | undefined): string | undefined {
    const [payload, until, given, extra] = (value ?? '').split('.');
    if (given === undefined || extra !== undefined || !/^\d+$/.test(until) || Number(until) < now()) return;
    return signatureMatches(secret, purpose, [shortUrl, payload, until], given) ? payload : undefined;
  }

  return {
    setCreated(request: FastifyRequest, reply: FastifyReply, flash: CreatedFlash) {
      const payload = Buffer.from(JSON.stringify(flash)).toString('base64url');
      const value = seal(CREATED, flash.short_url, payload);
      reply.header(
        'set-cookie',
        `${CREATED}=${value}; ${attributes(request, `/${flash.short_url}/created`, FLASH_LIFETIME_S)}`,
      );
    },
    created(request: FastifyRequest, shortUrl: string): CreatedFlash | undefined {
      const payload = open(CREATED, shortUrl, cookie(request.headers.cookie, CREATED));
      if (payload === undefined) return undefined;
      const flash = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as CreatedFlash;
      return flash.short_url === shortUrl ? flash : undefined;
    },
    clearCreated(request: FastifyRequest, reply: FastifyReply, shortUrl: string) {
      reply.header('set-cookie', `${CREATED}=; ${attributes(request, `/${shortUrl}/created`, 0)}`);
    },
    setUnlocked(request: FastifyRequest, reply: FastifyReply, shortUrl: string) {
      const value = seal(UNLOCK, shortUrl, 'ok');
      reply.header(
        'set-cookie',
        `${UNLOCK}=${value}; ${attributes(request, `/${shortUrl}`, FLASH_LIFETIME_S)}`,
      );
    },
    /** Whether this request carries the proof that its browser gave this paste's password. */
    unlocked(request: FastifyRequest, shortUrl: string): boolean {
      return open(UNLOCK, shortUrl, cookie(request.headers.cookie, UNLOCK)) === 'ok';
    },
  };
}
