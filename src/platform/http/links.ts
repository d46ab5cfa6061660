import type { FastifyInstance, FastifyRequest, preSerializationHookHandler } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The origin absolute links in this answer start with: `BASE_URL` when it is set, otherwise the
     * address the client used (Host and the protocol, from X-Forwarded-Host/-Proto only when the
     * proxy is trusted: Fastify's request.host and request.protocol under TRUST_PROXY).
     */
    readonly publicOrigin: string;
  }
  interface FastifyContextConfig {
    /**
     * The answer may carry links made where no request was at hand (payment links): without
     * BASE_URL they are moved to the address in use as the answer leaves (`registerLinks`).
     */
    links?: 'rebase';
  }
}

export interface LinkSettings {
  /** `BASE_URL` as configured, when it was (never the default). */
  publicBaseUrl?: string;
  /** What links are built on where no request is at hand (e-mail, workers): the default base. */
  baseUrl: string;
}

/** A host as a URL may carry it: a name or IPv4 address, or an [IPv6] literal, with an optional port. */
const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/** The origin of a request's links (see FastifyRequest.publicOrigin). */
export function originOf(request: FastifyRequest, settings: LinkSettings): string {
  if (settings.publicBaseUrl !== undefined) return settings.publicBaseUrl;
  const host = request.host;
  // No Host (HTTP/1.0) or one that is no host at all: the configured default rather than a broken link.
  if (typeof host !== 'string' || !HOST.test(host)) return settings.baseUrl;
  return `${request.protocol === 'https' ? 'https' : 'http'}://${host.toLowerCase()}`;
}

/**
 * `request.publicOrigin`, and, without BASE_URL, links made on the default base moved to the
 * address in use. Payment links are made by the payments module where no request is at hand
 * (parking even keeps them in its rows), so the answers of the routes that carry them
 * (`config.links: 'rebase'`) have their strings that start with the default base rewritten as
 * they leave. Only those routes get the hook: on every route it would be one more promise and a
 * walk of every answer (holds, paste reads) for the few that hold a payment link. With BASE_URL
 * set there is nothing to move and no hook.
 */
export function registerLinks(app: FastifyInstance, settings: LinkSettings): void {
  app.decorateRequest('publicOrigin', {
    getter(this: FastifyRequest) {
      return originOf(this, settings);
    },
  });
  if (settings.publicBaseUrl !== undefined) return;
  const prefix = `${settings.baseUrl}/`;
  const moveLinks: preSerializationHookHandler<unknown> = (request, _reply, payload, done) => {
    const origin = request.publicOrigin;
    if (origin === settings.baseUrl || typeof payload !== 'object' || payload === null) {
      return done(null, payload);
    }
    done(null, rebase(payload, prefix, `${origin}/`));
  };
  app.addHook('onRoute', (route) => {
    if (route.config?.links !== 'rebase') return;
    const existing = route.preSerialization;
    route.preSerialization = [
      ...(existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]),
      moveLinks,
    ];
  });
}

/** A copy of `value` with every string that starts with `from` starting with `to` instead. */
export function rebase(value: unknown, from: string, to: string): unknown {
  if (typeof value === 'string') return value.startsWith(from) ? to + value.slice(from.length) : value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const moved = rebase(value[i], from, to);
      if (moved === value[i]) continue;
      copy ??= [...value];
      copy[i] = moved;
    }
    return copy ?? value;
  }
  if (typeof value !== 'object' || value === null || value instanceof Date) return value;
  let copy: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    const moved = rebase(item, from, to);
    if (moved === item) continue;
    copy ??= { ...(value as Record<string, unknown>) };
    copy[key] = moved;
  }
  return copy ?? value;
}
