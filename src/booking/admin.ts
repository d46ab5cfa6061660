import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { platformError } from '../platform/errors.ts';

/** onRequest hook for admin routes (before the body is read): the `x-admin-key` header must equal the configured admin API key. */
export function requireAdminKey(adminApiKey: string) {
  const expected = Buffer.from(adminApiKey);
  return async (request: FastifyRequest) => {
    const given = request.headers['x-admin-key'];
    const actual = Buffer.from(typeof given === 'string' ? given : '');
    if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) {
      throw platformError('unauthorized', 'This endpoint needs the admin API key in the x-admin-key header');
    }
  };
}

/** OpenAPI bits shared by admin routes. */
export const ADMIN = { security: [{ adminKey: [] }], tags: ['booking admin'] };
