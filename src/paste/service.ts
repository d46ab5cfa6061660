import { LRUCache } from 'lru-cache';
import { Counter, type Registry } from 'prom-client';
import type { Clock } from '../platform/clock.ts';
import { isUniqueViolation } from '../platform/db/errors.ts';
import { rateLimitHeaders } from '../platform/ratelimit/headers.ts';
import type { RateDecision, RateLimiter, RatePolicy } from '../platform/ratelimit/index.ts';
import { createBatcher } from './batcher.ts';
import { checkText, packContent, type StoredContent } from './content.ts';
import { checkEnvelope, ENCRYPTION } from './envelope.ts';
import { pasteError } from './errors.ts';
import { canonicalSyntax } from './highlight.ts';
import type { LocalEntry, PasteReads } from './reads.ts';
import type { PasteRepository } from './repository.ts';
import { hashPassword, newToken, sha256, tokenMatches, verifyPassword } from './secrets.ts';
import { MAX_EXPIRES_IN, MIN_EXPIRES_IN, type PasteSettings } from './settings.ts';
import type { ShortIdCodec } from './shortid.ts';
import type { NewPaste, UserRow } from './tables.ts';

export interface CreateInput {
  content: string;
  syntax?: string;
  expires_in?: number;
  is_private?: boolean;
  password?: string;
  burn_after_read?: boolean;
  /** 'aes-256-gcm': `content` is the base64 envelope of an end-to-end encrypted paste (envelope.ts). */
  encryption?: string;
}

export interface Created {
  short_url: string;
  url: string;
  expires_at: string | null;
  delete_token: string;
}

/** A paste account, as the platform's `pasteKey` scheme proved it (routes: `accountOf`). */
export type Account = Pick<UserRow, 'id'>;

/** Who is reading: their account (if any), address, the password they sent, and whether this is a preview. */
export interface Reader {
  user?: Account;
  ip: string;
  password?: string;
  /** The password was given on the page earlier (its signed unlock cookie, pages/cookies.ts). */
  unlocked?: boolean;
  /** HEAD requests and link-preview bots: they must never burn a burn-after-read paste. */
  preview: boolean;
}

export type ReadOutcome =
  | { kind: 'content'; entry: LocalEntry }
  /** A burn-after-read paste shown to a preview: its metadata only, not burned. */
  | { kind: 'preview'; entry: LocalEntry };

/**
 * Paths that pages of other services (and the platform) use: a short_url equal to one of them
 * would be shadowed by that page, so such sequence values are skipped. Only 6- to 8-character
 * alphanumeric names can collide with generated ids.
 */
const RESERVED = new Set([
  'health',
  'static',
  'metrics',
  'notify',
  'movies',
  'parking',
  'booking',
  'payments',
]);
/** Sequence values fetched per round trip; a restart skips at most one and a half blocks. */
const ID_BLOCK = 128;

export interface PasteServiceDeps {
  repository: PasteRepository;
  reads: PasteReads;
  codec: ShortIdCodec;
  limiter: RateLimiter;
  clock: Clock;
  settings: PasteSettings;
  baseUrl: string;
  registry: Registry;
  /** Create statements allowed to run at once (their batches grow while they run). */
  maxConcurrentWrites: number;
}

export type PasteService = ReturnType<typeof createPasteService>;

