import type { FastifyInstance, HTTPMethods } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';

/**
 * The methods a path (without its query string) answers to, so a wrong method is answered 405 with `Allow` instead
 * of 404. Every route is also put in a router of our own (`shadowRouter`). Returns the lookup the
 * not-found handler uses.
 */
export function registerRouteMethods(app: FastifyInstance): (path: string) => string[] {
  const router = shadowRouter(app);
  const methods = new Set<string>();
  const declared = new Set<string>();
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat() as HTTPMethods[]) {
      const key = `${method} ${route.url}`;
      if (declared.has(key)) continue;
      declared.add(key);
      methods.add(method);
      router.on(method as HTTPMethod, route.url, () => {});
    }
  });
  return (path) => [...methods].filter((method) => router.find(method as HTTPMethod, path) !== null);
}

/**
 * An empty router for the app's routes, for questions asked outside a route (which methods a path
 * answers, which route a CORS preflight is about): find-my-way, the router Fastify itself uses,
 * through its public API, with the app's routing options, so the two match paths alike.
 */
export function shadowRouter(app: FastifyInstance) {
  const { ignoreTrailingSlash, ignoreDuplicateSlashes, caseSensitive, maxParamLength } = {
    ...app.initialConfig,
    ...app.initialConfig.routerOptions,
  };
  return FindMyWay({ ignoreTrailingSlash, ignoreDuplicateSlashes, caseSensitive, maxParamLength });
}
