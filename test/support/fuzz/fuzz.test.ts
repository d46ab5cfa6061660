import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { Type } from 'typebox';
import { type App, buildApp } from '../../../src/app.ts';
import { platformError } from '../../../src/platform/errors.ts';
import { createTestAdapters, type TestAdapters, testConfig } from '../platform.ts';
import { fuzzOperation, installWriteCounter, operationsOf } from './index.ts';

// Negative controls: the fuzzer must catch a 500, a non-problem error body and a rejected
// request that still wrote to the database.
let app: App;
let adapters: TestAdapters;
let writes: () => Promise<bigint>;

before(async () => {
  const config = testConfig({}, ['paste']);
  adapters = await createTestAdapters(config);
  const db = adapters.database.db;
  await sql`create table fuzz_notes (body text)`.execute(db);
  app = await buildApp(config, adapters, { logger: false, routes: false });
  const Body = Type.Object({ note: Type.String() });
  app.post<{ Body: { note: string } }>('/crashes', { schema: { body: Body } }, async (request) => {
    if (request.body.note.length > 3) throw new Error('unexpected');
    return { ok: true };
  });
  app.post('/bare-error', { schema: { body: Body } }, async (_request, reply) => reply.code(400).send('no'));
  app.post<{ Body: { note: string } }>(
    '/writes-then-refuses',
    { schema: { body: Body } },
    async (request) => {
      await sql`insert into fuzz_notes values (${request.body.note})`.execute(db);
      throw platformError('unprocessable', 'refused after writing');
    },
  );
  app.post<{ Body: { note: string } }>(
    '/refuses-in-a-rolled-back-transaction',
    { schema: { body: Body } },
    async (request) => {
      await db.transaction().execute(async (trx) => {
        await sql`insert into fuzz_notes values (${request.body.note})`.execute(trx);
        throw platformError('conflict', 'rolled back');
      });
    },
  );
  app.get(
    '/stream',
    { schema: { response: { 200: { content: { 'text/event-stream': { schema: { type: 'string' } } } } } } },
    async (_request, reply) => reply.hijack(),
  );
  await app.ready();
  writes = await installWriteCounter(db, adapters.database.schema);
});
after(async () => {
  await app.close();
  await adapters.close();
});

const failsWith = (pattern: RegExp) => (error: Error & { cause?: Error }) =>
  pattern.test(`${error.message}\n${error.cause?.message ?? ''}`);

const run = (path: string) => {
  const operation = operationsOf(app).find((op) => op.path === path)!;
  return fuzzOperation(app, writes, operation, { runs: 200, seed: 7 });
};

test('a 500 fails the property', async () => {
  await assert.rejects(run('/crashes'), failsWith(/server error: 500/));
});

test('an error that is not problem+json fails the property', async () => {
  await assert.rejects(run('/bare-error'), failsWith(/not problem\+json/));
});

test('a rejected request that committed a write fails the property', async () => {
  await assert.rejects(run('/writes-then-refuses'), failsWith(/committed 1 row write/));
});

test('a rejected request whose transaction rolled back passes', async () => {
  const { statuses } = await run('/refuses-in-a-rolled-back-transaction');
  assert.ok(statuses[409] > 0, JSON.stringify(statuses));
});

test('event streams (text/event-stream responses) are not fuzzed: they never end', () => {
  const paths = operationsOf(app).map((op) => op.path);
  assert.ok(!paths.includes('/stream'), JSON.stringify(paths));
  assert.ok(paths.includes('/crashes'));
});
