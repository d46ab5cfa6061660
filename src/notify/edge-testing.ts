import { randomBytes } from 'node:crypto';
import formbody from '@fastify/formbody';
import Fastify, { type FastifyInstance } from 'fastify';
import { registerAuth } from '../platform/auth/index.ts';
import { registerSignIn } from '../platform/auth/sign-in.ts';
import { createTestClock, type TestClock } from '../platform/clock.ts';
import { createDatabase, type Database } from '../platform/db/index.ts';
import { migrateModule } from '../platform/db/migrate.ts';
import { registerInputGuards } from '../platform/http/input.ts';
import { registerOpenApi } from '../platform/http/openapi.ts';
import { registerProblemHandlers, sendProblem, toAppError } from '../platform/http/problem.ts';
import { registerSecurityHeaders } from '../platform/http/security.ts';
import { createMetrics, type Metrics } from '../platform/observability/metrics.ts';
import { registerPages } from '../platform/pages/index.ts';
import { createMemoryRateLimiter } from '../platform/ratelimit/index.ts';
import { dropNamespace, realServices, testConfig, uniqueName } from '../platform/testing.ts';
import { providerMigrations } from './providers/index.ts';
import { templateMigrations } from './templates/index.ts';
import type { AnyDb } from './templates/repository.ts';

/**
 * A small harness for the edge parts (templates, providers, pages) until the lead wires them into
 * notify's module: a database with only our tables (PGlite, or a schema of its own on
 * TEST_DATABASE_URL), and a Fastify app with the platform's problem+json handler and pages.
 */
export interface EdgeHarness {
  database: Database;
  db: AnyDb;
  clock: TestClock;
  metrics: Metrics;
  app: FastifyInstance;
  close(): Promise<void>;
}

/** Production keys for a harness that runs as production does (`production: true`). */
export const PRODUCTION_KEYS = {
  NODE_ENV: 'production',
  SERVICES: 'notify',
  APP_SECRET: randomBytes(32).toString('base64url'),
  ADMIN_API_KEY: randomBytes(32).toString('base64url'),
  SERVICE_KEYS: `backoffice notify:send ${randomBytes(32).toString('base64url')}`,
};

export async function createEdgeHarness(
  options: { openapi?: boolean; production?: boolean } = {},
): Promise<EdgeHarness> {
  const schema = realServices.databaseUrl ? uniqueName('edge') : undefined;
  const database = await createDatabase({
    databaseUrl: realServices.databaseUrl,
    dataDir: 'memory://',
    schema,
    poolSize: 4,
  });
  await migrateModule(database, 'notify', { ...templateMigrations, ...providerMigrations });
  // The app's own settings (app.ts) where they change what a request gets: validation and routing.
  const app = Fastify({
    logger: false,
    frameworkErrors: (error, _request, reply) => sendProblem(reply, toAppError(error)),
    routerOptions: { maxParamLength: 200 },
    ajv: {
      customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: true },
    },
  });
  registerSecurityHeaders(app);
  // The platform's credential check, so every route's `config.access` holds here as in the app
  // (development keys: t.asAdmin / AS_SERVICE headers of the tests).
  const clock = createTestClock();
  const config = testConfig(options.production ? PRODUCTION_KEYS : {});
  const auth = registerAuth(app, { config, limiter: createMemoryRateLimiter(), clock });
  registerSignIn(app, auth);
  registerProblemHandlers(app);
  registerInputGuards(app);
  await app.register(formbody);
  registerPages(app, [{ title: 'Notifications', href: '/notify' }], { development: true });
  if (options.openapi) await registerOpenApi(app, 'http://localhost', auth.securitySchemes());
  return {
    database,
    db: database.db,
    clock,
    metrics: createMetrics(
      async () => 0,
      () => ({ total: 1, idle: 1, waiting: 0 }),
      false,
    ),
    app,
    async close() {
      await app.close();
      await database.close();
      if (schema) await dropNamespace({ databaseUrl: realServices.databaseUrl, namespace: 'none' }, schema);
    },
  };
}
