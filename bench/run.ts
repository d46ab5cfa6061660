import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import {
  type Figures,
  freePort,
  type LoadOptions,
  load,
  median,
  numberFlag,
  PIN,
  pinSelf,
  printTable,
  settle,
  startBaseline,
  stopProcess,
} from './harness.ts';
import { loadScenario, scenarioNames, startScenarioApp } from './scenario-app.ts';

/**
 * `npm run bench -- <scenario> [--duration=10] [--connections=100] [--rounds=3] [--settle=1]`
 *
 * Starts a bare Fastify baseline and the app in separate processes, drives each with
 * autocannon from this process, alternating baseline and target for a few rounds with the
 * same settings (each round after `--settle` seconds of unmeasured load), and prints
 * every run plus `ratio = median(target)/median(baseline)`.
 * Scenarios live in bench/scenarios/<name>.ts.
 */
export interface Scenario {
  description: string;
  /** Services the app runs (`--services`). */
  services: string;
  /** Run the app on the local PostgreSQL/Redis/NATS instead of the embedded adapters. */
  backends?: { postgres?: boolean; redis?: boolean; nats?: boolean };
  /** Extra environment for the app process. */
  env?: Record<string, string>;
  baseline: { kind: 'get' | 'post'; bodyBytes?: number };
  /** The ratio the issue asks for. */
  target: number;
  connections?: number;
  /** Seconds per round when `--duration` is not given (default 10). */
  duration?: number;
  /** Seconds of load per target before `ab.ts`'s first cycle when `--warmup` is not given (default 6). */
  warmup?: number;
  /** Creates data through the API and returns the load to run against the app. */
  prepare(
    baseUrl: string,
  ): Promise<Omit<LoadOptions, 'url' | 'duration' | 'connections'> & { path?: string }>;
  /** The baseline's request options (same body as the target's). */
  baselineRequest(
    prepared: Awaited<ReturnType<Scenario['prepare']>>,
  ): Omit<LoadOptions, 'url' | 'duration' | 'connections'>;
  /** Checks after the run (e.g. no double booking); returns lines to print, throws on a violation. */
  verify?(baseUrl: string): Promise<string[]>;
}

async function main() {
  // These have their own drivers (several server processes, or 10,000 sockets): no pinning.
  const standalone = {
    mixed: './mixed.ts',
    'sse-10k': './sse-10k.ts',
    'holds-10k': './holds-10k.ts',
    'notify-deliver': './notify-deliver.ts',
    scale: './scale.ts',
    plans: './plans.ts',
    'pglite-size': './pglite-size.ts',
  };
  const driver = standalone[process.argv[2] as keyof typeof standalone];
  if (driver) return void (await import(driver));
  pinSelf();
  const args = process.argv.slice(2);
  const name = args.find((arg) => !arg.startsWith('--'));
  const available = scenarioNames();
  if (!name || !available.includes(name)) {
    console.error(`usage: npm run bench -- <${available.join('|')}> [--duration=10] [--connections=N]`);
    process.exit(2);
  }
  const scenario = await loadScenario(name);
  const duration = numberFlag('duration', scenario.duration ?? 10);
  const rounds = numberFlag('rounds', 3);
  const settleSeconds = numberFlag('settle', 1);
  const connections = numberFlag('connections', scenario.connections ?? 100);

  const basePort = await freePort();
  const target = await startScenarioApp(scenario, { tag: 'run' });
  const appUrl = target.base;
  const baseline = await startBaseline(basePort, scenario.baseline);
  try {
    const prepared = await scenario.prepare(appUrl);
    const { path = '/', ...targetOptions } = prepared;
    const baseOptions = scenario.baselineRequest(prepared);
    const common = { connections, duration };
    console.log(`${name}: ${scenario.description}`);
    console.log(
      `${connections} connections, ${rounds} rounds of ${duration} s each, ${cpus().length} cores` +
        `${PIN ? ' (servers on core 0, load on core 1)' : ''}; warming up…`,
    );
    const baseUrl = `http://127.0.0.1:${basePort}/target`;
    await load('warm-up', { url: baseUrl, ...baseOptions, connections, duration: 2 });
    await load('warm-up', { url: `${appUrl}${path}`, ...targetOptions, connections, duration: 2 });
    await target.analyze();
    const rows: Figures[] = [];
    for (let round = 1; round <= rounds; round++) {
      const baseline: LoadOptions = { url: baseUrl, ...baseOptions, ...common };
      await settle(baseline, settleSeconds);
      rows.push(await load(`baseline #${round}`, baseline));
      const app: LoadOptions = { url: `${appUrl}${path}`, ...targetOptions, ...common };
      await settle(app, settleSeconds);
      rows.push(await load(`${name} #${round}`, app));
    }
    const rate = (baseline: boolean) =>
      median(rows.filter((r) => r.label.startsWith('baseline') === baseline).map((r) => r.requestsPerSec));
    printTable(rows);
    console.log(`median req/s: baseline ${rate(true).toFixed(0)}, ${name} ${rate(false).toFixed(0)}`);
    const ratio = rate(false) / rate(true);
    const verdict = ratio >= scenario.target ? 'meets' : 'BELOW';
    console.log(
      `ratio = target/baseline = ${ratio.toFixed(3)} (${verdict} the target of ${scenario.target})`,
    );
    const checks = (await scenario.verify?.(appUrl)) ?? [];
    for (const line of checks) console.log(line);
    mkdirSync('bench/results', { recursive: true });
    writeFileSync(
      `bench/results/${name}.json`,
      `${JSON.stringify({ name, at: new Date().toISOString(), connections, duration, rounds, rows, ratio, target: scenario.target, checks }, null, 2)}\n`,
    );
  } finally {
    await target.stop();
    await stopProcess(baseline);
  }
}

await main();
