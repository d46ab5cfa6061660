import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { SecurityScheme } from '../auth/access.ts';

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
          'Text sharing, notifications, seat booking and parking. Errors are RFC 9457 problem+json.',
      },
      servers: [{ url: baseUrl }],
      components: { securitySchemes },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: false });
  // Public, so tools on other origins (an API explorer, a client generator) may fetch it.
  app.get('/openapi.json', { config: { access: { public: true } }, schema: { hide: true } }, async () =>
    app.swagger(),
  );
}