export function createPasteService(deps: PasteServiceDeps) {
  const { repository, reads, codec, limiter, clock, settings } = deps;
  const created = new Counter({
    name: 'paste_created_total',
    help: 'Pastes created',
    labelNames: ['owner'] as const,
    registers: [deps.registry],
  });
  const passwordChecks = new Counter({
    name: 'paste_password_checks_total',
    help: 'Paste passwords presented: right and wrong ones were checked (scrypt), refused ones were over the per-IP limit',
    labelNames: ['outcome'] as const,
    registers: [deps.registry],
  });
  // Users are never deleted, so a key that resolved once can be trusted for a while.
  const usersByKeyHash = new LRUCache<string, UserRow>({ max: 10_000, ttl: 60_000 });
  const inserts = createBatcher<{ paste: NewPaste; content: StoredContent }>(
    (items) => repository.insertPastes(items, clock.now()),
    { maxBatch: 100, maxInFlight: deps.maxConcurrentWrites },
  );
  const idBlock: bigint[] = [];
  let refilling: Promise<void> | undefined;

  function refill(): Promise<void> {
    refilling ??= repository.reserveIds(ID_BLOCK).then(
      (ids) => {
        idBlock.push(...ids);
        refilling = undefined;
      },
      (error) => {
        refilling = undefined;
        throw error;
      },
    );
    return refilling;
  }

  async function nextSequenceValue(): Promise<bigint> {
    while (idBlock.length === 0) await refill();
    const id = idBlock.shift()!;
    // The next block is fetched while half of this one is left: waiting for it stalled every
    // create for a round trip each 128 pastes (paste-create scenario). A failure here is retried
    // by the next create that finds the block empty.
    if (idBlock.length < ID_BLOCK / 2 && !refilling) refill().catch(() => {});
    return id;
  }

  async function nextId(): Promise<{ id: bigint; shortUrl: string }> {
    while (true) {
      const id = await nextSequenceValue();
      const shortUrl = codec.encode(id);
      if (!RESERVED.has(shortUrl)) return { id, shortUrl };
    }
  }

  function validate(input: CreateInput, owner: Account | undefined) {
    const problems: { field: string; message: string }[] = [];
    let syntax: string | null = null;
    if (input.syntax !== undefined && input.syntax !== '') {
      syntax = canonicalSyntax(input.syntax) ?? null;
      if (!syntax)
        problems.push({
          field: 'syntax',
          message: 'is not a language highlight.js knows (see GET /api/v1/paste/languages)',
        });
    }
    const expiresIn = input.expires_in;
    if (
      expiresIn !== undefined &&
      (!Number.isInteger(expiresIn) || expiresIn < MIN_EXPIRES_IN || expiresIn > MAX_EXPIRES_IN)
    ) {
      problems.push({
        field: 'expires_in',
        message: `must be whole seconds from ${MIN_EXPIRES_IN} to ${MAX_EXPIRES_IN} (5 years)`,
      });
    }
    if (input.is_private && !owner) {
      problems.push({
        field: 'is_private',
        message: 'needs an API key: a private paste is readable by its owner only',
      });
    }
    if (input.password !== undefined && (input.password.length < 1 || input.password.length > 200)) {
      problems.push({ field: 'password', message: 'must be 1 to 200 characters' });
    }
    if (input.encryption !== undefined) {
      if (input.encryption !== ENCRYPTION) {
        problems.push({ field: 'encryption', message: `must be "${ENCRYPTION}"` });
      } else {
        // The server never holds an encrypted paste's password: it is mixed into the key in the
        // browser (flag 1 of the envelope). One sent here would be a secret the server must not see.
        if (input.password !== undefined) {
          problems.push({
            field: 'password',
            message:
              'cannot be sent with encryption: derive the key from it before encrypting (envelope flag 1)',
          });
        }
        // Highlighting needs the text, which the server never has.
        if (syntax !== null) {
          problems.push({
            field: 'syntax',
            message: 'cannot be set with encryption: the server never sees the text it would highlight',
          });
        }
      }
    }
    if (problems.length > 0) {
      throw pasteError('invalid_option', {
        detail: problems.map((p) => `${p.field} ${p.message}`).join('; '),
        extras: { errors: problems },
      });
    }
    if (input.encryption === ENCRYPTION) checkEnvelope(input.content);
    return { syntax, expiresIn };
  }

  return {
    /** Spends one create from the caller's allowance (per API key, else per IP). */
    async spendCreateAllowance(
      owner: Account | undefined,
      ip: string,
    ): Promise<{ policy: RatePolicy; decision: RateDecision }> {
      const policy = owner ? settings.keyCreates : settings.anonymousCreates;
      const decision = await limiter.consume(policy, owner ? `user:${owner.id}` : `ip:${ip}`);
      return { policy, decision };
    },

    async refundCreateAllowance(policy: RatePolicy, owner: Account | undefined, ip: string): Promise<void> {
      await limiter.refund(policy, owner ? `user:${owner.id}` : `ip:${ip}`);
    },

    /** `origin`: where the answer's url points (the request's publicOrigin; BASE_URL by default). */
    async create(input: CreateInput, owner?: Account, origin = deps.baseUrl): Promise<Created> {
      const { syntax, expiresIn } = validate(input, owner);
      const bytes = checkText(input.content);
      const content = packContent(bytes);
      const now = clock.now();
      const expiresAt = expiresIn === undefined ? null : new Date(now.getTime() + expiresIn * 1000);
      const deleteToken = newToken('dt_');
      const passwordHash = input.password ? await hashPassword(input.password) : null;
      for (let attempt = 1; ; attempt++) {
        const { id, shortUrl } = await nextId();
        const row = {
          id,
          short_url: shortUrl,
          content_type: 'text/plain',
          syntax,
          created_at: now,
          expires_at: expiresAt,
          user_id: owner?.id ?? null,
          is_private: input.is_private ?? false,
          password_hash: passwordHash,
          burn_after_read: input.burn_after_read ?? false,
          delete_token_hash: deleteToken.hash,
          size: content.size,
          encryption: input.encryption === ENCRYPTION ? ENCRYPTION : null,
        };
        try {
          await inserts.add({ paste: row, content });
        } catch (error) {
          // Only if the id key changed (APP_SECRET rotated) can a new id meet an old one: take the next.
          if (attempt < 5 && isUniqueViolation(error, 'pastes_short_url_key')) continue;
          throw error;
        }
        await reads.prime(
          { ...row, content_hash: content.hash, views: 0n, deleted_at: null, deleted_reason: null },
          input.content,
        );
        created.inc({ owner: owner ? 'user' : 'anonymous' });
        return {
          short_url: shortUrl,
          url: `${origin}/${shortUrl}`,
          expires_at: expiresAt?.toISOString() ?? null,
          delete_token: deleteToken.token,
        };
      }
    },

    /**
     * The checks a read passes before it sees content: private → owner only (others get 404, so
     * its existence does not leak); password → the right one, wrong ones limited per IP; burn
     * after read → the reader that wins the atomic update gets it, previews never burn.
     */
    async read(shortUrl: string, reader: Reader, options: { text?: boolean } = {}): Promise<ReadOutcome> {
      const found = await reads.lookup(shortUrl);
      if (!found) throw notFound(shortUrl);
      if (found.state === 'gone') throw gone(found.reason);
      const { entry } = found;
      const { paste } = entry;
      if (
        paste.is_private &&
        reader.user?.id !== (paste.user_id === null ? undefined : BigInt(paste.user_id))
      ) {
        throw notFound(shortUrl);
      }
      // Refused before a burn: the envelope served as text would read as garbage, and the paste
      // must survive for the browser that holds its key.
      if (options.text && paste.encryption) throw encrypted(shortUrl);
      if (paste.password_hash && !reader.unlocked) await checkPassword(paste.password_hash, reader);
      if (!paste.burn_after_read) {
        // HEAD requests and link previews that reach this path are not readers.
        if (!reader.preview) reads.countView(entry);
        return { kind: 'content', entry };
      }
      if (reader.preview) return { kind: 'preview', entry };
      const burned = await repository.burn(BigInt(paste.id), clock.now());
      await reads.invalidate(shortUrl);
      if (!burned) throw gone('burned');
      entry.views++;
      return { kind: 'content', entry };
    },

    async deletePaste(shortUrl: string, who: { user?: Account; deleteToken?: string }): Promise<void> {
      const row = await repository.find(shortUrl);
      if (!row) throw notFound(shortUrl);
      const isOwner = who.user !== undefined && row.user_id === who.user.id;
      const tokenOk = who.deleteToken !== undefined && tokenMatches(who.deleteToken, row.delete_token_hash);
      if (!isOwner && !tokenOk) {
        if (row.is_private) throw notFound(shortUrl);
        if (!who.user && who.deleteToken === undefined) {
          throw pasteError(
            'credentials_required',
            "Send the owner's API key (Authorization: Bearer) or the paste's X-Delete-Token",
          );
        }
        throw pasteError(
          'not_allowed',
          'Only the owner or the holder of the delete token can delete this paste',
        );
      }
      if (row.deleted_reason) throw gone(row.deleted_reason);
      await repository.softDelete(row.id, clock.now());
      await reads.invalidate(shortUrl);
    },

    /** Spends one sign-up from the address's allowance: the route sends its RateLimit headers. */
    async spendSignup(ip: string): Promise<{ policy: RatePolicy; decision: RateDecision }> {
      const decision = await limiter.consume(settings.signups, `ip:${ip}`);
      return { policy: settings.signups, decision };
    },

    /** Creates the account; the caller spent a sign-up first (`spendSignup`). */
    async createUser(email: string) {
      const apiKey = newToken('pk_');
      const user = await repository.insertUser(email.trim().toLowerCase(), apiKey.hash, clock.now());
      if (!user)
        throw pasteError(
          'email_taken',
          'A user with this e-mail already exists; its API key was shown once at sign-up',
        );
      return {
        id: Number(user.id),
        email: user.email,
        api_key: apiKey.token,
        created_at: user.created_at.toISOString(),
      };
    },

    /**
     * The user an API key belongs to; undefined for a key nobody has. Keys are found by their
     * SHA-256 (the table keeps nothing else), so no key is ever compared.
     */
    async userByKey(apiKey: string): Promise<UserRow | undefined> {
      const hash = sha256(apiKey);
      let user = usersByKeyHash.get(hash);
      if (!user) {
        user = await repository.findUserByKeyHash(hash);
        if (user) usersByKeyHash.set(hash, user);
      }
      return user;
    },

    async listMine(user: Account, limit: number, cursor?: string, origin = deps.baseUrl) {
      let before: bigint | undefined;
      if (cursor !== undefined) {
        const decoded = codec.decode(cursor);
        if (decoded === undefined)
          throw pasteError('invalid_option', 'cursor is not a short_url from a previous page');
        before = BigInt(decoded);
      }
      const rows = await repository.listUserPastes(user.id, clock.now(), limit, before);
      return {
        pastes: rows.map((row) => ({
          short_url: row.short_url,
          url: `${origin}/${row.short_url}`,
          syntax: row.syntax,
          created_at: row.created_at.toISOString(),
          expires_at: row.expires_at?.toISOString() ?? null,
          views: Number(row.views),
          is_private: row.is_private,
          size: row.size,
          has_password: row.password_hash !== null,
          burn_after_read: row.burn_after_read,
        })),
        next_cursor: rows.length === limit ? rows[rows.length - 1].short_url : null,
      };
    },
  };

  async function checkPassword(hash: string, reader: Reader) {
    if (reader.password === undefined || reader.password === '') {
      throw pasteError('password_required', 'Send the password in the X-Paste-Password header');
    }
    const key = `ip:${reader.ip}`;
    // Every attempt is counted before scrypt runs and a right one gets its point back: counting
    // only after a wrong answer let a burst of concurrent guesses all pass the check first.
    const spent = await limiter.consume(settings.passwordAttempts, key);
    if (!spent.allowed) {
      passwordChecks.inc({ outcome: 'refused' });
      throw pasteError('too_many_password_attempts', {
        headers: rateLimitHeaders(settings.passwordAttempts, spent),
      });
    }
    const right = await verifyPassword(reader.password, hash);
    passwordChecks.inc({ outcome: right ? 'right' : 'wrong' });
    if (right) {
      await limiter.refund(settings.passwordAttempts, key);
      return;
    }
    throw pasteError('wrong_password', {
      extras: { attempts_left: spent.remaining },
      headers: rateLimitHeaders(settings.passwordAttempts, spent),
    });
  }
}

export function notFound(shortUrl: string) {
  return pasteError('paste_not_found', `No paste ${shortUrl} (it may never have existed or has been purged)`);
}

export function encrypted(shortUrl: string) {
  return pasteError('paste_encrypted', {
    detail:
      `Paste ${shortUrl} is end-to-end encrypted: the server holds only ciphertext and cannot give its text. ` +
      'Open its link, with the key after #, in a browser, or decrypt the envelope from ' +
      `GET /api/v1/paste/${shortUrl} yourself`,
    extras: { encryption: ENCRYPTION },
  });
}

export function gone(reason: 'expired' | 'deleted' | 'burned') {
  if (reason === 'expired') return pasteError('paste_expired', { extras: { reason } });
  return pasteError('paste_deleted', {
    detail: reason === 'burned' ? 'The paste was burned after it was read' : 'The paste was deleted',
    extras: { reason },
  });
}
