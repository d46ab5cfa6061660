import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import Fastify from 'fastify';
import { resolveRefs } from '../../../test/support/openapi.ts';
import { createTestApp, type TestApp } from '../../../test/support/platform.ts';
import { operationIdOf, registerOpenApi } from './openapi.ts';

/**
 * /openapi.json is a contract clients are generated from: every operation is named (a unique,
 * stable operationId), grouped (tags the document lists and describes), summarised, and says who
 * may call it. `npm run lint:api` runs Redocly and Spectral on the same document; this checks
 * what they only warn about, and what they cannot know.
 */

interface Operation {
  operationId?: string;
  tags?: string[];
  summary?: string;
  description?: string;
  security?: Record<string, string[]>[];
  parameters?: unknown[];
  requestBody?: unknown;
  responses: Record<string, unknown>;
}
interface Spec {
  info: { license?: { name: string }; contact?: { name?: string; url?: string; email?: string } };
  servers?: { url: string }[];
  tags?: { name: string; description?: string }[];
  paths: Record<string, Record<string, Operation>>;
  components?: Record<string, Record<string, unknown>>;
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options']);

let t: TestApp;
/** The document as served, and with its references followed (what a reader of /docs sees). */
let raw: Spec;
let spec: Spec;

function operations() {
  return Object.entries(spec.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.has(method))
      .map(([method, operation]) => ({ key: `${method.toUpperCase()} ${path}`, path, operation })),
  );
}

before(async () => {
  t = await createTestApp();
  raw = (await t.app.inject({ url: '/openapi.json' })).json();
  spec = resolveRefs(raw, raw);
});
after(() => t.close());

