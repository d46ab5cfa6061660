import { LRUCache } from 'lru-cache';
import { Counter, type Registry } from 'prom-client';
import { type Cache, createReadThrough } from '../platform/cache/index.ts';
import type { Clock } from '../platform/clock.ts';
import type { PubSub } from '../platform/pubsub/index.ts';
import { unpackContent } from './content.ts';
import type { Highlighted } from './highlight.ts';
import type { PasteRepository } from './repository.ts';
import type { DeletedReason, PasteRow } from './tables.ts';

/** What the shared cache holds per short_url (JSON, so Redis can hold it too). */
export interface CachedPaste {
  id: string;
  short_url: string;
  content: string;
  content_type: string;
  syntax: string | null;
  created_at: string;
  expires_at: string | null;
  user_id: string | null;
  views: number;
  is_private: boolean;
  password_hash: string | null;
  burn_after_read: boolean;
  size: number;
  hash: string;
  /** 'aes-256-gcm': `content` is the envelope of an end-to-end encrypted paste (ciphertext only). */
  encryption?: string | null;
}

export type GoneReason = DeletedReason;
type Loaded = { state: 'live'; paste: CachedPaste } | { state: 'gone'; reason: GoneReason };

/** A paste as this process serves it: the cached record plus its pre-rendered responses. */
export interface LocalEntry {
  paste: CachedPaste;
  expiresAtMs: number;
  /**
   * Public, no password, no burn, not encrypted: any reader gets it without further checks. An
   * encrypted paste is never open, so every read of one passes the service's checks, where the raw
   * text routes refuse it rather than serve the envelope as text.
   */
  open: boolean;
  /**
   * The JSON body up to the views count, as one flat string; a read appends `views}`. Not UTF-8
   * bytes copied into a new Buffer per read: each such body lives outside the JavaScript heap,
   * and at a high read rate that external memory drives V8 into frequent full mark-compacts
   * (long pauses, fewer reads). A string body dies young in the heap and costs a scavenge.
   */
  jsonHead: string;
  /** This paste's view total as far as this process knows. */
  views: number;
  /** `paste.id` as the key of the pending view counts. */
  idKey: bigint;
  /** The content's validator, for the raw text. */
  etag: string;
  /** Weak: the JSON's views count moves on every read, the rest never does. */
  jsonEtag: string;
  /** The highlighted page body, rendered on the first page view. */
  page?: Highlighted;
}

export type Lookup = { state: 'live'; entry: LocalEntry } | { state: 'gone'; reason: GoneReason } | undefined;

const DAY_MS = 86_400_000;
/** Local entries are re-read from the shared cache at least this often, in case an invalidation message was lost. */
const LOCAL_TTL_MS = 5 * 60_000;
const INVALIDATE_CHANNEL = 'paste.invalidate';

