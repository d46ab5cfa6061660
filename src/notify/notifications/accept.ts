import { hash } from 'node:crypto';
import type { Clock } from '../../platform/clock.ts';
import { platformError } from '../../platform/errors.ts';
import { containsNul } from '../../platform/http/input.ts';
import { uuidv7 } from '../../platform/ids.ts';
import {
  CHANNELS,
  type Channel,
  type ChannelOutcome,
  type NotificationAccepted,
  type NotificationRequest,
  type Priority,
} from '../api.ts';
import { err } from '../errors.ts';
import type { TemplateRenderer } from '../ports.ts';
import type { Contacts, ContactsCache } from '../preferences/contacts-cache.ts';
import { enabled, hasAddress, quietUntil, toPreferences, USER_ID } from '../preferences/service.ts';
import type { ChannelLimits } from './limits.ts';
import type { Outbox } from './outbox.ts';
import type { AcceptLookup, Lane, NewDelivery, NotificationRow, NotifyRepository } from './repository.ts';

const CLIENT_ID = /^[\x21-\x7e]{1,64}$/;
const DEDUP_WINDOW_MS = 24 * 3600_000;
/** Types that always go, whatever the priority says (DESIGN §5: security alerts ignore quiet hours). */
const CRITICAL_TYPES = new Set(['security_alert']);

export interface AcceptOptions {
  idempotencyKey?: string;
  lane?: Lane;
  batchId?: string;
}

type ChannelResult = NotificationAccepted['channels'][number];
/** What the accept knows of the user and, when it read it, of the client id. */
type Known = Contacts & Pick<AcceptLookup, 'earlier' | 'subscriptions'>;

/**
 * The accept use case, shared by `POST /api/notifications`, the batch lane and the in-process
 * `NotifyApi.send`: validate, check templates, apply preferences, quiet hours and limits, store,
 * queue. A refused request (400, 422, 429) stores nothing and spends no quota.
 */
