import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { createTestAdapters, type TestAdapters, testConfig } from '../../../test/support/platform.ts';
import { type App, buildApp } from '../../app.ts';
import { createUserTokens } from '../auth/user-tokens.ts';

/**
 * Stored idempotent responses are sealed: what a client is shown once (a paste's delete token)
 * is not in the table in plain text, a replay is still byte for byte, a sealed answer moved to
 * another row does not open there, and rows stored in plain text before sealing still replay.
 */
let app: App;
let adapters: TestAdapters;
let made = 0;
let asUser: (userId: string) => { authorization: string };

before(async () => {
  const config = testConfig({}, ['paste']);
  const tokens = createUserTokens(config.secret);
  asUser = (userId) => ({ authorization: `Bearer ${tokens.issue(userId)}` });
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
  // A route of a signed-in user that (like booking once did) names a body field as its principal.
  app.post(
    '/test/orders',
    {
      config: {
        access: { user: true },
        idempotency: { scope: 'test.orders', principal: (request) => String((request.body as Order).item) },
      },
    },
    async (request, reply) => reply.code(201).send({ n: ++made, item: (request.body as Order).item }),
  );
  await app.ready();
});

interface Order {
  item: number;
}
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

describe('whose keys', () => {
  const order = (userId: string, key: string, item: number) =>
    app.inject({
      method: 'POST',
      url: '/test/orders',
      headers: { ...asUser(userId), 'idempotency-key': key },
      payload: { item },
    });

  test("a signed-in caller's key is theirs, not a body field's: another body with it is 422, nothing runs", async () => {
    const first = await order('ana', 'order-1', 1);
    assert.equal(first.statusCode, 201, first.body);
    const before = made;
    const reused = await order('ana', 'order-1', 2);
    assert.equal(reused.statusCode, 422, reused.body);
    assert.match(String(reused.headers['content-type']), /^application\/problem\+json/);
    assert.equal(reused.json().code, 'idempotency_key_reused');
    assert.equal(made, before, 'the handler did not run');
    const replay = await order('ana', 'order-1', 1);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.body, first.body);
  });

  test('two callers with the same key each get their own answer', async () => {
    const ana = await order('ana', 'order-2', 1);
    const bob = await order('bob', 'order-2', 1);
    assert.equal(bob.statusCode, 201);
    assert.equal(bob.headers['idempotent-replayed'], undefined);
    assert.notEqual(bob.json().n, ana.json().n);
    assert.equal((await order('bob', 'order-2', 1)).body, bob.body, "bob's repeat replays bob's answer");
  });

  test("anonymous callers are told apart by address: the same key and body never replay another's secret", async () => {
    const send = (remoteAddress: string) =>
      app.inject({
        method: 'POST',
        url: '/test/secrets',
        headers: { 'idempotency-key': 'anonymous-1' },
        payload: { item: 1 },
        remoteAddress,
      });
    const first = await send('203.0.113.1');
    const other = await send('203.0.113.2');
    assert.equal(other.statusCode, 201);
    assert.equal(other.headers['idempotent-replayed'], undefined);
    assert.notEqual(other.json().secret, first.json().secret);
    const again = await send('203.0.113.1');
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.body, first.body);
  });
});
