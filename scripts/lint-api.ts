import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openApiDocument } from './openapi-document.ts';

/**
 * `npm run lint:api`: /openapi.json of an app with every service, built in-process on the
 * embedded adapters (PGlite in memory, nothing listens), linted by Redocly (redocly.yaml) and
 * Spectral (.spectral.yaml). Fails when either reports an error; both run, so one run shows all.
 * `--out <file>` also keeps the document (e.g. to generate a client from it).
 *
 * Both tools work offline: their rulesets are built in, the document has no external $ref, and
 * Redocly's telemetry and update check are switched off below.
 */
const root = fileURLToPath(new URL('..', import.meta.url));
const document = await openApiDocument();

const dir = mkdtempSync(join(tmpdir(), 'lint-api-'));
const file = join(dir, 'openapi.json');
writeFileSync(file, document);
const out = process.argv.indexOf('--out');
if (out !== -1 && process.argv[out + 1]) writeFileSync(process.argv[out + 1], document);

const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
const run = (bin: string, args: string[]) =>
  spawnSync(process.execPath, [join(root, 'node_modules/.bin', bin), ...args], {
    cwd: root,
    env,
    stdio: 'inherit',
  }).status;
try {
  const redocly = run('redocly', ['lint', file, '--config', 'redocly.yaml', '--format', 'stylish']);
  const spectral = run('spectral', ['lint', file, '--ruleset', '.spectral.yaml', '--fail-severity', 'error']);
  process.exitCode = redocly === 0 && spectral === 0 ? 0 : 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
