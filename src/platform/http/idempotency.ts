import { createHmac, hash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import { callerId } from '../auth/caller.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/index.ts';
import { platformError } from '../errors.ts';
import type { RetentionPolicy } from '../jobs/retention.ts';
import { createResponseSeal, type StoredResponse } from './response-seal.ts';

/**
 * `Idempotency-Key` for POSTs that create or pay (draft-ietf-httpapi-idempotency-key-header,
 * Stripe's semantics). Enable per route with `config: {idempotency: {scope, required?}}`.
 * The first response is stored for 24 h and replayed byte for byte; the same key with another
 * body → 422; while the first is still running → 409. 5xx answers are not stored, so a retry
 * after a failure runs again. Keys are scoped by the endpoint (`scope`, and the method and URL in
 * the request's fingerprint) and by the caller: the one the auth hook proved, or for a request
 * without credentials its `principal`, else its address.
 */
export interface IdempotencyRouteConfig {
  /** The endpoint's name (aliases of one endpoint may share it). */
  scope: string;
  required?: boolean;
  /**
   * Who an anonymous caller is, e.g. the capability in the path (a payment's id). Only for
   * requests without credentials: a proven caller is its own scope, so a key it sends again
   * with another body (another ticket, another hold) is 422, never a second request.
   */
  principal?: (request: FastifyRequest) => string | undefined;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    idempotency?: IdempotencyRouteConfig;
  }
  interface FastifyRequest {
    idempotencyClaim?: { scope: string; key: string; settled: boolean };
  }
}

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
const TTL_MS = 24 * 3600_000;
const REPLAYED_HEADERS = ['content-type', 'location', 'cache-control'];

/**
 * Keys derived from the app secret: `hashKey` keys the stored request fingerprint (HMAC), since
 * bodies may carry card details and a plain hash of a card number can be brute-forced (PCI DSS
 * wants keyed hashes of PANs); the stored responses are sealed (response-seal.ts), since they
 * carry secrets shown once (a paste's delete token, a ticket token).
 */
export function registerIdempotency(app: FastifyInstance, db: Db, clock: Clock, secret: string): void {
  const hashKey = `idempotency:${secret}`;
  const seal = createResponseSeal(secret);
  // Hooks go only on routes that opt in, so every other route pays nothing for the feature.
  app.addHook('onRoute', (route) => {
    if (!route.config?.idempotency) return;
    route.preHandler = [...asArray(route.preHandler), idempotencyPreHandler];
    route.onSend = [...asArray(route.onSend), idempotencyOnSend];
    route.onResponse = [...asArray(route.onResponse), idempotencyOnResponse];
  });

  async function idempotencyPreHandler(request: FastifyRequest, reply: FastifyReply) {
    const config = request.routeOptions.config.idempotency;
    if (!config) return;
    const key = request.headers['idempotency-key'];
    if (key === undefined) {
      if (config.required) {
        throw platformError('validation_failed', {
          detail: 'This endpoint needs an Idempotency-Key header (any unique string up to 255 characters)',
          extras: { errors: [{ field: 'headers.idempotency-key', message: 'is required' }] },
        });
      }
      return;
    }
    if (typeof key !== 'string' || !KEY_PATTERN.test(key)) {
      throw platformError('validation_failed', {
        detail: 'Idempotency-Key must be 1 to 255 visible ASCII characters',
        extras: { errors: [{ field: 'headers.idempotency-key', message: 'is malformed' }] },
      });
    }
    const scope = scopeOf(request, config);
    const hash = requestHash(request, hashKey);
    const stored = (await claimKey(scope, key, hash)) ? 'claimed' : await storedAnswer(scope, key, hash);
    if (stored === 'claimed') {
      request.idempotencyClaim = { scope, key, settled: false };
      return;
    }
    for (const [name, value] of Object.entries(stored.headers)) reply.header(name, value);
    reply.header('idempotent-replayed', 'true');
    return reply.code(stored.status).send(stored.body);
  }

  /**
   * The answer stored under a key this request could not claim: 422 for another body, 409 while
   * the first is still running. One sealed under another APP_SECRET cannot be replayed, so the
   * key starts afresh ('claimed').
   */
  async function storedAnswer(
    scope: string,
    key: string,
    hash: string,
  ): Promise<(StoredResponse & { status: number }) | 'claimed'> {
    const stored = await storedRow(scope, key);
    if (!stored) throw platformError('idempotency_in_progress', { headers: { 'Retry-After': '1' } });
    if (stored.request_hash !== hash) {
      throw platformError(
        'idempotency_key_reused',
        'This Idempotency-Key was used with a different request body',
      );
    }
    if (stored.status !== 'done') {
      throw platformError('idempotency_in_progress', { headers: { 'Retry-After': '1' } });
    }
    const response = storedResponse(stored, scope, key);
    if (response) return { ...response, status: stored.response_status ?? 200 };
    await sql`delete from idempotency_keys where scope = ${scope} and key = ${key}
      and response_body = ${stored.response_body}`.execute(db);
    if (await claimKey(scope, key, hash)) return 'claimed';
    throw platformError('idempotency_in_progress', { headers: { 'Retry-After': '1' } });
  }

  /** Takes the key for this request: a new row, or one whose 24 h are over. */
  async function claimKey(scope: string, key: string, hash: string): Promise<boolean> {
    const now = clock.now();
    const claimed = await sql`
      insert into idempotency_keys (scope, key, request_hash, status, created_at, expires_at)
      values (${scope}, ${key}, ${hash}, 'in_progress', ${now}, ${new Date(now.getTime() + TTL_MS)})
      on conflict (scope, key) do update
        set request_hash = excluded.request_hash, status = 'in_progress', created_at = excluded.created_at,
            expires_at = excluded.expires_at, response_status = null, response_headers = null, response_body = null
        where idempotency_keys.expires_at <= ${now}`.execute(db);
    return Number(claimed.numAffectedRows ?? 0n) > 0;
  }

  async function storedRow(scope: string, key: string): Promise<StoredRow | undefined> {
    const { rows } =
      await sql<StoredRow>`select request_hash, status, response_status, response_headers, response_body
       from idempotency_keys where scope = ${scope} and key = ${key}`.execute(db);
    return rows[0];
  }

  /**
   * A sealed row keeps its headers inside the sealed text and `response_headers` null; a row
   * stored in plain text before sealing existed has them in `response_headers`, and replays as
   * it was until it expires. Undefined: sealed, but not by this secret.
   */
  function storedResponse(row: StoredRow, scope: string, key: string): StoredResponse | undefined {
    if (row.response_headers !== null)
      return { headers: row.response_headers, body: row.response_body ?? '' };
    return seal.open(row.response_body ?? '', scope, key);
  }

  async function idempotencyOnSend(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
    const claim = request.idempotencyClaim;
    if (!claim || claim.settled) return payload;
    claim.settled = true;
    if (reply.statusCode >= 500 || (typeof payload !== 'string' && !Buffer.isBuffer(payload))) {
      await release(db, claim);
      return payload;
    }
    const headers: Record<string, string> = {};
    for (const name of REPLAYED_HEADERS) {
      const value = reply.getHeader(name);
      if (value !== undefined) headers[name] = String(value);
    }
    const sealed = seal.close({ headers, body: payload.toString() }, claim.scope, claim.key);
    await sql`update idempotency_keys set status = 'done', response_status = ${reply.statusCode},
        response_headers = null, response_body = ${sealed}
      where scope = ${claim.scope} and key = ${claim.key}`.execute(db);
    return payload;
  }

  // A request whose response never went through onSend (hijacked, failed hook) must not keep its
  // key locked. Not on client abort: the handler may still be charging a card.
  async function idempotencyOnResponse(request: FastifyRequest) {
    const claim = request.idempotencyClaim;
    if (claim && !claim.settled) {
      claim.settled = true;
      await release(db, claim).catch(() => {});
    }
  }
}

