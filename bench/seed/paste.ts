import { packContent, type StoredContent } from '../../src/paste/content.ts';
import { hashPassword } from '../../src/paste/secrets.ts';
import { MAX_CONTENT_BYTES } from '../../src/paste/settings.ts';
import { createShortIdCodec } from '../../src/paste/shortid.ts';
import { atLeast, DAY_MS, inChunks, type SeedContext, type ServiceSeed, share } from './common.ts';

/** spec/text-sharing.md: 1 million new pastes a day, 10 KB on average; the loader writes 30 days. */
const PASTES_PER_DAY = 1_000_000;
const DAYS = 30;
/** Raw text per insert statement: bounds the loader's memory whatever the scale. */
const BATCH_BYTES = 32 * 1024 * 1024;
/** Password of every password-protected seeded paste. */
export const SEED_PASTE_PASSWORD = 'seed-password';
const WORDS =
  'const let function return if else for while import export from class new this await async try catch throw ' +
  'value result items index count name data config error request response user id list map filter reduce ' +
  'push length string number boolean null undefined true false def self print range len dict append yield ' +
  'SELECT FROM WHERE JOIN GROUP ORDER BY INSERT UPDATE DELETE INTO VALUES public static void int float';

/**
 * Lines that read like code (keywords, identifiers, numbers, indentation): zstd compresses them
 * about as well as real pastes (3-5x), which a repeated or random text would not.
 */
