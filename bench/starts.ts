import { resolve } from 'node:path';
import { load, mean, numberFlag, pinSelf, processCpuMs } from './harness.ts';
import { abArguments, loadScenario, startScenarioApp } from './scenario-app.ts';

/**
 * `node bench/starts.ts <scenario> <checkout A> <checkout B> [--starts=6] [--duration=4]`
 *
 * A/B across process starts, for what a process's first seconds decide for the rest of its life
 * (an engine heuristic, a cache warmed one way or the other): `bench/ab.ts` starts each app once,
 * so such an effect shows there as luck of the run. Here each start, alternately A's and B's, is a
 * fresh app (its own database and namespace) loaded for 3 s, then measured in two loads of
 * `--duration` s: CPU time per request from /proc and req/s; then it is stopped. Prints each
 * start's figures, the means per side and B/A.
 */
pinSelf();
const { name, checkouts } = abArguments('starts.ts', '[--starts=6] [--duration=4]');
const scenario = await loadScenario(name);
const starts = numberFlag('starts', 6);
const duration = numberFlag('duration', 4);
const connections = numberFlag('connections', scenario.connections ?? 100);
const sides = {
  A: { cpu: [] as number[], rate: [] as number[] },
  B: { cpu: [] as number[], rate: [] as number[] },
};

for (let start = 1; start <= starts; start++) {
  for (const [index, side] of (['A', 'B'] as const).entries()) {
    const app = await startScenarioApp(scenario, {
      tag: `st${start}${side.toLowerCase()}`,
      cwd: resolve(checkouts[index]),
    });
    try {
      const { path = '/', ...options } = await scenario.prepare(app.base);
      const target = { url: `${app.base}${path}`, ...options, connections };
      await load('warm-up', { ...target, duration: 3 });
      await app.analyze();
      const figures: string[] = [];
      for (let round = 0; round < 2; round++) {
        const before = processCpuMs(app.child.pid!);
        const result = await load(side, { ...target, duration });
        const cpu = ((processCpuMs(app.child.pid!) - before) / result.total) * 1000;
        sides[side].cpu.push(cpu);
        sides[side].rate.push(result.requestsPerSec);
        figures.push(`${cpu.toFixed(1)} µs/request ${result.requestsPerSec.toFixed(0)} req/s`);
      }
      console.log(`start ${start} ${side}: ${figures.join(', ')}`);
    } finally {
      await app.stop();
    }
  }
}
for (const side of ['A', 'B'] as const) {
  console.log(
    `${side}: mean CPU ${mean(sides[side].cpu).toFixed(1)} µs/request, ${mean(sides[side].rate).toFixed(0)} req/s`,
  );
}
console.log(
  `B/A throughput ${(mean(sides.B.rate) / mean(sides.A.rate)).toFixed(3)}, CPU per request ${(mean(sides.B.cpu) / mean(sides.A.cpu)).toFixed(3)}`,
);
