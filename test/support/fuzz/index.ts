import fc from 'fast-check';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import type { Db } from '../../../src/platform/db/index.ts';
import {
  deepNesting,
  hostileString,
  hostileValue,
  mutatedObject,
  type RawBody,
  rawBody,
} from './arbitraries.ts';

/**
 * Property-based fuzzing of every operation in the app's OpenAPI document: random and hostile
 * paths, queries, headers and bodies must get a 4xx problem+json (or a success), never a 5xx,
 * and a rejected request must not commit any write to the database.
 */
export interface Operation {
  method: string;
  path: string;
  pathParams: string[];
  queryParams: string[];
  bodyProperties: string[] | undefined;
}

export interface FuzzCase {
  url: string;
  headers: Record<string, string>;
  body?: unknown;
  raw?: RawBody;
}

export function operationsOf(app: FastifyInstance): Operation[] {
  const spec = (app as unknown as { swagger(): OpenApi }).swagger();
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(spec.paths ?? {})) {
    for (const method of ['get', 'post', 'put', 'patch', 'delete'] as const) {
      const op = item[method];
      if (!op) continue;
      // A Server-Sent Events stream never ends, so inject() would wait for it forever; such
      // operations declare `text/event-stream` as their response content and are left out.
      if (Object.values(op.responses ?? {}).some((response) => response.content?.['text/event-stream']))
        continue;
      const params = op.parameters ?? [];
      const schema = op.requestBody?.content?.['application/json']?.schema;
      operations.push({
        method: method.toUpperCase(),
        path,
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        queryParams: params.filter((p) => p.in === 'query').map((p) => p.name),
        bodyProperties: op.requestBody ? Object.keys(schema?.properties ?? {}) : undefined,
      });
    }
  }
  return operations;
}

interface OpenApi {
  paths?: Record<
    string,
    Partial<
      Record<
        string,
        {
          parameters?: { in: string; name: string }[];
          responses?: Record<string, { content?: Record<string, unknown> }>;
          requestBody?: { content?: Record<string, { schema?: { properties?: Record<string, unknown> } }> };
        }
      >
    >
  >;
}

export function caseFor(operation: Operation): fc.Arbitrary<FuzzCase> {
  const pathValues = fc.tuple(...operation.pathParams.map(() => hostileString));
  const query = fc.dictionary(
    fc.oneof(fc.constantFrom(...operation.queryParams, 'x'), hostileString),
    hostileString,
    {
      maxKeys: 3,
    },
  );
  const headers = fc.record(
    {
      authorization: fc.oneof(
        hostileString.map((s) => `Bearer ${s}`),
        hostileString,
      ),
      'x-admin-key': hostileString,
      'x-paste-password': hostileString,
      'accept-language': hostileString,
    },
    { requiredKeys: [] },
  );
  const hasBody = operation.bodyProperties !== undefined || operation.method !== 'GET';
  const body = hasBody
    ? fc.oneof(
        { weight: 4, arbitrary: mutatedObject(operation.bodyProperties ?? []).map((body) => ({ body })) },
        { weight: 2, arbitrary: hostileValue.map((body) => ({ body })) },
        { weight: 1, arbitrary: deepNesting.map((raw) => ({ raw })) },
        { weight: 2, arbitrary: rawBody.map((raw) => ({ raw })) },
      )
    : fc.constant({});
  return fc.tuple(pathValues, query, headers, body, fc.boolean()).map(([values, q, h, b, badPercent]) => {
    let url = operation.path;
    operation.pathParams.forEach((name, i) => {
      // Percent-encode the UTF-8 bytes (lone surrogates become U+FFFD), and now and then break the encoding.
      const encoded = encodeSegment(values[i]) || '%20';
      url = url.replace(`{${name}}`, badPercent ? `${encoded}%E0%A4%A` : encoded);
    });
    const search = new URLSearchParams(q as Record<string, string>).toString();
    const clean: Record<string, string> = {};
    for (const [name, value] of Object.entries(h)) {
      // Node refuses header values with control characters before they reach us; send what a client could.
      if (typeof value === 'string' && /^[\t\x20-\x7e\x80-\xff]*$/.test(value)) clean[name] = value;
    }
    return { url: search ? `${url}?${search}` : url, headers: clean, ...b };
  });
}