function codeCorpus(bytes: number): string {
  const words = WORDS.split(' ');
  const lines: string[] = [];
  let size = 0;
  for (let n = 0; size < bytes; n++) {
    const indent = '  '.repeat(n % 4);
    const length = 3 + ((n * 7919) % 9);
    const tokens = Array.from({ length }, (_, i) => {
      const word = words[Math.floor(Math.random() * words.length)];
      return i % 4 === 3 ? `${word}_${Math.floor(Math.random() * 1000)}` : word;
    });
    const line = `${indent}${tokens.join(' ')};`;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join('\n');
}

/**
 * Size of a paste: log-normal with a median of 2 KB and sigma 1.8, so the mean is the spec's
 * 10 KB, most pastes are small and a long tail reaches the 10 MB limit at full scale.
 */
function pasteSize(): number {
  const normal = Math.sqrt(-2 * Math.log(1 - Math.random())) * Math.cos(2 * Math.PI * Math.random());
  return Math.min(MAX_CONTENT_BYTES, Math.max(16, Math.round(2048 * Math.exp(1.8 * normal))));
}

/** A body of `size` bytes: a unique first line (so its SHA-256 is its own), then corpus text. */
function body(corpus: string, id: number, size: number): Buffer {
  const head = `// paste ${id}\n`;
  let text = head;
  while (text.length < size) {
    const start = Math.floor(Math.random() * (corpus.length - 1));
    text += corpus.slice(start, start + size - text.length);
  }
  return Buffer.from(text.slice(0, size), 'utf8');
}

interface Batch {
  ids: number[];
  contents: StoredContent[];
  /** Index into `contents` per paste: 5 % of pastes share the content of an earlier one. */
  contentOf: number[];
}

function makeBatch(corpus: string, firstId: number, count: number): Batch {
  const batch: Batch = { ids: [], contents: [], contentOf: [] };
  let bytes = 0;
  for (let id = firstId; id < firstId + count && bytes < BATCH_BYTES; id++) {
    batch.ids.push(id);
    if (batch.contents.length > 0 && Math.random() < 0.05) {
      batch.contentOf.push(Math.floor(Math.random() * batch.contents.length));
      continue;
    }
    const content = packContent(body(corpus, id, pasteSize()));
    bytes += content.size;
    batch.contentOf.push(batch.contents.length);
    batch.contents.push(content);
  }
  return batch;
}

/**
 * Contents once per hash (the repository's own statement shape: one bytea cut by offsets), then
 * the pastes: ids, short_urls, hashes and sizes from here; times, flags and owners drawn in SQL.
 */
const INSERT_BATCH = `
  with content as (
    insert into paste_contents (hash, data, size, touched_at)
    select c.hash, substring($1::bytea from c.start for c.length), c.size, $6::timestamptz
    from unnest($2::varchar[], $3::int[], $4::int[], $5::int[]) as c(hash, start, length, size)
    on conflict (hash) do nothing
  ), drawn as (
    select p.id, p.short_url, p.hash, p.size,
      $6::timestamptz + (p.ord - 1) * $7::interval / $8::int + random() * $7::interval / $8::int as created_at,
      random() as fate, random() as owner_draw, random() as flags
    from unnest($9::bigint[], $10::varchar[], $11::varchar[], $12::int[]) with ordinality as p(id, short_url, hash, size, ord)
  )
  insert into pastes (id, short_url, content_hash, syntax, created_at, expires_at, user_id, views, is_private,
                      password_hash, burn_after_read, delete_token_hash, size)
  select id, short_url, hash,
    (array[null, null, null, null, 'python', 'javascript', 'typescript', 'json', 'bash', 'sql', 'go', 'java',
           'rust', 'yaml', 'markdown', 'cpp'])[1 + floor(flags * 1000)::int % 16],
    created_at,
    case when fate < 0.10 then created_at + ($13::timestamptz - created_at) * random()
         when fate < 0.30 then $13::timestamptz + random() * interval '365 days' end,
    case when flags < 0.02 or owner_draw < 0.10 then 1 + floor(owner_draw * $14::int)::bigint end,
    floor(exp(random() * 7))::bigint - 1,
    flags < 0.02,
    case when flags >= 0.02 and flags < 0.03 then ($15::text[])[1 + floor(random() * 4)::int] end,
    flags >= 0.03 and flags < 0.035,
    encode(sha256(('dt_seed_' || id)::bytea), 'hex'),
    size
  from drawn`;

async function insertBatch(context: SeedContext, batch: Batch, dayStart: Date, extra: BatchExtra) {
  const codec = extra.codec;
  const starts: number[] = [];
  let offset = 1;
  for (const content of batch.contents) {
    starts.push(offset);
    offset += content.data.length;
  }
  await context.client.query(INSERT_BATCH, [
    Buffer.concat(batch.contents.map((content) => content.data)),
    batch.contents.map((content) => content.hash),
    starts,
    batch.contents.map((content) => content.data.length),
    batch.contents.map((content) => content.size),
    new Date(dayStart.getTime() + extra.offsetMs),
    `${extra.spanMs} milliseconds`,
    batch.ids.length,
    batch.ids,
    batch.ids.map((id) => codec.encode(id)),
    batch.contentOf.map((index) => batch.contents[index].hash),
    batch.contentOf.map((index) => batch.contents[index].size),
    context.now,
    extra.users,
    extra.passwordHashes,
  ]);
}

interface BatchExtra {
  codec: ReturnType<typeof createShortIdCodec>;
  users: number;
  passwordHashes: string[];
  offsetMs: number;
  spanMs: number;
}

/** Registered users: every private paste has an owner, and 10 % of the others do. */
async function insertUsers(context: SeedContext, users: number): Promise<void> {
  await context.client.query(
    `insert into paste_users (email, api_key_hash, created_at)
     select 'seed-user-' || n || '@example.test', encode(sha256(('pk_seed_' || n)::bytea), 'hex'),
       $2::timestamptz - interval '60 days' + random() * interval '30 days'
     from generate_series(1, $1::int) n`,
    [users, context.now],
  );
}

async function run(context: SeedContext): Promise<Record<string, string>> {
  const total = Math.round(PASTES_PER_DAY * DAYS * context.scale);
  const users = atLeast(10, total / 200);
  await insertUsers(context, users);
  const corpus = codeCorpus(4 * 1024 * 1024);
  // Four real scrypt hashes (each with its own salt) of one password: scrypt takes ~50 ms a hash.
  const passwordHashes = await Promise.all([1, 2, 3, 4].map(() => hashPassword(SEED_PASTE_PASSWORD)));
  const codec = createShortIdCodec(context.secret);
  const firstDay = context.now.getTime() - DAYS * DAY_MS;
  let nextId = 1;
  await inChunks(context, 'paste days', DAYS, async (day) => {
    const count = share(total, DAYS, day);
    const dayStart = new Date(firstDay + day * DAY_MS);
    let done = 0;
    while (done < count) {
      const batch = makeBatch(corpus, nextId, count - done);
      const extra = {
        codec,
        users,
        passwordHashes,
        offsetMs: (done / count) * DAY_MS,
        spanMs: (batch.ids.length / count) * DAY_MS,
      };
      await insertBatch(context, batch, dayStart, extra);
      done += batch.ids.length;
      nextId += batch.ids.length;
    }
  });
  // The app takes its ids from this sequence: the next paste must come after the seeded ones.
  if (nextId > 1) await context.client.query(`select setval('paste_id_seq', $1)`, [nextId - 1]);
  return {};
}

export const pasteSeed: ServiceSeed = {
  name: 'paste',
  recordTable: 'pastes',
  recordName: 'paste',
  recordTables: ['pastes', 'paste_contents', 'paste_users'],
  run,
};
