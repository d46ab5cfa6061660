import autocannon from 'autocannon';
import { freePort, pinSelf, processCpuMs, startBaseline, startBenchApp, stopProcess } from './harness.ts';
import type { Scenario } from './run.ts';

/**
 * `node bench/cpu.ts <scenario> [requests=50000] [rounds=3]`
 *
 * The server processes' own CPU time (user + system, /proc/<pid>/stat) per request, target and
 * baseline alternately, for a fixed number of requests (50 connections). On a machine shared with
 * other runs the req/s ratio of `npm run bench` swings by 2x between rounds; CPU per request
 * moves much less, so this is the figure for comparing two versions of the code there.
 * Embedded adapters only (PGlite in memory). Linux only.
 */
pinSelf();
const name = process.argv[2] ?? 'hello';
const amount = Number(process.argv[3] ?? 50_000);
const rounds = Number(process.argv[4] ?? 3);
const scenario: Scenario = (await import(`./scenarios/${name}.ts`)).default;
const basePort = await freePort();

const cpuMicros = (pid: number) => processCpuMs(pid) * 1000;

const { child: app, base: appUrl } = await startBenchApp({
  SERVICES: scenario.services,
  NAMESPACE: `cpu_${Date.now()}`,
  ...scenario.env,
});
const baseline = await startBaseline(basePort, scenario.baseline);
try {
  const { path = '/' } = await scenario.prepare(appUrl);
  const targets = [
    { label: 'baseline', pid: baseline.pid as number, url: `http://127.0.0.1:${basePort}/target` },
    { label: name, pid: app.pid as number, url: `${appUrl}${path}` },
  ];
  for (const { url } of targets) await autocannon({ url, connections: 50, amount: 20_000 });
  const results = new Map<string, number[]>();
  for (let round = 1; round <= rounds; round++) {
    for (const { label, pid, url } of targets) {
      const before = cpuMicros(pid);
      const result = await autocannon({ url, connections: 50, amount });
      const perRequest = (cpuMicros(pid) - before) / result.requests.total;
      results.set(label, [...(results.get(label) ?? []), perRequest]);
      console.log(
        `${label} #${round}: ${perRequest.toFixed(1)} µs CPU/request (${result.requests.average.toFixed(0)} req/s, non-2xx ${result.non2xx})`,
      );
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const base = median(results.get('baseline') ?? []);
  const target = median(results.get(name) ?? []);
  console.log(
    `median µs CPU/request: baseline ${base.toFixed(1)}, ${name} ${target.toFixed(1)}; ` +
      `baseline/target = ${(base / target).toFixed(3)}`,
  );
} finally {
  await stopProcess(app);
  await stopProcess(baseline);
}
