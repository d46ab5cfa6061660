import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, RouteOptions } from 'fastify';
import type { SecurityScheme } from '../auth/access.ts';
import { ProblemSchema } from './problem.ts';

/** A tag of /openapi.json: the group an operation is listed under in /docs and in generated clients. */
export interface ApiTag {
  name: string;
  description: string;
}

export interface OpenApiOptions {
  baseUrl: string;
  securitySchemes: Record<string, SecurityScheme>;
  /** Every tag an operation may carry, with what it groups (the document lists the ones in use). */
  tags: readonly ApiTag[];
}

/**
 * OpenAPI generated from the route schemas, at /openapi.json, with Swagger UI at /docs. It is a
 * contract clients are generated from, so every operation has a stable operationId (operationIdOf),
 * its tags, a summary and its `security` (auth/index.ts writes it from `config.access`); `npm run
 * lint:api` holds the document to Redocly's and Spectral's rules.
 */
export async function registerOpenApi(app: FastifyInstance, options: OpenApiOptions): Promise<void> {
  // Before swagger's own onRoute hook, so the document it builds sees the ids.
  app.addHook('onRoute', nameOperations());
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Four Services',
        version: '0.1.0',
        description:
          'Text sharing, notifications, seat booking and parking. Errors are RFC 9457 problem+json (the Problem schema).',
        // As package.json says: no licence is granted (all rights reserved).
        license: { name: 'UNLICENSED' },
        contact: { name: 'Four Services maintainers' },
      },
      servers: [{ url: options.baseUrl, description: 'This deployment (BASE_URL)' }],
      tags: [...options.tags],
      components: { securitySchemes: options.securitySchemes, schemas: { Problem: ProblemSchema } },
    },
    transformObject: (document) =>
      'openapiObject' in document ? describeOperations(document.openapiObject) : document.swaggerObject,
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: false });
  // Public, so tools on other origins (an API explorer, a client generator) may fetch it.
  app.get('/openapi.json', { config: { access: { public: true } }, schema: { hide: true } }, async () =>
    app.swagger(),
  );
}

/** `/api` and `/api/v<n>`: every API path has one, so it names nothing. */
const API_PREFIX = /^\/api(?:\/v\d+)?(?=\/|$)/;

/**
 * The operationId of a route that gives none in its schema: the method, then each segment of
 * the path without its `/api` or `/api/v1` prefix, camelCased, a `{param}` read as "by param".
 *
 *   GET /api/v1/paste/{short_url}             getPasteByShortUrl
 *   POST /api/notifications/dead-letters/{id}/redrive   postNotificationsDeadLettersByIdRedrive
 *   GET /{short_url}/raw                      getByShortUrlRaw
 *
 * Mechanical rather than chosen, so it is stable: it changes only when the method or path does
 * (and then the operation is another one). Two routes that come out the same (an alias of an API
 * path outside /api) fail at start-up, and one of them says its own `schema.operationId`.
 */
export function operationIdOf(method: string, url: string): string {
  const words = url
    .replace(API_PREFIX, '')
    .split('/')
    .flatMap((segment) => {
      // Fastify's `:name` (possibly with a regex after it) or OpenAPI's `{name}`.
      const param = /^(?::|\{)([A-Za-z0-9_-]+)/.exec(segment);
      return param ? ['by', ...wordsOf(param[1])] : wordsOf(segment);
    });
  return method.toLowerCase() + words.map((word) => word[0].toUpperCase() + word.slice(1)).join('');
}

const wordsOf = (text: string) => text.split(/[^A-Za-z0-9]+/).filter(Boolean);

/**
 * An onRoute hook giving every documented route its operationId, and refusing a second route
 * with the same one: generated clients name their methods by it, so a duplicate would make one
 * operation unreachable (or the generator fail) long after the route was added.
 */
function nameOperations() {
  const named = new Map<string, string>();
  return (route: RouteOptions) => {
    if (route.schema?.hide) return;
    // Swagger leaves HEAD out of the document (it is GET without a body).
    const methods = [route.method].flat().filter((method) => method !== 'HEAD');
    if (methods.length === 0) return;
    const given = route.schema?.operationId;
    if (given === undefined && methods.length > 1) {
      throw new Error(`${methods.join(',')} ${route.url}: one route per method, or a schema.operationId`);
    }
    const operationId = typeof given === 'string' ? given : operationIdOf(methods[0], route.url);
    const where = `${methods.join(',')} ${route.url}`;
    const first = named.get(operationId);
    if (first !== undefined) {
      throw new Error(
        `operationId ${operationId} of ${where} is already ${first}'s: give one of them a schema.operationId`,
      );
    }
    named.set(operationId, where);
    route.schema = { ...route.schema, operationId };
  };
}

const PROBLEM_CONTENT = {
  'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } },
};
const OPERATIONS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options']);

interface Operation {
  tags?: string[];
  parameters?: unknown[];
  requestBody?: unknown;
  security?: Record<string, string[]>[];
  responses?: Record<string, { description?: string; content?: unknown }>;
}

interface Document {
  paths?: object;
  tags?: { name: string }[];
}

/**
 * The problems an operation answers because of what it declares, whether or not its route lists
 * them: a request that fails its schema is 400 (validation_failed, malformed_json), a credential
 * that is wrong is 401 (also on a public route that takes optional ones), and a right one without
 * the scope or role the operation names is 403 (auth/index.ts).
 */
function declaredProblems(operation: Operation): [string, string][] {
  const problems: [string, string][] = [];
  if ((operation.parameters?.length ?? 0) > 0 || operation.requestBody !== undefined) {
    problems.push(['400', 'The request does not match its schema (validation_failed, malformed_json)']);
  }
  const requirements = operation.security ?? [];
  if (requirements.some((requirement) => Object.keys(requirement).length > 0)) {
    problems.push(['401', 'Missing or invalid credentials (unauthorized)']);
  }
  if (requirements.some((requirement) => Object.values(requirement).some((scopes) => scopes.length > 0))) {
    problems.push(['403', 'The credentials do not allow this operation (forbidden)']);
  }
  return problems;
}

/**
 * Any operation can answer a problem the route never lists (429 and 503 come from the platform),
 * so each gets a `default` response of the one Problem schema, besides the 4xx its declaration
 * implies; the 4xx and 5xx a route does list are said as they are sent: application/problem+json,
 * not the application/json the generator assumes. The document lists the tags operations use.
 */
function describeOperations<D extends Document>(document: D): D {
  const used = new Set<string>();
  for (const item of Object.values(document.paths ?? {}) as Record<string, Operation>[]) {
    for (const [method, operation] of Object.entries(item)) {
      if (!OPERATIONS.has(method)) continue;
      for (const tag of operation.tags ?? []) used.add(tag);
      operation.responses ??= {};
      const responses = operation.responses;
      for (const [status, description] of declaredProblems(operation)) responses[status] ??= { description };
      for (const [status, response] of Object.entries(responses)) {
        if (/^[45]/.test(status)) responses[status] = { ...response, content: PROBLEM_CONTENT };
      }
      responses.default ??= { description: 'A problem (RFC 9457)', content: PROBLEM_CONTENT };
    }
  }
  if (document.tags) document.tags = document.tags.filter((tag) => used.has(tag.name));
  return document;
}
