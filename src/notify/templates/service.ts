import type { Liquid, Template } from 'liquidjs';
import { LRUCache } from 'lru-cache';
import type { Db } from '../../platform/db/index.ts';
import { type Channel, CONTEXT_VARIABLES } from '../api.ts';
import { err } from '../errors.ts';
import type { RenderedMessage, TemplateProblem, TemplateRenderer } from '../ports.ts';
import type { TemplateRow } from '../tables.ts';
import {
  createEngines,
  type Engines,
  htmlEngine,
  knownTimeZone,
  partialReferences,
  RENDER_LIMITS,
  rendersSync,
  storedTemplateFs,
  templateVariables,
  textEngine,
  textToHtml,
} from './engine.ts';
import { candidateIds } from './ids.ts';
import { templateRepository } from './repository.ts';

interface Parsed {
  row: TemplateRow;
  subject: Template[];
  body: Template[];
  html?: Template[];
  link?: Template[];
  variables: string[];
  /** No async filter in any part: rendered with `renderSync`. */
  sync: boolean;
}

export interface TemplateStore extends TemplateRenderer {
  /** Drops cached rows (all, or one id and its fallbacks) after a change through the API. */
  invalidate(id?: string): void;
}

export interface TemplateRendererOptions {
  /**
   * How long a looked-up row is reused as it is. Changes made in this process invalidate at once;
   * other processes see them after at most this long plus one lookup (the price of not reading
   * the row per message).
   */
  rowTtlMs?: number;
  /** ISO 4217 code of amounts whose sender names none (`currency`; NOTIFY_CURRENCY). */
  currency?: string;
}

/** What booking charges in by default (BOOKING_CURRENCY) and NOTIFY_CURRENCY's default. */
export const DEFAULT_CURRENCY = 'INR';

/** Engines that read no partial at all: parsing and checking need none. */
const CHECKING_ENGINES: Engines = { text: textEngine, html: htmlEngine };

/**
 * Parses the three parts of a template; throws liquid's ParseError for a broken one. A part keeps
 * the engine that parsed it for its partials, so the renderer parses with its own engines.
 */
export function parseTemplate(
  row: Pick<TemplateRow, 'subject' | 'body' | 'html_body'> & { link?: string | null },
  engines: Engines = CHECKING_ENGINES,
) {
  const subject = engines.text.parse(row.subject);
  const body = engines.text.parse(row.body);
  const html = row.html_body == null ? undefined : engines.html.parse(row.html_body);
  // An in-app item's link (migration 300): a text part, checked like the others.
  const link = row.link == null ? undefined : engines.text.parse(row.link);
  const parts = [subject, body, ...(html ? [html] : []), ...(link ? [link] : [])];
  return { subject, body, html, link, parts, variables: templateVariables(parts) };
}

const supplied = new Set<string>(CONTEXT_VARIABLES);

/**
 * Own properties only, as liquid reads them (`ownPropertyOnly`): `constructor` is not in `{}`.
 * The context variables (api.ts) are never missing: the renderer has defaults for them.
 */
export function missingVariables(variables: string[], data: Record<string, unknown>): string[] {
  return variables.filter(
    (name) => !supplied.has(name) && (!Object.hasOwn(data, name) || data[name] === undefined),
  );
}

