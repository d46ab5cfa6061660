import { hash } from 'node:crypto';
import type { Clock } from '../../platform/clock.ts';
import { platformError } from '../../platform/errors.ts';
import { containsNul } from '../../platform/http/input.ts';
import { uuidv7 } from '../../platform/ids.ts';
import {
  type Channel,
  type ChannelOutcome,
  isChannel,
  type NotificationAccepted,
  type NotificationRequest,
  type Priority,
} from '../api.ts';
import type { DigestType } from '../digests/repository.ts';
import type { Digests } from '../digests/service.ts';
import { err } from '../errors.ts';
import type { TemplateRenderer } from '../ports.ts';
import type { Contacts, ContactsCache } from '../preferences/contacts-cache.ts';
import {
  enabled,
  hasAddress,
  quietUntil,
  toPreferences,
  USER_ID,
  unsubscribed,
} from '../preferences/service.ts';
import type { Lane, NotificationRow } from '../tables.ts';
import type { ChannelLimits } from './limits.ts';
import type { Outbox } from './outbox.ts';
import type { AcceptLookup, NewDelivery, NotifyRepository } from './repository.ts';

const CLIENT_ID = /^[\x21-\x7e]{1,64}$/;
const DEDUP_WINDOW_MS = 24 * 3600_000;
/**
 * How far in the past a `send_at` may lie and still mean "now": the sender's clock and ours
 * disagree a little, and a request retried after a network error arrives late.
 */
export const SEND_AT_SKEW_MS = 60_000;
/** Types that always go, whatever the priority says (DESIGN §5: security alerts ignore quiet hours). */
const CRITICAL_TYPES = new Set(['security_alert']);

export interface AcceptOptions {
  idempotencyKey?: string;
  lane?: Lane;
  batchId?: string;
  /** False for a digest's own message (digests/service.ts): it is never digested again. */
  digest?: boolean;
  /**
   * Who sends it (`notifications.sent_by`): the HTTP caller's `callerId`, IN_PROCESS for
   * NotifyApi.send; none for a digest's own message. Only the sender (or an admin) may cancel it.
   */
  sender?: string;
}