export function createAccept(deps: {
  repo: NotifyRepository;
  templates: TemplateRenderer;
  limits: ChannelLimits;
  outbox: Outbox;
  clock: Clock;
  contacts: ContactsCache;
}) {
  const { repo, templates, limits, outbox, clock, contacts } = deps;

  async function checkTemplates(type: string, channels: Channel[], data: Record<string, unknown>) {
    const problems = await templates.check(type, channels, data);
    if (problems.length === 0) return;
    const unknown = problems.filter((p) => p.reason === 'unknown_type');
    if (unknown.length > 0) {
      throw err('unknown_type', {
        detail: `No template for type "${type}" on ${unknown.map((p) => p.channel).join(', ')}`,
        extras: { notification_type: type, channels: unknown.map((p) => p.channel) },
      });
    }
    const missing = [...new Set(problems.flatMap((p) => p.missing ?? []))];
    throw err('missing_variables', {
      detail: `data lacks ${missing.join(', ')}`,
      extras: { missing, channels: problems.map((p) => ({ channel: p.channel, missing: p.missing ?? [] })) },
    });
  }

  /**
   * The user's preferences and push subscriptions, from the cache when it has them; otherwise
   * one query that also reads the notification stored under the client id (`earlier`). From the
   * cache, `earlier` is not known (`checked: false`): the insert finds out (accept below).
   */
  function lookups(request: Validated, clientId: string | undefined) {
    const withSubscriptions = request.channels.includes('push');
    const cached = contacts.get(request.user_id, withSubscriptions);
    if (cached) {
      const known: Known = {
        prefs: cached.prefs,
        subscriptions: cached.subscriptions ?? [],
        version: cached.version,
      };
      return { checked: false, found: Promise.resolve(known) };
    }
    const readAt = contacts.generation();
    const found = repo
      .acceptLookup({ userId: request.user_id, clientId: clientId ?? null, withSubscriptions })
      .then(({ earlier, prefs: row, subscriptions }): Known => {
        const prefs = toPreferences(row);
        contacts.remember(request.user_id, readAt, {
          prefs,
          version: row?.version,
          subscriptions: withSubscriptions ? subscriptions : undefined,
        });
        return { earlier, prefs, subscriptions, version: row?.version };
      });
    found.catch(() => {}); // awaited later, or not at all when the request is refused
    return { checked: true, found };
  }

  /** Reads the notification stored under the client id, and its answer as `storedAnswer` gives it. */
  async function replayOf(userId: string, clientId: string, hash: () => string, now: Date) {
    const earlier = await repo.byClientId(userId, clientId);
    return { earlier, answer: storedAnswer(earlier, hash, now) };
  }

  async function channelOutcomes(request: Validated, now: Date, found: Promise<Known>) {
    const { prefs, subscriptions } = await found;
    const sendAt = request.send_at ? new Date(request.send_at) : undefined;
    const results: (ChannelResult & { scheduledFor: Date | null })[] = [];
    for (const channel of request.channels) {
      const skipped = (reason: string) =>
        results.push({ channel, status: 'skipped', reason, scheduledFor: null });
      if (!enabled(prefs, channel)) {
        skipped('channel_disabled');
        continue;
      }
      if (!hasAddress(prefs, channel, subscriptions)) {
        skipped('no_address');
        continue;
      }
      const decision = await limits.consume(channel, request.user_id);
      if (!decision.allowed) {
        const retryAfter = Math.max(1, Math.ceil(decision.resetMs / 1000));
        results.push({ channel, status: 'rate_limited', retry_after: retryAfter, scheduledFor: null });
        continue;
      }
      const critical = request.priority === 'critical' || CRITICAL_TYPES.has(request.type);
      const quiet = channel !== 'email' && !critical ? quietUntil(prefs, sendAt ?? now) : null;
      const scheduledFor = quiet ?? (sendAt && sendAt > now ? sendAt : null);
      if (scheduledFor) {
        results.push({
          channel,
          status: 'scheduled',
          reason: quiet ? 'quiet_hours' : 'send_at',
          scheduledFor,
        });
      } else results.push({ channel, status: 'queued', scheduledFor: null });
    }
    return results;
  }

  async function refund(spent: { channel: Channel }[], userId: string) {
    for (const o of spent) await limits.refund(o.channel, userId).catch(() => {});
  }

  async function acceptOnce(
    raw: NotificationRequest,
    options: AcceptOptions,
    retry: boolean,
  ): Promise<NotificationAccepted> {
    const request = validate(raw);
    const lane = options.lane ?? 'realtime';
    const clientId = request.id ?? options.idempotencyKey;
    // Written and hashed when first needed: to compare with a stored request, or for the insert
    // (requestHash).
    let canonical: string | undefined;
    let hashed: string | undefined;
    const canonicalJson = () => (canonical ??= stableJson(request, 'id'));
    const hash = () => (hashed ??= requestHash(canonicalJson()));
    const now = clock.now();
    const { checked, found } = lookups(request, clientId);
    if (clientId && checked) {
      const { earlier } = await found;
      const answer = storedAnswer(earlier, hash, now);
      if (answer) return answer;
      if (earlier) await repo.releaseClientId(earlier.id);
    }
    // Contacts from the cache: the client id was not looked up, and a refusal may be the replay
    // of an accepted request, whose stored answer wins.
    const replayed = async () =>
      clientId && !checked ? (await replayOf(request.user_id, clientId, hash, now)).answer : undefined;
    let outcomes: Awaited<ReturnType<typeof channelOutcomes>>;
    try {
      await checkTemplates(request.type, request.channels, request.data);
      outcomes = await channelOutcomes(request, now, found);
    } catch (error) {
      const answer = await replayed();
      if (answer) return answer;
      throw error;
    }
    const spent = outcomes.filter((o) => o.status === 'queued' || o.status === 'scheduled');
    const id = uuidv7();
    const channels = outcomes.map(({ scheduledFor: _, ...result }) => result);
    if (spent.length === 0 && outcomes.some((o) => o.status === 'rate_limited')) {
      return (await replayed()) ?? { id, status: 'rate_limited', channels };
    }
    const accepted: NotificationAccepted = { id, status: 'accepted', channels };
    const deliveries: NewDelivery[] = outcomes.map((o) => ({
      channel: o.channel,
      status: o.status as ChannelOutcome,
      reason: o.status === 'rate_limited' ? `retry_after=${o.retry_after}` : (o.reason ?? null),
      scheduled_for: o.scheduledFor,
    }));
    let stored: boolean;
    try {
      // Here, not first: the request is back from Redis with the others of its batch, one after
      // another, so stableJson's code is warm (under notify-cpu 2.9-4.2 µs here, 6.8-7.2 µs when
      // it ran first). Before the insert, so a body it cannot write (a BigInt from the in-process
      // API) fails its own request, with its sends given back, not the statement it would share.
      canonicalJson();
      stored = await repo.insert(
        {
          id,
          user_id: request.user_id,
          client_id: clientId ?? null,
          request_hash: hash,
          type: request.type,
          priority: request.priority,
          lane,
          batch_id: options.batchId ?? null,
          data: request.data,
          accepted,
          created_at: now,
        },
        deliveries,
      );
    } catch (error) {
      await refund(spent, request.user_id);
      throw error;
    }
    if (!stored) {
      // The client id is taken: by a concurrent request with it, by one the cache did not tell
      // about, or by one past the window, which lets go of it for one more try.
      await refund(spent, request.user_id);
      const { earlier, answer } = clientId
        ? await replayOf(request.user_id, clientId, hash, now)
        : { earlier: undefined, answer: undefined };
      if (answer) return answer;
      if (!earlier || retry)
        throw new Error(`notification ${id} was not stored and no earlier one holds its client id`);
      await repo.releaseClientId(earlier.id);
      return acceptOnce(raw, options, true);
    }
    const { prefs, version } = await found;
    await outbox.publishNow(
      outcomes
        .filter((o) => o.status === 'queued')
        .map((o) => ({
          notificationId: id,
          channel: o.channel,
          userId: request.user_id,
          lane,
          accepted: { type: request.type, data: request.data, prefs, version, size: canonicalJson().length },
        })),
    );
    return accepted;
  }

  return (raw: NotificationRequest, options: AcceptOptions = {}) => acceptOnce(raw, options, false);
}

