import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The URL carries a secret (a ticket token in the path, a password in the query string): log
     * lines show the route's pattern instead (`/api/v1/tickets/:token`), with `?[redacted]` for a
     * query string.
     */
    redactUrl?: boolean;
  }
}

/**
 * Access log lines (`LOG_REQUESTS=true`) carry each request's URL. A route that declares
 * `config: {redactUrl: true}` gets a request serializer of its own, set once when the route is
 * registered, so other routes pay nothing per request.
 */
export function registerUrlRedaction(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    if (route.config?.redactUrl !== true) return;
    const pattern = route.url;
    const req = (request: FastifyRequest) => ({
      method: request.method,
      url: request.url.includes('?') ? `${pattern}?[redacted]` : pattern,
      host: request.host,
      remoteAddress: request.ip,
      remotePort: request.socket?.remotePort,
    });
    route.logSerializers = Object.assign(Object.create(route.logSerializers ?? null), { req });
  });
}
