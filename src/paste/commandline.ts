import type { FastifyReply, FastifyRequest } from 'fastify';
import { prefersHtml } from '../platform/http/problem.ts';
import { textFromBytes } from './content.ts';
import { pasteError } from './errors.ts';
import type { CreatePasteQuery } from './schemas.ts';
import type { Created, CreateInput } from './service.ts';

/**
 * What command-line clients send and get (issue 24): `curl -F file=@f` (multipart/form-data),
 * `curl --data-binary @f` (x-www-form-urlencoded that is no form), `curl -T f` (PUT without a
 * media type). Their answer is the URL as text, so `curl … | xclip` works.
 */

/** Room for the multipart framing and the option fields next to a 10 MB file. */
export const MULTIPART_OVERHEAD = 64 * 1024;

/**
 * Whether the client wants a page: every browser names text/html in the Accept of a navigation
 * or a form submission; curl (`*∕*`), wget and HTTP libraries do not, and get text. The same
 * rule as the platform's error pages (`prefersHtml`), so a create and its error agree.
 */
export function asksForHtml(request: FastifyRequest): boolean {
  return prefersHtml(request.headers.accept);
}

/** The multipart parts that may carry the text: 0x0.st's `file`, sprunge's `sprunge`, the API's `content`. */
const TEXT_PARTS = new Set(['content', 'file', 'sprunge']);

/** Multipart bodies as parsed (their fields are validated by the route's multipart schema). */
const uploads = new WeakSet<object>();

export function isUpload(body: unknown): body is Record<string, string> {
  return typeof body === 'object' && body !== null && uploads.has(body);
}

interface Part {
  name: string;
  filename: boolean;
  data: Buffer;
}

/**
 * A multipart/form-data body (RFC 7578) of one text and option fields, read from the buffered
 * body: the body parser's limit already bounds it, so a streaming parser would buy nothing, and
 * the text keeps its exact bytes. The text is the one file part (any field name: `-F file=@f`,
 * `-F f:1=@f`) or a `content`, `file` or `sprunge` field (`-F 'content=<f'`); other parts are
 * options (`-F expires_in=3600`). Returns `{content, …options}` as text; the route's schema
 * coerces the options and refuses unknown ones.
 */
export function parseUpload(body: Buffer, contentType: string): Record<string, string> {
  const boundary = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  if (!boundary) throw malformed('The multipart/form-data body has no boundary');
  const fields: Record<string, string> = {};
  let text: Part | undefined;
  for (const part of multipartParts(body, boundary[1] ?? boundary[2])) {
    if (part.filename || TEXT_PARTS.has(part.name)) {
      if (text) throw malformed(`Send one file or text field, not both "${text.name}" and "${part.name}"`);
      text = part;
    } else {
      fields[part.name] = part.data.toString('utf8');
    }
  }
  // Without a text, the schema's `content is required` names what is missing.
  const parsed = text ? { ...fields, content: textFromBytes(text.data) } : fields;
  uploads.add(parsed);
  return parsed;
}

function* multipartParts(body: Buffer, boundary: string): Generator<Part> {
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  // The first delimiter may open the body without the CRLF before it (RFC 2046 §5.1.1).
  const opening = delimiter.subarray(2);
  const first = body.subarray(0, opening.length).equals(opening) ? -2 : body.indexOf(delimiter);
  if (first === -1) throw malformed('The multipart/form-data body has no part');
  let at = first + delimiter.length;
  for (;;) {
    if (body[at] === 0x2d && body[at + 1] === 0x2d) return; // "--": the closing delimiter
    const headersEnd = body.indexOf('\r\n\r\n', at);
    if (headersEnd === -1) throw malformed('A multipart part has no end of headers');
    const headers = body.toString('utf8', at, headersEnd);
    const end = body.indexOf(delimiter, headersEnd + 4);
    if (end === -1) throw malformed('The multipart/form-data body is cut short (no closing boundary)');
    const disposition = /^content-disposition:\s*form-data\s*;(.*)$/im.exec(headers)?.[1] ?? '';
    const name = /(?:^|;)\s*name\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]+))/i.exec(disposition);
    if (!name) throw malformed('A multipart part has no form-data name');
    yield {
      name: (name[1] ?? name[2]).replace(/\\(.)/g, '$1'),
      filename: /(?:^|;)\s*filename\*?\s*=/i.test(disposition),
      data: body.subarray(headersEnd + 4, end),
    };
    at = end + delimiter.length;
  }
}

function malformed(detail: string) {
  return pasteError('invalid_option', {
    detail,
    extras: { errors: [{ field: 'body', message: detail }] },
  });
}

/** The create form as a browser (or `curl -d content=…`) posts it to `/`. */
export class PageForm {
  readonly fields: Record<string, string>;
  constructor(fields: Record<string, string>) {
    this.fields = fields;
  }
}

/** The page form's fields (pages/form.eta). */
const PAGE_FORM_FIELDS = new Set([
  'content',
  'syntax',
  'expires_in',
  'password',
  'burn_after_read',
  'is_private',
  'api_key',
]);

/**
 * An x-www-form-urlencoded body posted to `/` is the create form when it is one: the browser's
 * (it asks for HTML), or `content=…` with none but the form's field names (`curl -d content=hi`).
 * Anything else is a file that curl labelled a form (`curl --data-binary @f`), and is the text.
 */
export function pageFormOf(request: FastifyRequest, body: Buffer): Record<string, string> | undefined {
  if (!asksForHtml(request) && !(body.subarray(0, 8).toString() === 'content=' || body.includes('&content=')))
    return undefined;
  const fields = new URLSearchParams(body.toString('utf8'));
  if (!asksForHtml(request) && [...fields.keys()].some((name) => !PAGE_FORM_FIELDS.has(name)))
    return undefined;
  return Object.fromEntries(fields);
}

/** A raw or uploaded text and its options (the query string's, then the upload's own fields). */
export function commandLineInput(
  body: string | Record<string, unknown>,
  query: CreatePasteQuery,
  passwordHeader: unknown,
): CreateInput {
  const { content, ...fields } = typeof body === 'string' ? { content: body } : body;
  if (typeof content !== 'string' || content.length === 0) {
    throw pasteError('invalid_option', {
      detail: 'The body is empty',
      extras: { errors: [{ field: 'content', message: 'must not be empty' }] },
    });
  }
  const options = { ...query, ...fields } as CreatePasteQuery;
  return {
    ...options,
    content,
    password: options.password ?? (typeof passwordHeader === 'string' ? passwordHeader : undefined),
  };
}

/** 201 with the paste's URL and a newline as text (its delete token in X-Delete-Token). */
export function sendCreatedText(reply: FastifyReply, created: Created) {
  return reply
    .code(201)
    .header('location', `/api/v1/paste/${created.short_url}`)
    .header('x-delete-token', created.delete_token)
    .type('text/plain; charset=utf-8')
    .send(`${created.url}\n`);
}
