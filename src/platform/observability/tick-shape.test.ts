import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';

/**
 * A child process queues ticks, starts PGlite, runs the full GCs a start-up runs with no tick
 * queued, queues ticks again, and prints nextTick's inline caches (V8's %DebugPrint). The stores
 * of the tick object's computed keys must still be monomorphic with tick-shape.ts imported
 * first; the control (same child without it) shows them megamorphic — the 5x slower nextTick.
 */
const module = pathToFileURL('src/platform/observability/tick-shape.ts').href;
const pglite = import.meta.resolve('@electric-sql/pglite');

function child(withModule: boolean): string {
  const script = `
    ${withModule ? `await import(${JSON.stringify(module)});` : ''}
    const { PGlite } = await import(${JSON.stringify(pglite)});
    const ticks = (n) => new Promise((resolve) => {
      let left = n;
      const done = () => { if (--left === 0) resolve(); };
      for (let i = 0; i < n; i++) i % 2 ? process.nextTick(done) : process.nextTick(done, i);
    });
    await ticks(1000);
    const db = new PGlite('memory://');
    await db.query('select 1');
    for (let i = 0; i < 6; i++) gc();
    await ticks(1000);
    %DebugPrint(process.nextTick);
    await db.close();
  `;
  const run = spawnSync(
    process.execPath,
    ['--allow-natives-syntax', '--expose-gc', '--input-type=module', '-e', script],
    { encoding: 'utf8', timeout: 120_000 },
  );
  assert.equal(run.status, 0, run.stderr);
  return run.stdout;
}

/** States of the "define in literal" feedback slots of nextTick (one per computed key). */
function literalStores(output: string): string[] {
  return [...output.matchAll(/DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((match) => match[1]);
}

test('tick objects keep their maps through start-up GCs (nextTick stays monomorphic)', () => {
  const control = literalStores(child(false));
  assert.ok(control.length >= 3, `unexpected %DebugPrint format: ${control}`);
  assert.ok(control.includes('MEGAMORPHIC'), `control did not reproduce the problem: ${control}`);

  const fixed = literalStores(child(true));
  assert.equal(fixed.length, control.length);
  assert.deepEqual(
    fixed.filter((state) => state !== 'MONOMORPHIC'),
    [],
    `with tick-shape.ts: ${fixed}`,
  );
});
