import type { ServiceModule } from '../platform/module.ts';
import { pasteKeyScheme } from './accounts.ts';
import { createCleanup } from './cleanup.ts';
import { hasteRoutes } from './haste.ts';
import { pasteMigrations } from './migrations/index.ts';
import { createPageCookies } from './pages/cookies.ts';
import { pastePageRoutes } from './pages/routes.ts';
import { createPasteReads } from './reads.ts';
import { createPasteRepository } from './repository.ts';
import { pasteApiRoutes } from './routes.ts';
import { createPasteService } from './service.ts';
import { loadPasteSettings } from './settings.ts';
import { createShortIdCodec } from './shortid.ts';

/** The text sharing service (spec/text-sharing.md, DESIGN.md section 4). */
export const pasteModule: ServiceModule = {
  name: 'paste',
  migrations: pasteMigrations,
  async create(deps) {
    // The service's own settings (rate limits, cache size) are validated here, at start-up.
    const settings = loadPasteSettings(deps.config.env);
    const registry = deps.metrics.registry;
    const repository = createPasteRepository(deps.database);
    const reads = createPasteReads({
      repository,
      cache: deps.cache,
      pubsub: deps.pubsub,
      clock: deps.clock,
      registry,
      localCacheBytes: settings.localCacheBytes,
      viewFlushMs: settings.viewFlushMs,
      onFlushError: (error) =>
        deps.log.error({ err: error }, 'paste: writing view counts failed; will retry'),
    });
    await reads.start();
    const service = createPasteService({
      repository,
      reads,
      codec: createShortIdCodec(deps.config.secret),
      limiter: deps.limiter,
      clock: deps.clock,
      settings,
      baseUrl: deps.config.baseUrl,
      registry,
      // Two: one batch's commit (its fsync) overlaps the next one's execution, and fewer writers
      // make larger batches, so PostgreSQL commits and plans less per paste (paste-create).
      maxConcurrentWrites: Math.max(1, Math.min(2, deps.database.poolSize)),
    });
    // Registered while the module is created: /openapi.json lists the platform's schemes after that.
    deps.auth.addScheme(pasteKeyScheme(service));
    const cleanup = createCleanup({ repository, reads, clock: deps.clock, registry });
    return {
      api: {
        create: service.create,
        read: service.read,
        cleanup,
        flushViews: reads.flushViews,
        invalidate: reads.invalidate,
      },
      async routes(app) {
        const cookies = createPageCookies(deps.config.secret, deps.clock);
        await app.register(pasteApiRoutes, {
          pastes: service,
          reads,
          cookies,
          compressionMinBytes: deps.config.compressionMinBytes,
        });
        await app.register(hasteRoutes, { pastes: service, reads });
        await app.register(pastePageRoutes, { pastes: service, reads, cookies });
      },
      jobs: [
        {
          name: 'paste.cleanup',
          schedule: '0 * * * *',
          run: async ({ signal }) => {
            const report = await cleanup(signal);
            if (report.softDeleted + report.purged > 0) deps.log.info({ ...report }, 'paste cleanup');
          },
        },
      ],
      close: () => reads.close(),
    };
  },
};