export function createTemplateRenderer(db: Db, options: TemplateRendererOptions = {}): TemplateStore {
  const repository = templateRepository(db);
  // Parsed templates keyed by id and version: an edited template gets a new key, so nothing stale renders.
  const parsed = new LRUCache<string, Parsed>({ max: 2000 });
  // Which row answers (type, channel, locale): null caches "no template" too, so unknown types cost no query.
  const lookups = new LRUCache<string, { row: TemplateRow | null; at: number }>({ max: 5000 });
  const ttlMs = options.rowTtlMs ?? 5000;
  const currency = options.currency ?? DEFAULT_CURRENCY;
  /** Lookups on their way, one per key; `generation` moves on each invalidation. */
  const reading = new Map<string, Promise<{ row: TemplateRow | null }>>();
  let generation = 0;

  /**
   * One query per key at a time, whoever asks meanwhile waits for it. When every lookup expired
   * at once and each render read its own, a worker's renders in flight each queried, waited, and
   * grew the pools to their full size.
   */
  function read(key: string, candidates: string[]): Promise<{ row: TemplateRow | null }> {
    const waiting = reading.get(key);
    if (waiting) return waiting;
    const started = generation;
    const pending = repository.getMany(candidates).then((rows) => {
      const row = candidates.map((id) => rows.find((r) => r.id === id)).find(Boolean) ?? null;
      // An invalidation meanwhile may have made this answer old: it serves this read's callers only.
      if (started === generation) lookups.set(key, { row, at: performance.now() });
      return { row };
    });
    reading.set(key, pending);
    const done = () => {
      if (reading.get(key) === pending) reading.delete(key);
    };
    pending.then(done, done);
    return pending;
  }

  const lookup = (type: string, channel: Channel, locale?: string) =>
    cachedRow(candidateIds(type, channel, locale));

  /** The first stored row of `candidates`, as the lookup cache has it. */
  async function cachedRow(candidates: string[]) {
    const key = candidates.join('|');
    const hit = lookups.get(key);
    if (!hit) return read(key, candidates);
    // Expired: answered from what we have while one query reads it again, so no render waits.
    if (performance.now() - hit.at > ttlMs) read(key, candidates).catch(() => {});
    return hit;
  }

  // Partials are other stored templates, read by id through the same cache (an edit shows within
  // `rowTtlMs`): the text parts get a template's body, the HTML part its html_body (else its body).
  const engines = createEngines({
    text: storedTemplateFs(async (id) => (await cachedRow([id])).row?.body),
    html: storedTemplateFs(async (id) => {
      const { row } = await cachedRow([id]);
      return row ? (row.html_body ?? row.body) : undefined;
    }),
  });

  /** The variables of the parts and of the partials they include, as far as those can be read now. */
  async function variablesWithPartials(parts: Template[][], own: string[]): Promise<string[]> {
    const names = new Set<string>();
    try {
      for (const part of parts) {
        for (const name of await engines.text.globalVariables(part, { partials: true })) names.add(name);
      }
    } catch {
      // A partial that cannot be read: the render fails and says which.
      return own;
    }
    return [...names].sort();
  }

  async function find(type: string, channel: Channel, locale?: string): Promise<Parsed | undefined> {
    const hit = await lookup(type, channel, locale);
    if (!hit.row) return undefined;
    const version = `${hit.row.id}@${hit.row.updated_at.getTime()}`;
    let entry = parsed.get(version);
    if (!entry) {
      const { subject, body, html_body, link } = hit.row;
      const parts = parseTemplate(hit.row, engines);
      const partials = partialReferences(parts.parts);
      // Partials are read from the database, which only liquid's async render can wait for.
      const includes = partials.names.size > 0 || partials.dynamic;
      const sync = !includes && rendersSync([subject, body, html_body, link]);
      const variables = includes
        ? await variablesWithPartials(parts.parts, parts.variables)
        : parts.variables;
      entry = { row: hit.row, ...parts, variables, sync };
      parsed.set(version, entry);
    }
    return entry;
  }

  async function render(
    type: string,
    channel: Channel,
    data: Record<string, unknown>,
    renderOptions: { locale?: string; timeZone?: string } = {},
  ): Promise<RenderedMessage> {
    const template = await find(type, channel, renderOptions.locale);
    if (!template) throw err('template_not_found', `No ${channel} template for type "${type}"`);
    const timeZone = knownTimeZone(renderOptions.timeZone);
    // Globals are liquid's last scope: the data's own `time_zone` and `currency` win over these.
    const opts = { ...RENDER_LIMITS, globals: { timeZone, time_zone: timeZone, currency } };
    // The parts were parsed once (cached by id and version); liquid renders the parsed templates.
    const part = async (engine: Liquid, templates: Template[]) =>
      String(
        template.sync ? engine.renderSync(templates, data, opts) : await engine.render(templates, data, opts),
      );
    try {
      const text = await part(engines.text, template.body);
      if (channel === 'sms') return { text };
      const subject = (await part(engines.text, template.subject)).trim();
      if (channel === 'push') return { subject, text };
      if (channel === 'in_app') {
        const link = template.link ? (await part(engines.text, template.link)).trim() : '';
        return link ? { subject, text, link } : { subject, text };
      }
      const html = template.html ? await part(engines.html, template.html) : textToHtml(text);
      return { subject, text, html };
    } catch (error) {
      throw err('template_render_failed', {
        detail: `${template.row.id}: ${(error as Error).message}`,
        cause: error,
      });
    }
  }

  return {
    render,
    async check(type, channels, data, locale) {
      const problems: TemplateProblem[] = [];
      for (const channel of channels) {
        const template = await find(type, channel, locale);
        if (!template) {
          problems.push({ channel, reason: 'unknown_type' });
          continue;
        }
        const missing = missingVariables(template.variables, data);
        if (missing.length) problems.push({ channel, reason: 'missing_variables', missing });
      }
      return problems;
    },
    types: () => repository.types(),
    invalidate(id) {
      // Every lookup key starts with `{type}.{channel}`; a new or deleted `x.email.de` changes what
      // lookups for `x.email` with a `de…` locale answer, so all of that pair's keys go.
      generation++;
      reading.clear();
      const prefix = id?.split('.').slice(0, 2).join('.');
      if (!prefix) return lookups.clear();
      for (const key of lookups.keys())
        if (key.startsWith(`${prefix}.`) || key.startsWith(`${prefix}|`) || key === prefix)
          lookups.delete(key);
    },
  };
}
