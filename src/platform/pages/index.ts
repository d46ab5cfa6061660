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
    const html = views.render(template, { nav, development: site.development, ...data });
    return this.headers(PAGE_HEADERS).type('text/html; charset=utf-8').send(html);
  });
  serveStatic(app, 'platform', new URL('./static/', import.meta.url));
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
