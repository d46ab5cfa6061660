import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import { Eta } from 'eta';
import type { FastifyInstance } from 'fastify';
import { PAGE_HEADERS } from '../http/security.ts';

/** Root of every template: `src/`, so a module names its templates `/paste/pages/view`. */
const SRC = fileURLToPath(new URL('../../', import.meta.url));

export interface NavLink {
  title: string;
  href: string;
  /** The module whose templates (`/<name>/pages/…`) belong to this link's part of the site. */
  name?: string;
}

declare module 'fastify' {
  interface FastifyReply {
    /** Renders an Eta template (auto-escaped) as an HTML page. */
    page(template: string, data?: Record<string, unknown>): FastifyReply;
  }
}

export const views = new Eta({
  views: SRC,
  autoEscape: true,
  autoTrim: false,
});

export function registerPages(
  app: FastifyInstance,
  nav: NavLink[],
  site: { development: boolean; reloadTemplates?: boolean },
): void {
  // Eta caches each template once read; `npm run dev` reads them again so edits show at once.
  views.configure({ cache: !site.reloadTemplates });
  app.decorateReply('page', function (this, template: string, data: Record<string, unknown> = {}) {
    const current = currentLink(nav, this.request.url, template);
    const html = views.render(template, { nav, current, development: site.development, ...data });
    return this.headers(PAGE_HEADERS).type('text/html; charset=utf-8').send(html);
  });
  serveStatic(app, 'platform', new URL('./static/', import.meta.url));
  // Browsers ask for /favicon.ico whatever the page's <link rel="icon"> says (and so do bookmarks and
  // feed readers); without this route the paste pages' /{id} would answer it with "Paste not found".
  const favicon = readFileSync(new URL('./static/favicon.svg', import.meta.url));
  app.get(
    '/favicon.ico',
    { schema: { hide: true }, config: { access: { public: true } } },
    (_request, reply) =>
      reply.type('image/svg+xml').header('cache-control', 'public, max-age=86400').send(favicon),
  );
}

/**
 * The navigation link of the part of the site a page belongs to (marked `aria-current="page"`):
 * the link whose path the URL is in, else the one of the module that renders the template (a paste
 * at /{id}, a show at /shows/{id}). The home page is no service's.
 */
export function currentLink(nav: NavLink[], url: string, template: string): string | undefined {
  const path = url.split('?')[0];
  if (path === '/') return undefined;
  const byPath = nav.find((link) => path === link.href || path.startsWith(`${link.href}/`));
  if (byPath) return byPath.href;
  const module = template.split('/')[1];
  return nav.find((link) => link.name === module)?.href;
}

/** Serves a module's client modules and styles under `/static/<module>/`. */
export function serveStatic(app: FastifyInstance, module: string, dir: URL): void {
  app.register(fastifyStatic, {
    root: fileURLToPath(dir),
    prefix: `/static/${module}/`,
    decorateReply: false,
    maxAge: '1h',
    schemaHide: true,
  });
}
