import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { createTestAdapters, type TestAdapters, testConfig } from '../../../test/support/platform.ts';
import { type App, buildApp } from '../../app.ts';

/**
 * Stored idempotent responses are sealed: what a client is shown once (a paste's delete token)
 * is not in the table in plain text, a replay is still byte for byte, a sealed answer moved to
 * another row does not open there, and rows stored in plain text before sealing still replay.
 */
let app: App;
let adapters: TestAdapters;
let made = 0;

before(async () => {
  const config = testConfig({}, ['paste']);
  adapters = await createTestAdapters(config);
  app = await buildApp(config, adapters, { logger: false });
  app.post(
    '/test/secrets',
    { config: { idempotency: { scope: 'test.secrets' } } },
    async (_request, reply) => {
      made++;
      return reply
        .code(201)
        .header('location', `/test/secrets/${made}`)
        .send({ n: made, secret: `s3cr3t-${made}` });
    },
  );
  await app.ready();
});
after(async () => {
  await app.close();
  await adapters.close();
});

async function rowText(key: string): Promise<string> {
  const { rows } = await sql<{ row: string }>`select row_to_json(k)::text as row from idempotency_keys k
    where key = ${key}`.execute(adapters.database.db);
  assert.equal(rows.length, 1);
  return rows[0].row;
}

const post = (key: string) =>
  app.inject({
    method: 'POST',
    url: '/test/secrets',
    headers: { 'idempotency-key': key },
    payload: { item: 1 },
  });

describe('stored idempotent responses', () => {
  test("a paste's delete token is not stored in plain text; the replay is byte for byte", async () => {
    const create = () =>
      app.inject({
        method: 'POST',
        url: '/api/v1/paste',
        headers: { 'idempotency-key': 'paste-1' },
        payload: { content: 'keep me' },
      });
    const first = await create();
    assert.equal(first.statusCode, 201, first.body);
    const { delete_token: token, short_url: shortUrl } = first.json();
    const stored = await rowText('paste-1');
    assert.equal(stored.includes(token), false, 'the delete token is stored in plain text');
    assert.equal(stored.includes(shortUrl), false, 'the answer is stored in plain text');
    const replay = await create();
    assert.equal(replay.statusCode, 201);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.rawPayload.equals(first.rawPayload), true);
    assert.equal(replay.headers['content-type'], first.headers['content-type']);
    assert.equal(replay.headers.location, first.headers.location);
  });

  test('a sealed answer copied into another row does not replay there: that key runs afresh', async () => {
    const a = await post('swap-a');
    const b = await post('swap-b');
    assert.notEqual(a.json().n, b.json().n);
    await sql`update idempotency_keys set response_body = (select response_body from idempotency_keys where key = 'swap-a')
      where key = 'swap-b'`.execute(adapters.database.db);
    const again = await post('swap-b');
    assert.equal(again.statusCode, 201);
    assert.equal(again.headers['idempotent-replayed'], undefined);
    assert.notEqual(again.json().secret, a.json().secret, "another key's answer was replayed");
    // Stored afresh, and replayed from now on.
    assert.equal((await post('swap-b')).body, again.body);
  });

  test('a row stored in plain text before sealing still replays', async () => {
    const first = await post('legacy');
    await sql`update idempotency_keys
      set response_headers = ${JSON.stringify({ 'content-type': 'application/json; charset=utf-8', location: '/old' })}::jsonb,
          response_body = '{"n":0,"secret":"from-before"}'
      where key = 'legacy'`.execute(adapters.database.db);
    const replay = await post('legacy');
    assert.equal(replay.statusCode, first.statusCode);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.body, '{"n":0,"secret":"from-before"}');
    assert.equal(replay.headers.location, '/old');
  });
});
