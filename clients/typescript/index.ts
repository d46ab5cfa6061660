import createClient, { type ClientOptions } from 'openapi-fetch';
import type { components, operations, paths } from './schema.ts';

/**
 * A typed client of the Four Services API: `schema.ts` is generated from /openapi.json by
 * openapi-typescript (`npm run client:generate`; CI fails when it is stale), the runtime is
 * openapi-fetch. Paths, parameters, bodies and answers are typed by the document:
 *
 *   const api = createFourServicesClient({ baseUrl: 'http://localhost:3000' });
 *   const { data, error } = await api.POST('/api/v1/paste', { body: { content: 'hello' } });
 *   // data: {short_url, url, expires_at, delete_token} | undefined; error: Problem | undefined
 */
export function createFourServicesClient(options: ClientOptions) {
  return createClient<paths>(options);
}

export type FourServicesClient = ReturnType<typeof createFourServicesClient>;
export type { components, operations, paths };
/** Every error answer (RFC 9457 problem+json). */
export type Problem = components['schemas']['Problem'];
