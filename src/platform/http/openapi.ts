import { readFileSync } from 'node:fs';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type {
  FastifyContextConfig,
  FastifyInstance,
  FastifyRequest,
  FastifySchema,
  RouteOptions,
} from 'fastify';
import type { SecurityScheme } from '../auth/access.ts';
import { PROBLEM_SCHEMA_DESCRIPTION, ProblemSchema } from './problem.ts';

/** A tag of /openapi.json: the group an operation is listed under in /docs and in generated clients. */
export interface ApiTag {
  name: string;
  description: string;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** What /openapi.json says of the route beyond its schema and the rest of its config. */
    openapi?: RouteDocs;
  }
}

/**
 * Answers a route gives that its schema cannot say, for the document only (never validation or
 * serialization). What other config implies is added without it: `idempotency` documents the
 * Idempotency-Key header, the Idempotent-Replayed header of a replay and the 409 and 422 of a key
 * in use or reused; `cache: 'revalidate'` documents the ETag, If-None-Match and the 304.
 */
export interface RouteDocs {
  /** The 4xx the route answers (problem+json) beyond the 400, 401 and 403 its declaration implies. */
  problems?: readonly number[];
  /** Response headers by status (names of RESPONSE_HEADERS). */
  headers?: Readonly<Record<number, readonly ResponseHeader[]>>;
  /** Rate-limited: RateLimit and RateLimit-Policy on its answers, 429 with Retry-After past the limit. */
  rateLimited?: boolean;
  /** Answers with an ETag and turns into a 304 for If-None-Match by itself (not `config.cache`). */
  conditional?: boolean;
}

/** Headers a client acts on, as the document describes them wherever a route sends them. */
const RESPONSE_HEADERS = {
  Location: { type: 'string', description: 'The URL of the resource this answer created or names' },
  ETag: {
    type: 'string',
    description: 'The validator of this representation; send it back in If-None-Match',
  },
  'X-Delete-Token': { type: 'string', description: 'The token that deletes this paste (shown once)' },
  RateLimit: {
    type: 'string',
    description:
      'What is left of the quota (draft-ietf-httpapi-ratelimit-headers): "<policy>";r=<left>;t=<seconds>',
  },
  'RateLimit-Policy': { type: 'string', description: 'The quota: "<policy>";q=<requests>;w=<seconds>' },
  'Retry-After': { type: 'integer', minimum: 0, description: 'Seconds to wait before asking again' },
  'Idempotent-Replayed': {
    type: 'string',
    enum: ['true'],
    description: 'Present on the replay of the first answer to this Idempotency-Key',
  },
} as const;
export type ResponseHeader = keyof typeof RESPONSE_HEADERS;

const PROBLEM_DESCRIPTIONS: Record<number, string> = {
  400: 'The request does not match its schema (validation_failed, malformed_json)',
  401: 'Missing or invalid credentials (unauthorized)',
  402: 'The payment was declined (payment_declined)',
  403: 'The credentials do not allow this operation (forbidden)',
  404: "Not found, or not the caller's (as if it did not exist)",
  409: 'A conflict with the current state',
  410: 'Gone: expired, deleted or cancelled',
  413: 'The body is too large',
  415: 'The media type is not accepted',
  422: 'Well-formed but refused',
  429: 'Too many requests; Retry-After says when to ask again',
};

/**
 * The problem answers as named responses (`#/components/responses/<name>`), which an operation
 * refers to when it answers one just as described here: the document says each once, and a
 * generated client has one type per kind of problem. 401 and 429 carry their headers everywhere
 * (wrong credentials and refusals are counted per address); a problem that also carries a
 * route's rate-limit headers stays in its operation, its headers still by reference.
 */
const PROBLEM_RESPONSES: Record<string, { status: string; headers?: readonly ResponseHeader[] }> = {
  BadRequest: { status: '400' },
  Unauthorized: { status: '401', headers: ['RateLimit', 'RateLimit-Policy'] },
  PaymentDeclined: { status: '402' },
  Forbidden: { status: '403' },
  NotFound: { status: '404' },
  Conflict: { status: '409' },
  Gone: { status: '410' },
  PayloadTooLarge: { status: '413' },
  UnsupportedMediaType: { status: '415' },
  Unprocessable: { status: '422' },
  TooManyRequests: { status: '429', headers: ['RateLimit', 'RateLimit-Policy', 'Retry-After'] },
  Problem: { status: 'default' },
};