export interface PasteReads {
  /** The local entry when it is cached and not expired: the synchronous fast path. */
  peek(shortUrl: string): LocalEntry | undefined;
  lookup(shortUrl: string): Promise<Lookup>;
  /** Counts a read (in memory; written in batches). */
  countView(entry: LocalEntry): void;
  /** The JSON body to send, with the current views count. */
  json(entry: LocalEntry): string;
  /** Keeps a rendered page with its entry (and counts it against the local cache's size). */
  attachPage(entry: LocalEntry, page: Highlighted): void;
  /** Puts a new paste in the shared cache (a write makes it available to readers). */
  prime(row: PasteRow, content: string): Promise<void>;
  invalidate(...shortUrls: string[]): Promise<void>;
  flushViews(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export interface ReadsDeps {
  repository: PasteRepository;
  cache: Cache;
  pubsub: PubSub;
  clock: Clock;
  registry: Registry;
  localCacheBytes: number;
  viewFlushMs: number;
  onFlushError(error: unknown): void;
}

/**
 * The string as one sequential string: a concatenation or slice would otherwise stay a tree (or
 * a view of its parent) that every read flattens again. Decoding makes a new flat string.
 */
function flat(text: string): string {
  return Buffer.from(text).toString();
}

/**
 * The read path, in three layers: a process-local LRU of ready-to-send entries (no await on a
 * hit), the shared cache (memory or Redis, TTL min(24 h, time to expiry), filled through the
 * platform's single-flight read-through), and the database. Concurrent misses in one process
 * share one promise before they even reach the shared cache.
 *
 * Invalidation (delete, burn, cleanup) drops the shared entry and tells every process over
 * pub/sub to drop its local one. Views are counted in memory and added in one UPDATE every
 * few seconds; that UPDATE returns the totals, which refresh the local entries' counts.
 */
export function createPasteReads(deps: ReadsDeps): PasteReads {
  const { repository, cache, clock } = deps;
  const shared = createReadThrough(cache);
  const local = new LRUCache<string, LocalEntry>({
    maxSize: deps.localCacheBytes,
    sizeCalculation: (entry) => 3 * entry.paste.content.length + (entry.page?.html.length ?? 0) + 512,
    ttlAutopurge: false,
    perf: { now: () => clock.now().getTime() },
  });
  const loading = new Map<string, { promise: Promise<Lookup>; stale: boolean }>();
  let pending = new Map<bigint, number>();
  let timer: NodeJS.Timeout | undefined;
  let unsubscribe: (() => Promise<void>) | undefined;

  // Local hits are the hot path: a plain number, added to the counter when it is scraped
  // (prom-client's inc() checks and hashes the labels on every call).
  let localHits = 0;
  let localHitsReported = 0;
  const reads = new Counter({
    name: 'paste_reads_total',
    help: 'Paste lookups by the layer that answered (local, shared cache, database)',
    labelNames: ['layer'] as const,
    registers: [deps.registry],
    collect() {
      this.inc({ layer: 'local' }, localHits - localHitsReported);
      localHitsReported = localHits;
    },
  });
  const loads = new Counter({
    name: 'paste_cache_loads_total',
    help: 'Database loads on a cache miss (concurrent misses of one key share one)',
    registers: [deps.registry],
  });
  const flushes = new Counter({
    name: 'paste_view_flushes_total',
    help: 'Batched view-count writes by outcome',
    labelNames: ['outcome'] as const,
    registers: [deps.registry],
  });

  const ttlFor = (expiresAtMs: number, now: number) => Math.min(DAY_MS, expiresAtMs - now);

  async function loadFromDatabase(shortUrl: string): Promise<{ value: Loaded; ttlMs: number } | undefined> {
    loads.inc();
    reads.inc({ layer: 'database' });
    const row = await repository.findWithContent(shortUrl);
    if (!row) return undefined;
    const now = clock.now().getTime();
    if (row.deleted_reason) return { value: { state: 'gone', reason: row.deleted_reason }, ttlMs: 0 };
    if (row.expires_at && row.expires_at.getTime() <= now) {
      return { value: { state: 'gone', reason: 'expired' }, ttlMs: 0 };
    }
    const paste = toCached(row, unpackContent(row.data, row.encoding));
    return {
      value: { state: 'live', paste },
      ttlMs: ttlFor(row.expires_at?.getTime() ?? Infinity, now),
    };
  }

  function toLocal(paste: CachedPaste): LocalEntry {
    const { content, syntax, created_at, expires_at, content_type, is_private, size, encryption } = paste;
    const head = JSON.stringify({
      content,
      syntax,
      created_at,
      expires_at,
      content_type,
      is_private,
      size,
      // Only an encrypted paste has the member: plain pastes answer as they always did.
      ...(encryption ? { encryption } : {}),
    });
    const id = BigInt(paste.id);
    return {
      paste,
      expiresAtMs: paste.expires_at ? Date.parse(paste.expires_at) : Infinity,
      open: !paste.is_private && !paste.password_hash && !paste.burn_after_read && !paste.encryption,
      jsonHead: flat(`${head.slice(0, -1)},"views":`),
      views: paste.views + (pending.get(id) ?? 0),
      idKey: id,
      etag: `"${paste.hash.slice(0, 32)}"`,
      jsonEtag: `W/"${paste.hash.slice(0, 32)}"`,
    };
  }

  async function lookupUncached(shortUrl: string, marker: { stale: boolean }): Promise<Lookup> {
    let fromDatabase = false;
    const loaded = await shared.get<Loaded>(`paste:${shortUrl}`, () => {
      fromDatabase = true;
      return loadFromDatabase(shortUrl);
    });
    if (!loaded) return undefined;
    if (loaded.state === 'gone') return loaded;
    if (!fromDatabase) reads.inc({ layer: 'shared' });
    const entry = toLocal(loaded.paste);
    const now = clock.now().getTime();
    if (entry.expiresAtMs <= now) return { state: 'gone', reason: 'expired' };
    if (!marker.stale) local.set(shortUrl, entry, { ttl: Math.min(LOCAL_TTL_MS, entry.expiresAtMs - now) });
    return { state: 'live', entry };
  }

  async function flushViews() {
    if (pending.size === 0) return;
    const batch = pending;
    pending = new Map();
    try {
      const totals = await repository.addViews(batch);
      for (const { short_url, views } of totals) {
        const entry = local.peek(short_url);
        if (entry) entry.views = Number(views) + (pending.get(entry.idKey) ?? 0);
      }
      flushes.inc({ outcome: 'ok' });
    } catch (error) {
      // Keep the counts for the next attempt rather than lose them.
      for (const [id, count] of batch) pending.set(id, (pending.get(id) ?? 0) + count);
      flushes.inc({ outcome: 'error' });
      throw error;
    }
  }

  return {
    peek(shortUrl) {
      const entry = local.get(shortUrl);
      if (entry === undefined) return undefined;
      if (entry.expiresAtMs <= clock.now().getTime()) return undefined;
      localHits++;
      return entry;
    },
    lookup(shortUrl) {
      const entry = this.peek(shortUrl);
      if (entry) return Promise.resolve({ state: 'live', entry });
      const inFlight = loading.get(shortUrl);
      if (inFlight) return inFlight.promise;
      const marker = { promise: Promise.resolve<Lookup>(undefined), stale: false };
      marker.promise = lookupUncached(shortUrl, marker).finally(() => {
        if (loading.get(shortUrl) === marker) loading.delete(shortUrl);
      });
      loading.set(shortUrl, marker);
      return marker.promise;
    },
    countView(entry) {
      entry.views++;
      const id = entry.idKey;
      pending.set(id, (pending.get(id) ?? 0) + 1);
    },
    json(entry) {
      return `${entry.jsonHead}${entry.views}}`;
    },
    attachPage(entry, page) {
      entry.page = page;
      const shortUrl = entry.paste.short_url;
      if (local.peek(shortUrl) === entry) local.set(shortUrl, entry, { noUpdateTTL: true });
    },
    async prime(row, content) {
      const now = clock.now().getTime();
      const ttl = ttlFor(row.expires_at?.getTime() ?? Infinity, now);
      await cache.set(`paste:${row.short_url}`, { state: 'live', paste: toCached(row, content) }, ttl);
    },
    async invalidate(...shortUrls) {
      if (shortUrls.length === 0) return;
      dropLocal(shortUrls);
      await shared.invalidate(...shortUrls.map((shortUrl) => `paste:${shortUrl}`));
      await deps.pubsub.publish(INVALIDATE_CHANNEL, shortUrls);
    },
    flushViews,
    async start() {
      unsubscribe = await deps.pubsub.subscribe(INVALIDATE_CHANNEL, (message) => {
        if (Array.isArray(message)) dropLocal(message.filter((item) => typeof item === 'string'));
      });
      timer = setInterval(() => flushViews().catch(deps.onFlushError), deps.viewFlushMs);
      timer.unref();
    },
    async close() {
      clearInterval(timer);
      await unsubscribe?.();
      await flushViews();
    },
  };

  function dropLocal(shortUrls: string[]) {
    for (const shortUrl of shortUrls) {
      local.delete(shortUrl);
      const inFlight = loading.get(shortUrl);
      if (inFlight) inFlight.stale = true;
      loading.delete(shortUrl);
    }
  }
}

function toCached(row: PasteRow, content: string): CachedPaste {
  return {
    id: String(row.id),
    short_url: row.short_url,
    content,
    content_type: row.content_type,
    syntax: row.syntax,
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at?.toISOString() ?? null,
    user_id: row.user_id === null ? null : String(row.user_id),
    views: Number(row.views),
    is_private: row.is_private,
    password_hash: row.password_hash,
    burn_after_read: row.burn_after_read,
    size: row.size,
    hash: row.content_hash,
    encryption: row.encryption ?? null,
  };
}
