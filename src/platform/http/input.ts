import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type AppError, platformError } from '../errors.ts';

/**
 * Text that PostgreSQL cannot store (a NUL character) is refused at the door with a 400 naming
 * the field, instead of failing deep inside a query as a 500. JSON bodies are checked by the
 * parser below only when their text contains an escaped NUL at all, so ordinary bodies pay one
 * `indexOf`; paths and query strings by `nulInUrl`, from the platform's onRequest hook.
 */
export function registerInputGuards(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    parseJson(request, String(body), (error: Error | null, parsed?: unknown) => {
      if (error) return done(error);
      const field = String(body).includes('u0000') ? nulField('body', parsed) : undefined;
      done(field ? refusal(field) : null, parsed);
    });
  });
}

/**
 * A NUL can only reach the decoded params or query as `%00` in the URL (the HTTP parser refuses
 * a raw one; inject() might not), so most requests skip walking both objects. Fastify has routed
 * and parsed both before onRequest hooks run.
 */
export function nulInUrl(request: FastifyRequest): AppError | undefined {
  const url = request.url;
  if (!url.includes('%00') && !url.includes('\u0000')) return undefined;
  const field = nulField('params', request.params) ?? nulField('querystring', request.query);
  return field ? refusal(field) : undefined;
}

function refusal(field: string) {
  return platformError('validation_failed', {
    detail: `${field} contains a NUL character`,
    extras: { errors: [{ field, message: 'must not contain a NUL character' }] },
  });
}

/** Whether any string or object key inside `value` contains U+0000 (nulField without the paths). */
export function containsNul(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const item = pending.pop();
    if (typeof item === 'string') {
      if (item.includes('\u0000')) return true;
      continue;
    }
    if (item === null || typeof item !== 'object') continue;
    if (Array.isArray(item)) {
      for (const inner of item) pending.push(inner);
      continue;
    }
    for (const key of Object.keys(item)) {
      if (key.includes('\u0000')) return true;
      pending.push((item as Record<string, unknown>)[key]);
    }
  }
  return false;
}

/**
 * The path of the first string or object key containing U+0000, searched depth-first (a key
 * before its value). Any depth is searched, on a stack of its own rather than the call stack.
 */
export function nulField(path: string, value: unknown): string | undefined {
  const pending: [string, unknown][] = [[path, value]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [at, item] = next;
    if (typeof item === 'string') {
      if (item.includes('\u0000')) return at;
      continue;
    }
    if (item === null || typeof item !== 'object') continue;
    const entries = Object.entries(item);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, inner] = entries[i];
      pending.push([`${at}.${key}`, inner]);
      // A key is stored too where a body keeps free-form objects (a notification's data, as jsonb).
      if (key.includes('\u0000')) pending.push([`${at}.${key.replaceAll('\u0000', '\\u0000')}`, key]);
    }
  }
  return undefined;
}
