import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

/**
 * Test support lives in test/ (support, fixtures, the fault suite) and production never imports
 * it: a file of src/ that is not a test imports nothing from test/, directly or by a path that
 * leads there.
 */
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const IMPORT = /(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g;

function productionFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return productionFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

test('no production file imports test support', () => {
  const offenders: string[] = [];
  for (const file of productionFiles(join(ROOT, 'src'))) {
    for (const [, specifier] of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const target = relative(ROOT, resolve(dirname(file), specifier));
      if (target.startsWith('test/')) offenders.push(`${relative(ROOT, file)} → ${target}`);
    }
  }
  assert.deepEqual(offenders, []);
  assert.ok(productionFiles(join(ROOT, 'src')).length > 50, 'the scan found the production files');
});