export interface OpenApiOptions {
  /** The server of the document as built (scripts lint it and generate clients from it). */
  baseUrl: string;
  /** `BASE_URL` when it is set: the one server; otherwise the address each request used. */
  publicBaseUrl?: string;
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
      // Replaced per request (serversFor): the address in use, so "Try it out" stays same-origin.
      servers: [{ url: options.baseUrl, description: 'This deployment (BASE_URL)' }],
      tags: [...options.tags],
      components: { securitySchemes: options.securitySchemes, schemas: { Problem: ProblemSchema } },
    },
    transform: ({ schema, url, route }) => ({ schema: documentRoute(schema, route.config), url }),
    transformObject: (document) =>
      'openapiObject' in document ? describeOperations(document.openapiObject) : document.swaggerObject,
  });
  app.addHook('onRoute', cacheDocsAssets);
  const withServers = (document: Record<string, unknown>, request: FastifyRequest) => ({
    ...document,
    servers: serversFor(request, options.publicBaseUrl),
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: false,
    transformSpecification: withServers,
    // withServers copies the one level it changes; the document itself is never modified.
    transformSpecificationClone: false,
    theme: {
      title: 'API docs · Four Services',
      css: [{ filename: 'docs.css', content: DOCS_THEME.css }],
      js: [{ filename: 'docs.js', content: DOCS_THEME.js }],
    },
  });
  // Public, so tools on other origins (an API explorer, a client generator) may fetch it.
  app.get(
    '/openapi.json',
    { config: { access: { public: true } }, schema: { hide: true } },
    async (request) => withServers(app.swagger() as unknown as Record<string, unknown>, request),
  );
}

/** The document's one server: BASE_URL when set, otherwise the origin the document was fetched from. */
function serversFor(request: FastifyRequest, publicBaseUrl: string | undefined) {
  return publicBaseUrl === undefined
    ? [
        {
          url: request.publicOrigin,
          description: 'This deployment (the address this document was read from)',
        },
      ]
    : [{ url: publicBaseUrl, description: 'This deployment (BASE_URL)' }];
}

/** Our additions to Swagger UI's page: a way back to the app, and styles that pass axe's contrast checks. */
const DOCS_THEME = {
  css: readFileSync(new URL('../pages/static/docs.css', import.meta.url), 'utf8'),
  js: readFileSync(new URL('../pages/static/docs.js', import.meta.url), 'utf8'),
};

/**
 * Swagger UI's files (2 MB, the same until the package is upgraded) would be sent with `max-age=0`
 * by @fastify/static, so every visit revalidated each of them: they are kept a week (ETag still
 * revalidates after that). The files made from our options (the initializer, the theme) change with
 * a deploy and are kept an hour.
 */
