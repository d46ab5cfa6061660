import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Static } from 'typebox';
import type { Clock } from '../../platform/clock.ts';
import type { Db } from '../../platform/db/index.ts';
import { platformError } from '../../platform/errors.ts';
import { err } from '../errors.ts';
import type { TemplateRow } from '../tables.ts';
import { partialReferences } from './engine.ts';
import { parseTemplateId } from './ids.ts';
import { templateRepository } from './repository.ts';
import {
  PreviewBody,
  Rendered,
  Template,
  TemplateBody,
  TemplateList,
  TemplateParams,
  TemplateQuery,
  TemplateUpdate,
} from './schemas.ts';
import { missingVariables, parseTemplate, type TemplateStore } from './service.ts';

export interface TemplateRouteDeps {
  db: Db;
  renderer: TemplateStore;
  clock: Clock;
}

const tags = ['notifications'];
type Parts = Static<typeof TemplateUpdate>;

/** Templates decide what every user receives: only admins write them; services may read them. */
const write = { config: { access: { admin: true }, openapi: { problems: [404, 422] } } } as const;
const read = { config: { access: { service: 'notify:templates', admin: true } } } as const;
const readOne = { config: { ...read.config, openapi: { problems: [404] } } } as const;
const create = {
  config: { access: { admin: true }, openapi: { problems: [409, 422], headers: { 201: ['Location'] } } },
} as const;

/** CRUD of /api/templates: a template must parse (422 with liquid's message) before it is stored. */
export const templateRoutes: FastifyPluginAsyncTypebox<TemplateRouteDeps> = async (app, deps) => {
  const repository = templateRepository(deps.db);

  app.get(
    '/api/templates',
    {
      ...read,
      schema: {
        tags,
        summary: 'List templates',
        querystring: TemplateQuery,
        response: { 200: TemplateList },
      },
    },
    async (request) => {
      const rows = await repository.list(request.query);
      return { templates: rows.map(toJson) };
    },
  );

  app.get(
    '/api/templates/:id',
    {
      ...readOne,
      schema: { tags, summary: 'A template', params: TemplateParams, response: { 200: Template } },
    },
    async (request) => toJson(await load(request.params.id)),
  );

  app.post(
    '/api/templates',
    {
      ...create,
      schema: {
        tags,
        summary: 'Create a template',
        description:
          '409 `template_exists` when the id is taken; 422 `template_invalid` when it does not parse.',
        body: TemplateBody,
        response: { 201: Template },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const row = validated(body.id, body);
      await checkPartials(row);
      const { row: saved } = await repository.upsert(row, deps.clock.now(), true);
      if (!saved) throw err('template_exists', `Template ${body.id} exists; PUT replaces it`);
      deps.renderer.invalidate(body.id);
      return reply.code(201).header('location', `/api/templates/${body.id}`).send(toJson(saved));
    },
  );

  app.put(
    '/api/templates/:id',
    {
      ...write,
      schema: {
        tags,
        summary: 'Create or replace a template',
        params: TemplateParams,
        body: TemplateUpdate,
        response: { 200: Template, 201: Template },
      },
    },
    async (request, reply) => {
      const row = validated(request.params.id, request.body);
      await checkPartials(row);
      const { row: saved, created } = await repository.upsert(row, deps.clock.now());
      deps.renderer.invalidate(row.id);
      return reply.code(created ? 201 : 200).send(toJson(saved!));
    },
  );

  app.delete(
    '/api/templates/:id',
    {
      ...write,
      schema: {
        tags,
        summary: 'Delete a template',
        params: TemplateParams,
        response: { 204: { type: 'null', description: 'Deleted' } },
      },
    },
    async (request, reply) => {
      if (!(await repository.remove(request.params.id))) throw notFound(request.params.id);
      deps.renderer.invalidate(request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/api/templates/:id/preview',
    {
      ...write,
      schema: {
        tags,
        summary: 'Render a stored template with sample data',
        description:
          'What a recipient would get; 422 `template_render_failed` lists the first missing variable.',
        params: TemplateParams,
        body: PreviewBody,
        response: { 200: Rendered },
      },
    },
    async (request) => {
      const row = await load(request.params.id);
      const body = request.body;
      const missing = missingVariables(parseTemplate(row).variables, body.data);
      if (missing.length) {
        throw err('template_render_failed', {
          detail: `Missing variables: ${missing.join(', ')}`,
          extras: { missing },
        });
      }
      // The most specific template wins the lookup, and this id exists: render() picks exactly it.
      const message = await deps.renderer.render(row.type, row.channel, body.data, {
        locale: row.locale ?? undefined,
        timeZone: body.time_zone,
      });
      return { ...message, missing };
    },
  );

  /**
   * Liquid's include, render and layout may name only other stored templates, literally: a name
   * computed at render time could be anything, and the engines have no file system behind them.
   */
  async function checkPartials(row: Omit<TemplateRow, 'updated_at'>) {
    const { names, dynamic } = partialReferences(parseTemplate(row).parts);
    const refused = (detail: string) => err('template_partial_refused', { detail });
    if (dynamic) {
      throw refused(
        `include, render and layout need a stored template's id in quotes, e.g. {% render 'footer.${row.channel}' %}`,
      );
    }
    if (names.has(row.id)) throw refused(`${row.id} cannot include itself`);
    const ids = [...names];
    if (ids.length === 0) return;
    const stored = new Set(
      ids.every((id) => parseTemplateId(id)) ? (await repository.getMany(ids)).map((r) => r.id) : [],
    );
    const missing = ids.find((id) => !stored.has(id));
    if (missing !== undefined) throw refused(`"${missing}" is not a stored template`);
  }

  async function load(id: string) {
    const row = await repository.get(id);
    if (!row) throw notFound(id);
    return row;
  }
};

const notFound = (id: string) => err('template_not_found', `No template ${id}`);

function validated(id: string, parts: Parts): Omit<TemplateRow, 'updated_at'> {
  const key = parseTemplateId(id);
  if (!key) throw platformError('validation_failed', `Invalid template id ${id}`);
  if (parts.channel && parts.channel !== key.channel) {
    throw err('template_id_mismatch', `Id ${id} is a ${key.channel} template, not ${parts.channel}`);
  }
  const row = {
    id,
    type: key.type,
    channel: key.channel,
    locale: key.locale ?? null,
    subject: parts.subject ?? '',
    body: parts.body,
    html_body: key.channel === 'email' ? (parts.html_body ?? null) : null,
    link: key.channel === 'in_app' ? (parts.link ?? null) : null,
  };
  try {
    parseTemplate(row);
  } catch (error) {
    throw err('template_invalid', { detail: (error as Error).message });
  }
  return row;
}

function toJson(row: TemplateRow) {
  let variables: string[] = [];
  try {
    variables = parseTemplate(row).variables;
  } catch {
    // A row written before a filter was removed: list it anyway, with no variables.
  }
  return { ...row, variables, updated_at: row.updated_at.toISOString() };
}
