import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { numberFlag, pinSelf, processCpuMs, startBenchApp, stopProcess } from './harness.ts';

/**
 * `node bench/idle.ts [checkout ...] [--settle=30] [--seconds=20] [--windows=3]`
 *
 * What a server costs when nobody uses it: each checkout (default: this one) started as
 * `npm start` starts it (every service, embedded PGlite in a data directory of its own), left
 * alone for `--settle` seconds, then its CPU time per second over `--windows` windows of
 * `--seconds`. The checkouts run one after the other, so neither's work shows in the other's.
 */
pinSelf();
const checkouts = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
const settle = numberFlag('settle', 30);
const seconds = numberFlag('seconds', 20);
const windows = numberFlag('windows', 3);

for (const dir of checkouts.length > 0 ? checkouts : ['.']) {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-idle-'));
  const { child } = await startBenchApp({ DATA_DIR: dataDir, LOG_LEVEL: 'warn' }, { cwd: resolve(dir) });
  try {
    await sleep(settle * 1000);
    const perSecond: string[] = [];
    for (let window = 0; window < windows; window++) {
      const before = processCpuMs(child.pid!);
      await sleep(seconds * 1000);
      perSecond.push(((processCpuMs(child.pid!) - before) / seconds).toFixed(1));
    }
    console.log(`${dir}: idle CPU ms per second ${perSecond.join(' ')}`);
  } finally {
    await stopProcess(child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