function cacheDocsAssets(route: RouteOptions) {
  if (!route.url.startsWith('/docs/static/')) return;
  const vendor = !route.url.includes('/theme/') && !route.url.endsWith('swagger-initializer.js');
  const cacheControl = vendor ? 'public, max-age=604800' : 'public, max-age=3600';
  const hooks = route.onSend === undefined ? [] : [route.onSend].flat();
  route.onSend = [
    ...hooks,
    async (_request, reply, payload) => {
      reply.header('cache-control', cacheControl);
      return payload;
    },
  ];
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

type ResponseSchema = { description?: string; headers?: Record<string, unknown>; [key: string]: unknown };

/**
 * The schema swagger documents a route by (a copy: the route's own schema keeps validating and
 * serializing as it did), with what its config implies (RouteDocs).
 */
function documentRoute(schema: FastifySchema, config: FastifyContextConfig | undefined): FastifySchema {
  const docs = config?.openapi ?? {};
  const idempotency = config?.idempotency;
  const conditional = docs.conditional || config?.cache === 'revalidate';
  // Another user's token on a route for one user's own data is 404 (auth/access.ts).
  const ownData = typeof config?.access?.user === 'object';
  if (!idempotency && !conditional && !ownData && !docs.problems && !docs.headers && !docs.rateLimited) {
    return schema;
  }
  const response = { ...(schema.response as Record<string, ResponseSchema> | undefined) };
  const problems = new Set(docs.problems);
  if (ownData) problems.add(404);
  if (idempotency) problems.add(409).add(422);
  if (docs.rateLimited) {
    problems.add(429);
    // The limit is spent before the request is validated, so its 400 carries the headers too.
    if (schema.body || schema.params || schema.querystring || schema.headers) problems.add(400);
  }
  for (const status of problems) {
    response[status] ??= { type: 'object', description: problemDescription(status) };
  }
  if (conditional) {
    response[304] ??= { type: 'null', description: 'Not Modified: the copy If-None-Match names is current' };
  }
  const statuses = Object.keys(response);
  const add = (status: string, names: readonly ResponseHeader[]) => {
    if (!response[status]) return;
    const headers = Object.fromEntries(names.map((name) => [name, RESPONSE_HEADERS[name]]));
    response[status] = { ...response[status], headers: { ...response[status].headers, ...headers } };
  };
  for (const status of statuses) {
    if (idempotency && /^2/.test(status)) add(status, ['Idempotent-Replayed']);
    if (docs.rateLimited) add(status, ['RateLimit', 'RateLimit-Policy']);
    if (status === '429' || (idempotency && status === '409')) add(status, ['Retry-After']);
    if (conditional && (status === '200' || status === '304')) add(status, ['ETag']);
  }
  for (const [status, names] of Object.entries(docs.headers ?? {})) add(status, names);
  return { ...schema, response, headers: requestHeaders(schema.headers, idempotency, conditional) };
}

const IDEMPOTENCY_KEY = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  description:
    'Makes a retry safe: the same key and body replay the first answer for 24 h (Idempotent-Replayed: true); ' +
    'the same key with another body → 422 idempotency_key_reused; while the first still runs → 409',
};
const IF_NONE_MATCH = {
  type: 'string',
  description: 'The ETag of the copy the client holds: 304 without a body while it is current',
};

function requestHeaders(
  headers: unknown,
  idempotency: FastifyContextConfig['idempotency'],
  conditional: boolean | undefined,
): unknown {
  if (!idempotency && !conditional) return headers;
  const declared = (headers ?? {}) as { properties?: Record<string, unknown>; required?: string[] };
  const properties = { ...declared.properties };
  const required = [...(declared.required ?? [])];
  if (idempotency) {
    properties['idempotency-key'] ??= IDEMPOTENCY_KEY;
    if (idempotency.required && !required.includes('idempotency-key')) required.push('idempotency-key');
  }
  if (conditional) properties['if-none-match'] ??= IF_NONE_MATCH;
  return { type: 'object', properties, ...(required.length ? { required } : {}) };
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
  responses?: Record<
    string,
    { description?: string; content?: unknown; headers?: Record<string, unknown>; $ref?: string }
  >;
}

interface Document {
  paths?: object;
  tags?: { name: string }[];
  components?: object;
}

/** Response headers as an OpenAPI document writes them (swagger does the same for a route's own). */
function openApiHeaders(names: readonly ResponseHeader[]) {
  return Object.fromEntries(
    names.map((name) => {
      const { description, ...schema } = RESPONSE_HEADERS[name];
      return [name, { description, schema }];
    }),
  );
}

/**
 * The problems an operation answers because of what it declares, whether or not its route lists
 * them: a request that fails its schema is 400 (validation_failed, malformed_json), a credential
 * that is wrong is 401 (also on a public route that takes optional ones), and a right one without
 * the scope or role the operation names is 403 (auth/index.ts).
 */
function declaredProblems(operation: Operation): number[] {
  const problems: number[] = [];
  if ((operation.parameters?.length ?? 0) > 0 || operation.requestBody !== undefined) problems.push(400);
  const requirements = operation.security ?? [];
  if (requirements.some((requirement) => Object.keys(requirement).length > 0)) problems.push(401);
  if (requirements.some((requirement) => Object.values(requirement).some((scopes) => scopes.length > 0))) {
    problems.push(403);
  }
  return problems;
}

function problemDescription(status: number | string): string {
  return PROBLEM_DESCRIPTIONS[Number(status)] ?? 'A problem (RFC 9457)';
}

type Response = NonNullable<Operation['responses']>[string];

