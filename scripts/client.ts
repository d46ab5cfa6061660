import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openApiDocument } from './openapi-document.ts';

/**
 * `npm run client:generate`: clients/typescript/schema.ts, the types openapi-typescript makes of
 * the app's /openapi.json. `npm run client:check` (CI) generates it into a temporary folder and
 * fails, showing the diff, when the committed one differs: a route changed without its client.
 *
 * openapi-typescript drives the TypeScript 5 compiler API, which TypeScript 7 (the project's
 * tsc) no longer has, so it and its TypeScript live in the client's workspace (its package.json).
 */
const root = fileURLToPath(new URL('..', import.meta.url));
const client = join(root, 'clients/typescript');
const FILES = ['schema.ts'];

async function generate(into: string) {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-'));
  try {
    const document = join(dir, 'openapi.json');
    writeFileSync(document, await openApiDocument());
    const cli = join(client, 'node_modules/openapi-typescript/bin/cli.js');
    const run = spawnSync(process.execPath, [cli, document, '-o', join(into, 'schema.ts')], {
      cwd: client,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    if (run.status !== 0) throw new Error(`openapi-typescript failed (${run.status})`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv.includes('--check')) {
  const dir = mkdtempSync(join(tmpdir(), 'client-'));
  try {
    await generate(dir);
    const stale = FILES.filter(
      (file) => readFileSync(join(dir, file), 'utf8') !== readFileSync(join(client, file), 'utf8'),
    );
    for (const file of stale) {
      spawnSync('diff', ['-u', join(client, file), join(dir, file)], { stdio: 'inherit' });
    }
    if (stale.length) {
      console.error(
        `clients/typescript: ${stale.join(', ')} differ from /openapi.json: run npm run client:generate`,
      );
      process.exitCode = 1;
    } else console.log('clients/typescript matches /openapi.json');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
} else {
  await generate(client);
  console.log(`clients/typescript: ${FILES.join(', ')} generated`);
}
