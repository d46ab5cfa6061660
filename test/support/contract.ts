import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';

/**
 * Checks a live answer against /openapi.json: its status is one the operation lists, its media
 * type one that status documents (a problem is application/problem+json), its body valid against
 * that media type's schema ($refs resolved in the document's components, as are named responses
 * and headers), and its headers: every documented one valid, every required one present, and no
 * header a client acts on (WATCHED_HEADERS) sent without being documented.
 */
export interface Spec {
  paths: Record<string, Record<string, SpecOperation>>;
  components?: unknown;
}
export interface SpecOperation {
  operationId: string;
  parameters?: { in: string; name: string; required?: boolean }[];
  responses: Record<string, SpecResponse>;
}
interface SpecResponse {
  description?: string;
  content?: Record<string, { schema?: unknown }>;
  headers?: Record<string, SpecHeader>;
}
interface SpecHeader {
  required?: boolean;
  schema?: unknown;
}

/** Headers a generated client reads, so a response that sends one must say so. */
export const WATCHED_HEADERS = [
  'location',
  'etag',
  'ratelimit',
  'ratelimit-policy',
  'retry-after',
  'x-delete-token',
  'idempotent-replayed',
];

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options']);

export interface LocatedOperation {
  method: string;
  path: string;
  operation: SpecOperation;
}

export function operationsOf(spec: Spec): Map<string, LocatedOperation> {
  const operations = new Map<string, LocatedOperation>();
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (METHODS.has(method)) operations.set(operation.operationId, { method, path, operation });
    }
  }
  return operations;
}

// ajv-formats is CommonJS: its default export is the plugin function.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

/** Validators of the document's schemas, compiled by JSON pointer so `$ref`s resolve in place. */
export function contractValidator(spec: Spec) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema(spec as object, 'openapi.json');
  const compiled = new Map<string, ValidateFunction>();
  const pointer = (...segments: string[]) =>
    segments.map((segment) => segment.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');
  const validatorAt = (...segments: string[]) => {
    const ref = `openapi.json#/${pointer(...segments)}`;
    let validate = compiled.get(ref);
    if (!validate) {
      validate = ajv.compile({ $ref: ref });
      compiled.set(ref, validate);
    }
    return validate;
  };

  /**
   * Where a response (or a header of it) is said: its place under the operation, or, when that is
   * a `$ref` (a named response or header of the components), the place it points to.
   */
  const followed = (segments: string[]): { at: string[]; node: unknown } => {
    let at: string[] = [];
    let node: unknown = spec;
    for (const segment of segments) {
      at = [...at, segment];
      node = (node as Record<string, unknown> | undefined)?.[segment];
      const ref = (node as { $ref?: unknown } | undefined)?.$ref;
      if (typeof ref === 'string' && ref.startsWith('#/components/') && !ref.includes('/schemas/')) {
        at = ref.slice(2).split('/');
        node = at.reduce<unknown>((parent, key) => (parent as Record<string, unknown>)?.[key], spec);
      }
    }
    return { at, node };
  };

  /** What is wrong with `response` as an answer of `located` (empty: nothing). */
  return function check(located: LocatedOperation, response: Answer): string[] {
    const { method, path, operation } = located;
    const status = String(response.statusCode);
    if (!operation.responses[status])
      return [`status ${status} is not listed (${Object.keys(operation.responses).join(', ')})`];
    const { at: responseAt, node } = followed(['paths', path, method, 'responses', status]);
    const documented = node as SpecResponse;
    const wrong: string[] = [];
    const mediaType = String(response.headers['content-type'] ?? '')
      .split(';')[0]
      .trim();
    const hasBody = response.rawPayload.length > 0;
    if (response.statusCode >= 400 && mediaType !== 'application/problem+json') {
      wrong.push(`a ${status} is ${mediaType || 'without a media type'}, not application/problem+json`);
    }
    if (hasBody && !documented.content) wrong.push(`${status} has a ${mediaType} body, none documented`);
    if (hasBody && documented.content) {
      const media = documented.content[mediaType];
      if (!media) {
        wrong.push(
          `${status} ${mediaType} is not documented (${Object.keys(documented.content).join(', ')})`,
        );
      } else if (media.schema) {
        const body = /[/+]json$/.test(mediaType) ? response.json() : response.body;
        const validate = validatorAt(...responseAt, 'content', mediaType, 'schema');
        if (!validate(body)) {
          wrong.push(`${status} ${mediaType} body: ${ajvErrors(validate)} in ${response.body.slice(0, 300)}`);
        }
      }
    }
    const headers = Object.fromEntries(
      Object.keys(documented.headers ?? {}).map((name) => [
        name.toLowerCase(),
        { name, ...(followed([...responseAt, 'headers', name]).node as SpecHeader) },
      ]),
    );
    for (const [name, header] of Object.entries(headers)) {
      const value = response.headers[name];
      if (value === undefined) {
        if (header.required) wrong.push(`${status} lacks its required ${name} header`);
        continue;
      }
      if (header.schema) {
        const validate = validatorAt(...followed([...responseAt, 'headers', header.name]).at, 'schema');
        const text = String(value);
        // A header is text; an integer schema reads it as a number.
        if (!validate(text) && !(/^-?\d+$/.test(text) && validate(Number(text)))) {
          wrong.push(`${status} header ${name}: ${text} ${ajvErrors(validate)}`);
        }
      }
    }
    for (const name of WATCHED_HEADERS) {
      if (response.headers[name] !== undefined && !headers[name]) {
        wrong.push(`${status} sends ${name}, not documented`);
      }
    }
    return wrong;
  };
}

function ajvErrors(validate: ValidateFunction): string {
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ');
}

/** What `check` reads of an answer: an injected one, or the start of a live stream (`Answer` of `firstEvent`). */
export type Answer = Pick<LightMyRequestResponse, 'statusCode' | 'headers' | 'rawPayload' | 'body' | 'json'>;

/**
 * An endless event stream's answer over a real socket (inject would wait for an end that never
 * comes): its status, headers and first event, after which the client goes away.
 */
export async function firstEvent(
  base: string,
  url: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const aborted = new AbortController();
  const response = await fetch(`${base}${url}`, { headers, signal: aborted.signal });
  let body = '';
  if (response.body) {
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    while (!body.includes('\n\n')) {
      const { value, done } = await reader.read();
      if (done) break;
      body += value;
    }
  }
  aborted.abort();
  const rawPayload = Buffer.from(body);
  return {
    statusCode: response.status,
    headers: Object.fromEntries(response.headers),
    rawPayload,
    body,
    json: () => JSON.parse(body),
  };
}

/** A request of the table: what is sent and the status it must get. */
export type Call = (expected: number, request: InjectOptions) => Promise<LightMyRequestResponse>;