function encodeSegment(value: string): string {
  let out = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const char = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/**
 * Counts committed row writes in a schema: a row trigger on every table bumps a counter, and the
 * bump commits or rolls back with the write. (Transaction ids would be simpler, but on a shared
 * PostgreSQL server other sessions take them too.) Call after all migrations.
 */
export async function installWriteCounter(db: Db, schema: string): Promise<() => Promise<bigint>> {
  await sql`create table if not exists fuzz_write_count (n bigint not null)`.execute(db);
  await sql`insert into fuzz_write_count select 0 where not exists (select 1 from fuzz_write_count)`.execute(
    db,
  );
  await sql`create or replace function fuzz_count_write() returns trigger language plpgsql as $$
    begin update fuzz_write_count set n = n + 1; return null; end $$`.execute(db);
  const { rows } = await sql<{ table_name: string }>`
    select table_name from information_schema.tables
    where table_schema = ${schema} and table_type = 'BASE TABLE' and table_name <> 'fuzz_write_count'`.execute(
    db,
  );
  for (const { table_name } of rows) {
    await sql`drop trigger if exists fuzz_count_write on ${sql.id(schema, table_name)}`.execute(db);
    await sql`create trigger fuzz_count_write after insert or update or delete on ${sql.id(schema, table_name)}
      for each row execute function fuzz_count_write()`.execute(db);
  }
  return async () => {
    const { rows: count } = await sql<{ n: bigint }>`select n from fuzz_write_count`.execute(db);
    return BigInt(count[0].n);
  };
}

export function describeResponse(response: LightMyRequestResponse): string {
  return `${response.statusCode} ${response.headers['content-type']} ${response.body.slice(0, 300)}`;
}

/** Runs `runs` cases against one operation; throws (with the shrunk case) on the first violation. */
export async function fuzzOperation(
  app: FastifyInstance,
  writes: () => Promise<bigint>,
  operation: Operation,
  options: {
    runs: number;
    seed: number;
    /**
     * Valid credentials sent under the hostile headers, so hostile input reaches the handlers of
     * operations that need a caller (a hostile header of the same name replaces its credential).
     */
    credentials?: Record<string, string>;
  },
): Promise<{ statuses: Record<number, number> }> {
  const statuses: Record<number, number> = {};
  // Each case comes from its own address: wrong credentials are throttled per address, and one
  // address's throttle would otherwise answer every later case 429 before its input is read.
  const address = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255)).map((parts) => `10.${parts.join('.')}`);
  await fc.assert(
    fc.asyncProperty(caseFor(operation), address, async (input, remoteAddress) => {
      const before = await writes();
      const response = await app.inject({
        method: operation.method as 'GET',
        url: input.url,
        remoteAddress,
        headers: {
          ...options.credentials,
          ...input.headers,
          ...(input.raw ? { 'content-type': input.raw.contentType } : {}),
        },
        payload: input.raw ? input.raw.raw : (input.body as object | undefined),
      });
      statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1;
      if (response.statusCode >= 500) throw new Error(`server error: ${describeResponse(response)}`);
      if (response.statusCode < 400) return;
      const type = String(response.headers['content-type'] ?? '');
      const isPage = type.startsWith('text/html');
      if (!isPage) {
        if (!type.startsWith('application/problem+json'))
          throw new Error(`not problem+json: ${describeResponse(response)}`);
        const problem = response.json();
        if (
          typeof problem.code !== 'string' ||
          problem.status !== response.statusCode ||
          !problem.requestId
        ) {
          throw new Error(`malformed problem: ${describeResponse(response)}`);
        }
      }
      const committed = (await writes()) - before;
      if (committed > 0n) {
        throw new Error(
          `a rejected request committed ${committed} row write(s): ${describeResponse(response)}`,
        );
      }
    }),
    { numRuns: options.runs, seed: options.seed, endOnFailure: false, verbose: 0 },
  );
  return { statuses };
}
