import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { SecurityScheme } from '../auth/access.ts';
import { ProblemSchema } from './problem.ts';

/** OpenAPI generated from the route schemas, at /openapi.json, with Swagger UI at /docs. */
export async function registerOpenApi(
  app: FastifyInstance,
  baseUrl: string,
  securitySchemes: Record<string, SecurityScheme>,
): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Four Services',
        version: '0.1.0',
        description:
          'Text sharing, notifications, seat booking and parking. Errors are RFC 9457 problem+json (the Problem schema).',
      },
      servers: [{ url: baseUrl }],
      components: { securitySchemes, schemas: { Problem: ProblemSchema } },
    },
    transformObject: (document) =>
      'openapiObject' in document ? documentProblems(document.openapiObject) : document.swaggerObject,
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: false });
  // Public, so tools on other origins (an API explorer, a client generator) may fetch it.
  app.get('/openapi.json', { config: { access: { public: true } }, schema: { hide: true } }, async () =>
    app.swagger(),
  );
}

const PROBLEM_CONTENT = {
  'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } },
};
const OPERATIONS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options']);

interface Operation {
  responses?: Record<string, { description?: string; content?: unknown }>;
}

/**
 * Any operation can answer a problem the route never lists (401, 429 and 503 come from the
 * platform), so each gets a `default` response of the one Problem schema; the 4xx and 5xx a route
 * does list are said as they are sent: application/problem+json, not the application/json the
 * generator assumes.
 */
function documentProblems<D extends { paths?: object }>(document: D): D {
  for (const item of Object.values(document.paths ?? {}) as Record<string, Operation>[]) {
    for (const [method, operation] of Object.entries(item)) {
      if (!OPERATIONS.has(method)) continue;
      operation.responses ??= {};
      const responses = operation.responses;
      for (const [status, response] of Object.entries(responses)) {
        if (/^[45]/.test(status)) responses[status] = { ...response, content: PROBLEM_CONTENT };
      }
      responses.default ??= { description: 'A problem (RFC 9457)', content: PROBLEM_CONTENT };
    }
  }
  return document;
}