/** The sender of what other modules send through NotifyApi.send (never a `callerId`: it has no colon). */
export const IN_PROCESS = 'in-process';

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
  /** Bulk types (NOTIFY_MARKETING_TYPES): their e-mail is skipped for a user who unsubscribed. */
  marketingTypes?: readonly string[];
  /** How far ahead `send_at` may be (NOTIFY_SEND_AT_MAX). */
  sendAtMaxMs?: number;
  /** Digestible types and their windows (digests/service.ts); without it nothing is digested. */
  digests?: Pick<Digests, 'settingOf' | 'windowsFor' | 'store'>;
}) {
  const { repo, templates, limits, outbox, clock, contacts } = deps;
  const marketing = new Set(deps.marketingTypes ?? []);

  const sendAtMaxMs = deps.sendAtMaxMs ?? 30 * 86_400_000;

  /** A `send_at` is the future (or now, within the skew) and at most `sendAtMaxMs` ahead. */
  function checkSendAt(sendAt: string | undefined, now: Date) {
    if (sendAt === undefined) return;
    const at = Date.parse(sendAt);
    if (at < now.getTime() - SEND_AT_SKEW_MS) {
      throw err('invalid_send_at', { detail: 'send_at lies in the past', extras: { send_at: sendAt } });
    }
    const latest = new Date(now.getTime() + sendAtMaxMs);
    if (at > latest.getTime()) {
      throw err('invalid_send_at', {
        detail: `send_at may be at most ${Math.round(sendAtMaxMs / 3600_000)} h ahead`,
        extras: { send_at: sendAt, latest: latest.toISOString() },
      });
    }
  }

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

  async function channelOutcomes(request: Validated, now: Date, found: Promise<Known>, digested: boolean) {
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
      if (unsubscribed(prefs, channel, marketing.has(request.type))) {
        skipped('unsubscribed');
        continue;
      }
      if (!hasAddress(prefs, channel, subscriptions)) {
        skipped('no_address');
        continue;
      }
      if (digested) {
        // Its window's one message spends the limit, when it is sent: not each event.
        results.push({ channel, status: 'digested', reason: 'digest', scheduledFor: null });
        continue;
      }
      const decision = await limits.consume(channel, request.user_id);
      if (!decision.allowed) {
        const retryAfter = Math.max(1, Math.ceil(decision.resetMs / 1000));
        results.push({ channel, status: 'rate_limited', retry_after: retryAfter, scheduledFor: null });
        continue;
      }
      const critical = request.priority === 'critical' || CRITICAL_TYPES.has(request.type);
      // Quiet hours hold back what interrupts (push, SMS); e-mail and the in-app feed wait to be read.
      const quiet =
        (channel === 'push' || channel === 'sms') && !critical ? quietUntil(prefs, sendAt ?? now) : null;
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

  /** One request's accept: what it asked, who it is for, when, and its fingerprint once needed. */
  function begin(request: Validated, options: AcceptOptions) {
    const clientId = request.id ?? options.idempotencyKey;
    // Written and hashed when first needed: to compare with a stored request, or for the insert.
    let canonical: string | undefined;
    let hashed: string | undefined;
    const canonicalJson = () => (canonical ??= stableJson(request, 'id'));
    const hash = () => (hashed ??= requestHash(canonicalJson()));
    const now = clock.now();
    const lane = options.lane ?? 'realtime';
    // A request with its own send_at is not digested: it names its time itself.
    const digest: Promise<DigestType | undefined> =
      deps.digests && options.digest !== false && request.send_at === undefined
        ? deps.digests.settingOf(request.type)
        : Promise.resolve(undefined);
    digest.catch(() => {}); // awaited in `decide`
    return {
      request,
      options,
      lane,
      clientId,
      canonicalJson,
      hash,
      now,
      digest,
      ...lookups(request, clientId),
    };
  }
  type Attempt = ReturnType<typeof begin>;
  type Outcomes = Awaited<ReturnType<typeof channelOutcomes>>;

  /**
   * With contacts from the cache the client id was not looked up, so a refusal may be the replay
   * of an accepted request, whose stored answer wins.
   */
  async function replayed(a: Attempt) {
    if (!a.clientId || a.checked) return undefined;
    return (await replayOf(a.request.user_id, a.clientId, a.hash, a.now)).answer;
  }

  /** The earlier answer under the client id when the lookup read it; a stale holder lets go of it. */
  async function earlierAnswer(a: Attempt) {
    if (!a.clientId || !a.checked) return undefined;
    const { earlier } = await a.found;
    const answer = storedAnswer(earlier, a.hash, a.now);
    if (!answer && earlier) await repo.releaseClientId(earlier.id);
    return answer;
  }

  /** Templates, then each channel's outcome; a refusal answers as a replay when it is one. */
  async function decide(a: Attempt): Promise<Outcomes | NotificationAccepted> {
    try {
      checkSendAt(a.request.send_at, a.now);
      const digest = await a.digest;
      // A digestible type's templates render the window's events as `items`: checked with this one.
      const data = digest ? { items: [a.request.data], count: 1 } : a.request.data;
      await checkTemplates(a.request.type, a.request.channels, data);
      return await channelOutcomes(a.request, a.now, a.found, digest !== undefined);
    } catch (error) {
      const answer = await replayed(a);
      if (answer) return answer;
      throw error;
    }
  }

  /** Stores the notification and its deliveries; false when its client id is taken. */
  async function store(a: Attempt, id: string, accepted: NotificationAccepted, outcomes: Outcomes) {
    const deliveries: NewDelivery[] = outcomes.map((o) => ({
      channel: o.channel,
      status: o.status as ChannelOutcome,
      reason: o.status === 'rate_limited' ? `retry_after=${o.retry_after}` : (o.reason ?? null),
      scheduled_for: o.scheduledFor,
    }));
    // Before the insert, so a body it cannot write (a BigInt from the in-process API) fails its
    // own request, with its sends given back, not the statement it would share.
    a.canonicalJson();
    const { request } = a;
    const notification = {
      id,
      user_id: request.user_id,
      client_id: a.clientId ?? null,
      request_hash: a.hash,
      type: request.type,
      priority: request.priority,
      lane: a.lane,
      batch_id: a.options.batchId ?? null,
      data: request.data,
      accepted,
      created_at: a.now,
      sent_by: a.options.sender ?? null,
    };
    const digested = outcomes.filter((o) => o.status === 'digested').map((o) => o.channel);
    const digest = await a.digest;
    if (digested.length > 0 && digest && deps.digests) {
      const { prefs } = await a.found;
      const windows = deps.digests.windowsFor(digest, digested, a.now, prefs.timezone);
      return deps.digests.store(notification, deliveries, windows);
    }
    return repo.insert(notification, deliveries);
  }

  /** Hands the queued deliveries to the queue with what the accept knew (outbox.ts). */
  async function publish(a: Attempt, id: string, outcomes: Outcomes) {
    const { prefs, version } = await a.found;
    const { request } = a;
    const snapshot = {
      type: request.type,
      data: request.data,
      prefs,
      version,
      size: a.canonicalJson().length,
    };
    await outbox.publishNow(
      outcomes
        .filter((o) => o.status === 'queued')
        .map((o) => ({
          notificationId: id,
          channel: o.channel,
          userId: request.user_id,
          lane: a.lane,
          accepted: snapshot,
        })),
    );
  }

  /**
   * One try: the answer, or `heldBy` when the client id is held by a notification past the dedup
   * window, which the caller releases before trying once more.
   */
  async function acceptOnce(a: Attempt): Promise<{ answer: NotificationAccepted } | { heldBy: string }> {
    const early = await earlierAnswer(a);
    if (early) return { answer: early };
    const outcomes = await decide(a);
    if (!Array.isArray(outcomes)) return { answer: outcomes };
    const spent = outcomes.filter((o) => o.status === 'queued' || o.status === 'scheduled');
    const id = uuidv7();
    const channels = outcomes.map(({ scheduledFor: _, ...result }) => result);
    if (spent.length === 0 && outcomes.some((o) => o.status === 'rate_limited')) {
      return { answer: (await replayed(a)) ?? { id, status: 'rate_limited', channels } };
    }
    const accepted: NotificationAccepted = { id, status: 'accepted', channels };
    const stored = await store(a, id, accepted, outcomes).catch(async (error) => {
      await refund(spent, a.request.user_id);
      throw error;
    });
    if (stored) {
      await publish(a, id, outcomes);
      return { answer: accepted };
    }
    // The client id is taken: by a concurrent request with it, by one the cache did not tell
    // about, or by one past the window, which lets go of it for one more try.
    await refund(spent, a.request.user_id);
    const { earlier, answer } = a.clientId
      ? await replayOf(a.request.user_id, a.clientId, a.hash, a.now)
      : { earlier: undefined, answer: undefined };
    if (answer) return { answer };
    if (!earlier) throw new Error(`notification ${id} was not stored and no earlier one holds its client id`);
    return { heldBy: earlier.id };
  }

  /** A client id held past the window is released once; a second holder means something else is wrong. */
  const MAX_TRIES = 2;
  return async (raw: AcceptRequest, options: AcceptOptions = {}): Promise<NotificationAccepted> => {
    const request = validate(raw);
    for (let attempt = 1; ; attempt++) {
      const result = await acceptOnce(begin(request, options));
      if ('answer' in result) return result.answer;
      if (attempt >= MAX_TRIES) {
        throw new Error(
          `notification of ${request.user_id} was not stored: client id still held by ${result.heldBy}`,
        );
      }
      await repo.releaseClientId(result.heldBy);
    }
  };
}

export type Accept = ReturnType<typeof createAccept>;

/** A request as HTTP gives it: any channel names (an unknown one is a 422, not a 400). */
export type AcceptRequest = Omit<NotificationRequest, 'channels'> & { channels: string[] };
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
function validate(request: AcceptRequest): Validated {
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
  const unknown = request.channels.filter((channel) => !isChannel(channel));
  if (unknown.length) {
    throw err('unknown_channel', {
      detail: `Unknown channel ${unknown.join(', ')}`,
      extras: { channels: unknown },
    });
  }
  return { ...request, channels: request.channels.filter(isChannel), priority: request.priority ?? 'normal' };
}

/**
 * The stored fingerprint of a request: its body without the client id (`stableJson(request, 'id')`).
 * One-shot `hash`. The insert calls it for all of a statement's rows one after another, while
 * OpenSSL's code is warm. The canonical JSON is made before the insert (`store`), so this cannot
 * fail inside a shared statement.
 */
function requestHash(canonical: string): string {
  return hash('sha256', canonical, 'base64url');
}

/**
 * JSON with object keys sorted, so the same body hashes alike whatever its key order; `omitKey`
 * leaves out one key of the outermost object. Stored hashes live 24 h: the output must stay byte
 * for byte what it was (stable-json.test.ts pins it). Written with loops and string appends: it
 * runs for every accepted request, and the entries/sort/map/join version showed in the API's profile.
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
