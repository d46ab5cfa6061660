import assert from 'node:assert/strict';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import type { App } from '../../src/app.ts';

/** Each caller gets its own address, so the per-IP create limit only bites where a test wants it to. */
let addresses = 0;
export function freshIp(): string {
  addresses++;
  return `10.${(addresses >> 16) & 255}.${(addresses >> 8) & 255}.${addresses & 255}`;
}

export async function createPaste(
  app: App,
  body: Record<string, unknown>,
  options: Partial<InjectOptions> = {},
): Promise<{ short_url: string; url: string; expires_at: string | null; delete_token: string }> {
  const response = await app.inject({
    method: 'POST',
    url: '/api/v1/paste',
    payload: body,
    remoteAddress: freshIp(),
    ...options,
  });
  assert.equal(response.statusCode, 201, response.body);
  return response.json();
}

export async function createUser(app: App, email = `u${Math.random().toString(36).slice(2)}@example.com`) {
  const response = await app.inject({
    method: 'POST',
    url: '/api/v1/users',
    payload: { email },
    remoteAddress: freshIp(),
  });
  assert.equal(response.statusCode, 201, response.body);
  const user = response.json() as { id: number; email: string; api_key: string; created_at: string };
  return { ...user, auth: { authorization: `Bearer ${user.api_key}` } };
}

export function assertProblem(response: LightMyRequestResponse, status: number, code: string) {
  assert.equal(response.statusCode, status, response.body);
  assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
  const body = response.json();
  assert.equal(body.status, status);
  assert.equal(body.code, code);
  assert.ok(body.detail);
  return body;
}