interface StoredRow {
  request_hash: string;
  status: string;
  response_status: number | null;
  response_headers: Record<string, string> | null;
  response_body: string | null;
}

function asArray<T>(value: T | T[] | undefined): T[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

async function release(db: Db, claim: { scope: string; key: string }) {
  await sql`delete from idempotency_keys where scope = ${claim.scope} and key = ${claim.key} and status = 'in_progress'`.execute(
    db,
  );
}

/**
 * Keys belong to the endpoint and to the caller the auth hook proved (a user, a service, an
 * operator, an admin), never to raw headers or body fields: one caller's key names one request
 * (sent again with another body, another hold or ticket, it is 422), two callers never share a
 * key, and a caller cannot replay another's answer. A caller without credentials is named by the
 * route's `principal` (a capability it holds) or else by its address, so one anonymous client
 * cannot replay another's answer (a paste's delete token) by sending the same key and body.
 */
function scopeOf(request: FastifyRequest, config: IdempotencyRouteConfig): string {
  const caller = callerId(request.caller);
  const principal = caller === 'public' ? (config.principal?.(request) ?? `address:${request.ip}`) : '';
  return `${config.scope}:${hash('sha256', `${caller}\n${principal}`, 'base64url').slice(0, 22)}`;
}

function requestHash(request: FastifyRequest, hashKey: string): string {
  const body = typeof request.body === 'string' ? request.body : JSON.stringify(request.body ?? null);
  return createHmac('sha256', hashKey)
    .update(`${request.method} ${request.url}\n${body}`)
    .digest('base64url');
}

/** Expired keys go: the platform's retention job (a key lives 24 h, then a repeat is a new request). */
export function idempotencyRetention(db: Db): RetentionPolicy {
  return {
    table: 'idempotency_keys',
    keepMs: 0,
    async removeBatch(cutoff, limit) {
      const result = await sql`delete from idempotency_keys where (scope, key) in (
        select scope, key from idempotency_keys where expires_at <= ${cutoff} limit ${limit})`.execute(db);
      return Number(result.numAffectedRows ?? 0n);
    },
    async oldest() {
      const { rows } = await sql<{
        at: Date | null;
      }>`select min(expires_at) as at from idempotency_keys`.execute(db);
      return rows[0]?.at ?? undefined;
    },
  };
}
