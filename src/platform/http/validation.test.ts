import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Type } from 'typebox';
import { createTestAdapters, type TestAdapters, testConfig } from '../../../test/support/platform.ts';
import { type App, buildApp } from '../../app.ts';

/** JSON bodies are validated as sent; the text parts of a request (query, params, forms) are coerced. */
let app: App;
let adapters: TestAdapters;

before(async () => {
  const config = testConfig({}, ['paste']);
  adapters = await createTestAdapters(config);
  app = await buildApp(config, adapters, { logger: false });
  const Item = Type.Object({ count: Type.Integer(), open: Type.Boolean(), name: Type.String() });
  app.post('/test/items/:id', {
    schema: {
      params: Type.Object({ id: Type.Integer() }),
      querystring: Type.Object({ dry_run: Type.Optional(Type.Boolean()) }),
      body: {
        content: {
          'application/json': { schema: Item },
          'application/x-www-form-urlencoded': { schema: Item },
        },
      },
    },
    handler: async (request) => ({ params: request.params, query: request.query, body: request.body }),
  });
  await app.ready();
});
after(async () => {
  await app.close();
  await adapters.close();
});

function fields(response: Awaited<ReturnType<App['inject']>>): string[] {
  assert.equal(response.statusCode, 400, response.body);
  assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
  const problem = response.json();
  assert.equal(problem.code, 'validation_failed');
  return problem.errors.map((error: { field: string }) => error.field).sort();
}

describe('JSON bodies are not type-coerced', () => {
  test('{"content": 42} on paste create is a 400 naming the field, and no paste is made', async () => {
    const response = await app.inject({ method: 'POST', url: '/api/v1/paste', payload: { content: 42 } });
    assert.deepEqual(fields(response), ['body.content']);
    for (const content of [true, null, ['text']]) {
      const other = await app.inject({ method: 'POST', url: '/api/v1/paste', payload: { content } });
      assert.deepEqual(fields(other), ['body.content'], JSON.stringify(content));
    }
    const options = await app.inject({
      method: 'POST',
      url: '/api/v1/paste',
      payload: { content: 'hello', expires_in: '3600', is_private: 'false' },
    });
    assert.deepEqual(fields(options), ['body.expires_in', 'body.is_private']);
    const [stored] = await adapters.database.db
      .withTables<{ pastes: { id: bigint } }>()
      .selectFrom('pastes')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .execute();
    assert.equal(Number(stored.n), 0);
  });

  test('numbers as strings and strings as numbers are refused in a JSON body', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/test/items/7',
      payload: { count: '3', open: 'true', name: 5 },
    });
    assert.deepEqual(fields(response), ['body.count', 'body.name', 'body.open']);
  });

  test('path parameters, query strings and form fields are still coerced', async () => {
    const json = await app.inject({
      method: 'POST',
      url: '/test/items/7?dry_run=true',
      payload: { count: 3, open: true, name: 'a' },
    });
    assert.equal(json.statusCode, 200, json.body);
    assert.deepEqual(json.json(), {
      params: { id: 7 },
      query: { dry_run: true },
      body: { count: 3, open: true, name: 'a' },
    });
    const form = await app.inject({
      method: 'POST',
      url: '/test/items/8',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'count=3&open=true&name=a',
    });
    assert.equal(form.statusCode, 200, form.body);
    assert.deepEqual(form.json().body, { count: 3, open: true, name: 'a' });
  });
});
