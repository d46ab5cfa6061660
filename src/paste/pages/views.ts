import type { FastifyReply } from 'fastify';
import { highlight } from '../highlight.ts';
import type { LocalEntry, PasteReads } from '../reads.ts';

/** What every paste page renders: the paste view, its metadata, the 404 page. */
export const STYLES = ['/static/paste/paste.css', '/static/paste/hljs.css'];
export const SCRIPTS = ['/static/paste/paste.js'];
/** End-to-end encryption in the browser (static/encrypted.js): the create form and encrypted pastes' pages. */
export const ENCRYPTED_STYLES = [...STYLES, '/static/paste/encrypted.css'];
export const ENCRYPTED_SCRIPTS = [...SCRIPTS, '/static/paste/encrypted.js'];

/** A paste's page, highlighted on its first view (the result is kept with the cached entry). */
export function viewPage(
  reads: PasteReads,
  reply: FastifyReply,
  entry: LocalEntry,
  extra: { burned?: boolean; rawLinks?: boolean } = {},
) {
  // Never highlighted: the server has only the envelope; the page's script decrypts it.
  if (entry.paste.encryption) return reply.page('/paste/pages/encrypted', pageData(entry, extra));
  const page = entry.page ?? highlight(entry.paste.content, entry.paste.syntax);
  if (!entry.page) reads.attachPage(entry, page);
  const lines = countLines(entry.paste.content);
  return reply.page(
    '/paste/pages/view',
    pageData(entry, {
      html: page.html,
      language: page.language ?? 'plain text',
      detected: page.detected,
      gutter: Array.from({ length: lines }, (_, i) => i + 1).join('\n'),
      rawLinks: entry.open,
      ...extra,
    }),
  );
}

export function pageData(entry: LocalEntry, extra: Record<string, unknown>) {
  const { paste } = entry;
  return {
    title: `Paste ${paste.short_url}`,
    paste,
    views: entry.views,
    created: humanTime(paste.created_at),
    expires: paste.expires_at ? humanTime(paste.expires_at) : undefined,
    size: humanSize(paste.size),
    styles: paste.encryption ? ENCRYPTED_STYLES : STYLES,
    scripts: paste.encryption ? ENCRYPTED_SCRIPTS : SCRIPTS,
    ...extra,
  };
}

export function missingPage(reply: FastifyReply, shortUrl: string) {
  return reply.code(404).page('/platform/pages/message', {
    title: 'Paste not found',
    message: `There is no paste "${shortUrl}". It may never have existed, or it expired and was removed.`,
    link: { href: '/paste', title: 'Create a new paste' },
  });
}

function countLines(text: string): number {
  let lines = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < text.length - 1; i = text.indexOf('\n', i + 1)) lines++;
  return lines;
}

function humanTime(iso: string): string {
  return `${iso.slice(0, 16).replace('T', ' ')} UTC`;
}

function humanSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
