import { buildApp } from '../src/app.ts';
import { createAdapters } from '../src/platform/adapters.ts';
import { loadConfig } from '../src/platform/config.ts';

/**
 * /openapi.json of an app with every service, built in-process on the embedded adapters (PGlite
 * in memory, nothing listens), as the text the scripts lint and generate clients from. The
 * configuration is fixed, so the same code gives the same document on every machine.
 */
export async function openApiDocument(): Promise<string> {
  const config = loadConfig([], { DATA_DIR: 'memory://', LOG_LEVEL: 'silent' });
  const adapters = await createAdapters(config);
  try {
    const app = await buildApp(config, adapters, { logger: false });
    await app.ready();
    const document = `${JSON.stringify(app.swagger(), null, 2)}\n`;
    await app.close();
    return document;
  } finally {
    await adapters.close();
  }
}