/** Headers by reference to `#/components/headers` (the ones described there; a route's own stay). */
function headerRefs(names: readonly ResponseHeader[]) {
  return Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));
}

function problemResponse(status: string, headers?: readonly ResponseHeader[]): Response {
  return {
    description: problemDescription(status),
    ...(headers ? { headers: headerRefs(headers) } : {}),
    content: PROBLEM_CONTENT,
  };
}

/** `#/components/responses`: every named problem response, built once. */
const PROBLEM_COMPONENTS: Record<string, Response> = Object.fromEntries(
  Object.entries(PROBLEM_RESPONSES).map(([name, { status, headers }]) => [
    name,
    problemResponse(status, headers),
  ]),
);

/** The named response this one is word for word, if any. */
const NAMED_PROBLEMS = new Map(
  Object.entries(PROBLEM_COMPONENTS).map(([name, response]) => [canonical(response), name]),
);

function canonical(response: Response): string {
  return sorted({
    description: response.description,
    headers: response.headers ?? {},
    content: response.content,
  });
}

/** JSON with every object's keys in order, so two documents that say the same compare equal. */
function sorted(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    item !== null && typeof item === 'object' && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : item,
  );
}

/** A described header (RESPONSE_HEADERS, as the document writes it) becomes a reference to it. */
function referToHeaders(response: Response): Response {
  if (!response.headers) return response;
  const headers = Object.fromEntries(
    Object.entries(response.headers).map(([name, header]) => {
      const described =
        name in RESPONSE_HEADERS && sorted(header) === sorted(openApiHeaders([name as ResponseHeader])[name]);
      return [name, described ? { $ref: `#/components/headers/${name}` } : header];
    }),
  );
  return { ...response, headers };
}

/**
 * Any operation can answer a problem the route never lists (429 and 503 come from the platform),
 * so each gets a `default` response of the one Problem schema, besides the 4xx its declaration
 * implies; the 4xx and 5xx a route does list are said as they are sent: application/problem+json,
 * not the application/json the generator assumes. The document lists the tags operations use.
 */
function describeOperations<D extends Document>(document: D): D {
  const used = new Set<string>();
  const named = new Set<string>();
  for (const item of Object.values(document.paths ?? {}) as Record<string, Operation>[]) {
    for (const [method, operation] of Object.entries(item)) {
      if (!OPERATIONS.has(method)) continue;
      for (const tag of operation.tags ?? []) used.add(tag);
      operation.responses ??= {};
      const responses = operation.responses;
      for (const status of declaredProblems(operation)) {
        responses[status] ??= { description: problemDescription(status) };
      }
      // Wrong credentials count against the caller's address (auth/index.ts): past the limit, 429.
      if (responses['401']) {
        responses['401'].headers = {
          ...headerRefs(['RateLimit', 'RateLimit-Policy']),
          ...responses['401'].headers,
        };
        responses['429'] ??= { description: PROBLEM_DESCRIPTIONS[429] };
      }
      if (responses['429']) {
        responses['429'].headers = {
          ...headerRefs(['RateLimit', 'RateLimit-Policy', 'Retry-After']),
          ...responses['429'].headers,
        };
      }
      responses.default ??= { description: problemDescription('default') };
      for (const [status, response] of Object.entries(responses)) {
        const problem = /^[45]/.test(status) || status === 'default';
        // A route that answers with the Problem schema itself gets the schema's description: the status's says more.
        const generic = problem && response.description === PROBLEM_SCHEMA_DESCRIPTION;
        const description = generic ? problemDescription(status) : response.description;
        const described = referToHeaders(
          problem ? { ...response, description, content: PROBLEM_CONTENT } : response,
        );
        const name = problem ? NAMED_PROBLEMS.get(canonical(described)) : undefined;
        if (name !== undefined) named.add(name);
        responses[status] = name === undefined ? described : { $ref: `#/components/responses/${name}` };
      }
    }
  }
  if (document.tags) document.tags = document.tags.filter((tag) => used.has(tag.name));
  document.components = {
    ...document.components,
    headers: openApiHeaders(Object.keys(RESPONSE_HEADERS) as ResponseHeader[]),
    responses: Object.fromEntries(Object.entries(PROBLEM_COMPONENTS).filter(([name]) => named.has(name))),
  };
  return document;
}
