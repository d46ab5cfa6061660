/**
 * Child of tick-shape.test.ts (run with --allow-natives-syntax --expose-gc): queues ticks,
 * starts PGlite, runs full GCs with no tick queued (as start-up does), queues ticks again and
 * prints nextTick's feedback (%DebugPrint). `fix` imports tick-shape.ts first, as main.ts does.
 */
if (process.argv[2] === 'fix') await import('./tick-shape.ts');
const { PGlite } = await import('@electric-sql/pglite');

const debugPrint = new Function('value', 'return %DebugPrint(value)') as (value: unknown) => void;
const gc = (globalThis as unknown as { gc: () => void }).gc;

function ticks(count: number): Promise<void> {
  return new Promise((resolve) => {
    let left = count;
    const done = () => {
      if (--left === 0) resolve();
    };
    for (let i = 0; i < count; i++) {
      if (i % 2) process.nextTick(done);
      else process.nextTick(done, i);
    }
  });
}

await ticks(1000);
const db = new PGlite('memory://');
await db.query('select 1');
// From a timer callback, not from under processTicksAndRejections (whose frame may still hold
// the last tick object).
await new Promise<void>((resolve) =>
  setImmediate(() => {
    for (let i = 0; i < 6; i++) gc();
    resolve();
  }),
);
await ticks(1000);
debugPrint(process.nextTick);
await db.close();