describe('/openapi.json', () => {
  test('names every operation with a unique operationId a client method can take', () => {
    const seen = new Map<string, string>();
    const wrong: string[] = [];
    for (const { key, operation } of operations()) {
      const id = operation.operationId;
      if (id === undefined || !/^[a-z][A-Za-z0-9]*$/.test(id)) wrong.push(`${key}: ${id}`);
      else if (seen.has(id)) wrong.push(`${key}: ${id}, as ${seen.get(id)}`);
      else seen.set(id, key);
    }
    assert.deepEqual(wrong, []);
    assert.ok(seen.size > 70, 'the app has every service');
    assert.equal(spec.paths['/api/v1/paste/{short_url}'].get.operationId, 'getPasteByShortUrl');
  });

  test('gives every operation a summary and tags the document lists with a description', () => {
    const listed = new Map((spec.tags ?? []).map((tag) => [tag.name, tag.description]));
    const wrong: string[] = [];
    for (const { key, operation } of operations()) {
      if (!operation.summary?.trim()) wrong.push(`${key}: no summary`);
      if (!operation.tags?.length) wrong.push(`${key}: no tags`);
      for (const tag of operation.tags ?? [])
        if (!listed.has(tag)) wrong.push(`${key}: tag ${tag} not listed`);
    }
    assert.deepEqual(wrong, []);
    for (const [name, description] of listed) assert.ok(description?.trim(), `tag ${name} has a description`);
    const used = new Set(operations().flatMap(({ operation }) => operation.tags ?? []));
    assert.deepEqual([...listed.keys()].sort(), [...used].sort(), 'the list holds the tags in use');
  });

  test('says who may call every operation, and a public one explicitly needs nothing: security []', () => {
    const wrong: string[] = [];
    for (const { key, operation } of operations()) {
      const security = operation.security;
      if (!Array.isArray(security)) {
        wrong.push(`${key}: no security (it would inherit the document's)`);
        continue;
      }
      // describeAccess ends a public-only operation's description with "Public." (auth/access.ts).
      const publicOnly = /(^|\n)Public\.$/.test(operation.description ?? '');
      if (publicOnly !== (security.length === 0)) wrong.push(`${key}: ${JSON.stringify(security)}`);
      // [{}] means the same as [], but says it in a way generators and linters read as a scheme.
      if (security.length > 0 && security.every((requirement) => Object.keys(requirement).length === 0)) {
        wrong.push(`${key}: [{}] instead of []`);
      }
    }
    assert.deepEqual(wrong, []);
    assert.deepEqual(spec.paths['/api/v1/cities'].get.security, []);
    assert.deepEqual(spec.paths['/api/v1/paste/{short_url}'].get.security, [{}, { pasteKey: [] }]);
  });

  test('documents what route config implies: Idempotency-Key, replays, ETag and 304, rate limits', () => {
    type Parameter = { in: string; name: string; required?: boolean };
    type Documented = { headers?: Record<string, unknown> };
    const idempotent = [
      ['/api/v1/parking/exit', 'post', false],
      ['/api/notifications', 'post', false],
      ['/api/v1/bookings', 'post', true],
      ['/api/v1/payments/{paymentId}/pay', 'post', false],
    ] as const;
    for (const [path, method, required] of idempotent) {
      const operation = spec.paths[path][method];
      const key = (operation.parameters as Parameter[]).find(
        (p) => p.in === 'header' && p.name === 'idempotency-key',
      );
      assert.ok(key, `${path} declares Idempotency-Key`);
      assert.equal(key.required ?? false, required, `${path}: Idempotency-Key required`);
      for (const status of ['409', '422']) assert.ok(operation.responses[status], `${path} lists ${status}`);
      const success = Object.keys(operation.responses).find((status) => status.startsWith('2')) ?? '';
      assert.ok((operation.responses[success] as Documented).headers?.['Idempotent-Replayed'], path);
    }
    const seats = spec.paths['/api/v1/shows/{id}/seats'].get;
    assert.ok((seats.responses['200'] as Documented).headers?.ETag);
    assert.ok(seats.responses['304']);
    const hold = spec.paths['/api/v1/shows/{id}/hold'].post;
    assert.ok((hold.responses['201'] as Documented).headers?.Location);
    assert.ok((hold.responses['201'] as Documented).headers?.RateLimit);
    assert.ok((hold.responses['429'] as Documented).headers?.['Retry-After']);
  });

  test('says each problem answer and each header once, in components, and every reference resolves', () => {
    const hold = raw.paths['/api/v1/shows/{id}/hold'].post.responses;
    assert.deepEqual(hold['401'], { $ref: '#/components/responses/Unauthorized' });
    assert.deepEqual(hold['429'], { $ref: '#/components/responses/TooManyRequests' });
    assert.deepEqual(hold.default, { $ref: '#/components/responses/Problem' });
    // A problem that also carries the route's rate-limit headers stays with it, its headers by reference.
    assert.deepEqual((hold['409'] as { headers: unknown }).headers, {
      RateLimit: { $ref: '#/components/headers/RateLimit' },
      'RateLimit-Policy': { $ref: '#/components/headers/RateLimit-Policy' },
    });
    const shows = raw.paths['/api/v1/cities/{id}/shows'].get.responses;
    assert.deepEqual(shows['404'], { $ref: '#/components/responses/NotFound' });
    const text = JSON.stringify(raw);
    for (const kind of ['responses', 'headers']) {
      for (const name of Object.keys(raw.components?.[kind] ?? {})) {
        assert.ok(text.includes(`"#/components/${kind}/${name}"`), `${kind}/${name} is used`);
      }
    }
    for (const [, ref] of text.matchAll(/"\$ref":"(#\/[^"]+)"/g)) {
      assert.doesNotThrow(() => resolveRefs(raw, { $ref: ref }), ref);
    }
    const unauthorized = spec.paths['/api/v1/shows/{id}/hold'].post.responses['401'] as {
      headers?: Record<string, { description?: string }>;
    };
    assert.deepEqual(Object.keys(unauthorized.headers ?? {}), ['RateLimit', 'RateLimit-Policy']);
    assert.match(unauthorized.headers?.RateLimit?.description ?? '', /What is left of the quota/);
  });

  test('documents the problems an operation answers because of its parameters and security', () => {
    const wrong: string[] = [];
    for (const { key, operation } of operations()) {
      const input = (operation.parameters?.length ?? 0) > 0 || operation.requestBody !== undefined;
      const credentials = (operation.security ?? []).some(
        (requirement) => Object.keys(requirement).length > 0,
      );
      if (input && !operation.responses['400']) wrong.push(`${key}: 400`);
      if (credentials && !operation.responses['401']) wrong.push(`${key}: 401`);
    }
    assert.deepEqual(wrong, []);
    const redrive = spec.paths['/api/notifications/dead-letters/{id}/redrive'].post.responses;
    assert.ok(redrive['403'], 'a key without the scope is 403');
    assert.equal(spec.paths['/health/live'].get.responses['400'], undefined, 'no input, no 400');
  });

  test('has a license (as package.json says), a contact, servers and no overlapping paths', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'));
    assert.equal(spec.info.license?.name, pkg.license);
    assert.ok(spec.info.contact?.name);
    assert.equal(spec.servers?.[0]?.url, t.config.baseUrl);
    // Two templates one URL can match leave a client guessing. These pairs are harmless and
    // public (redocly.yaml, no-ambiguous-paths): /paste/raw, /documents/raw and /raw/raw would
    // need a paste named "raw", "paste" or "documents", and ids are 6 to 8 characters.
    const templates = Object.keys(spec.paths);
    const overlapping = templates.flatMap((a, i) =>
      templates
        .slice(i + 1)
        .filter((b) => overlap(a, b))
        .map((b) => `${a} ${b}`),
    );
    assert.deepEqual(overlapping, [
      '/paste/{short_url} /{short_url}/raw',
      '/{short_url}/raw /documents/{key}',
      '/{short_url}/raw /raw/{key}',
    ]);
  });
});