export type Accept = ReturnType<typeof createAccept>;

type Validated = NotificationRequest & { priority: Priority };

/**
 * The answer of a notification stored under the client id, when it was accepted within the
 * dedup window; a 422 when the request it answered had another body. Past the window, none.
 */
function storedAnswer(
  earlier: Pick<NotificationRow, 'created_at' | 'request_hash' | 'accepted'> | undefined,
  hash: () => string,
  now: Date,
): NotificationAccepted | undefined {
  if (!earlier || now.getTime() - earlier.created_at.getTime() >= DEDUP_WINDOW_MS) return undefined;
  if (earlier.request_hash !== hash()) throw err('idempotency_key_reused');
  return earlier.accepted;
}

/** The HTTP schema checks the same; this guards the in-process API. */
function validate(request: NotificationRequest): Validated {
  const errors: { field: string; message: string }[] = [];
  if (typeof request.user_id !== 'string' || !USER_ID.test(request.user_id))
    errors.push({ field: 'user_id', message: 'must be 1-64 characters of A-Z, a-z, 0-9, _ or -' });
  if (typeof request.type !== 'string' || request.type.length < 1 || request.type.length > 20)
    errors.push({ field: 'type', message: 'must be 1-20 characters' });
  if (request.id !== undefined && (typeof request.id !== 'string' || !CLIENT_ID.test(request.id)))
    errors.push({ field: 'id', message: 'must be 1-64 visible ASCII characters' });
  if (request.data === null || typeof request.data !== 'object' || Array.isArray(request.data))
    errors.push({ field: 'data', message: 'must be an object' });
  // Without building a path per field, as nulField does: this runs for every accepted request.
  else if (containsNul(request.data))
    errors.push({ field: 'data', message: 'must not contain the NUL character (\\u0000)' });
  if (request.send_at !== undefined && Number.isNaN(Date.parse(request.send_at)))
    errors.push({ field: 'send_at', message: 'must be an ISO 8601 date-time' });
  if (!Array.isArray(request.channels) || request.channels.length === 0)
    errors.push({ field: 'channels', message: 'must list at least one channel' });
  else if (new Set(request.channels).size !== request.channels.length)
    errors.push({ field: 'channels', message: 'must not repeat a channel' });
  if (errors.length) {
    throw platformError('validation_failed', {
      detail: errors.map((e) => `${e.field} ${e.message}`).join('; '),
      extras: { errors },
    });
  }
  const unknown = request.channels.filter((channel) => !CHANNELS.includes(channel));
  if (unknown.length) {
    throw err('unknown_channel', {
      detail: `Unknown channel ${unknown.join(', ')}`,
      extras: { channels: unknown },
    });
  }
  return { ...request, priority: request.priority ?? 'normal' };
}

/**
 * The stored fingerprint of a request: its body without the client id (`stableJson(request, 'id')`).
 * One-shot `hash`. Under notify-cpu the first sha256 of a request cost the API 3.3-6.3 µs of CPU
 * (OpenSSL's code and tables fetched again after the other processes had the core) and the next
 * ones 0.8-1.4 µs, so the insert calls it for all of a statement's rows in a row. The canonical
 * JSON is made before the insert (acceptOnce), so this cannot fail inside a shared statement.
 */
function requestHash(canonical: string): string {
  return hash('sha256', canonical, 'base64url');
}

/**
 * JSON with object keys sorted, so the same body hashes alike whatever its key order; `omitKey`
 * leaves out one key of the outermost object. Stored hashes live 24 h: the output must stay byte
 * for byte what it was (stable-json.test.ts pins it). Written with loops and string appends: the
 * entries/sort/map/join version was 2.5 % of the API's CPU under notify-accept.
 */
export function stableJson(value: unknown, omitKey?: string): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + stableJson(value[i]);
    return `${out}]`;
  }
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object).sort();
  let out = '{';
  for (const key of keys) {
    if (key === omitKey) continue;
    out += `${out.length === 1 ? '' : ','}${JSON.stringify(key)}:${stableJson(object[key])}`;
  }
  return `${out}}`;
}