/**
 * Whether two path templates match some URL alike: a concrete segment wins over a parameter
 * (OpenAPI: /movies/suggest before /movies/{id}), so they are ambiguous only when each is the
 * concrete one somewhere, or neither ever is (/a/{x} and /a/{y}).
 */
function overlap(a: string, b: string): boolean {
  const x = a.split('/');
  const y = b.split('/');
  if (x.length !== y.length) return false;
  let aConcrete = false;
  let bConcrete = false;
  for (const [i, segment] of x.entries()) {
    const [aParam, bParam] = [segment.startsWith('{'), y[i].startsWith('{')];
    if (!aParam && !bParam && segment !== y[i]) return false;
    if (!aParam && bParam) aConcrete = true;
    if (aParam && !bParam) bConcrete = true;
  }
  return aConcrete === bConcrete;
}

describe('operationId', () => {
  test('is the method and the path after /api or /api/v<n>, camelCased, a parameter read as By…', () => {
    assert.equal(operationIdOf('GET', '/api/v1/paste/:short_url'), 'getPasteByShortUrl');
    assert.equal(
      operationIdOf('POST', '/api/notifications/dead-letters/:id/redrive'),
      'postNotificationsDeadLettersByIdRedrive',
    );
    assert.equal(operationIdOf('GET', '/:short_url/raw'), 'getByShortUrlRaw');
    assert.equal(
      operationIdOf('GET', '/api/users/:userId/notification-limits'),
      'getUsersByUserIdNotificationLimits',
    );
    assert.equal(operationIdOf('GET', '/health/live'), 'getHealthLive');
    assert.equal(operationIdOf('GET', '/apiary'), 'getApiary');
  });

  test('a second route with the same one is refused when it is added, naming both', async () => {
    const app = Fastify();
    await registerOpenApi(app, { baseUrl: 'http://localhost', securitySchemes: {}, tags: [] });
    const handler = async () => ({});
    app.post('/api/v1/paste', { schema: { summary: 'Create' } }, handler);
    assert.throws(
      () => app.post('/paste', { schema: { summary: 'Create (alias)' } }, handler),
      /operationId postPaste of POST \/paste is already POST \/api\/v1\/paste's/,
    );
    // One it names itself is taken as it is, and checked the same way.
    app.post('/paste', { schema: { summary: 'Create (alias)', operationId: 'postPasteAlias' } }, handler);
    assert.throws(
      () => app.get('/other', { schema: { operationId: 'postPasteAlias' } }, handler),
      /postPasteAlias/,
    );
    // Pages (hidden) and HEAD are not operations of the document.
    app.get('/page', { schema: { hide: true } }, handler);
    await app.ready();
    const document = app.swagger() as unknown as Spec;
    assert.equal(document.paths['/paste'].post.operationId, 'postPasteAlias');
    assert.equal(document.paths['/page'], undefined);
    await app.close();
  });
});
