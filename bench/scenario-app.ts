import type { ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  BENCH_SERVICES,
  createBenchDatabase,
  dropNatsNamespace,
  startBenchApp,
  stopProcess,
} from './harness.ts';
import type { Scenario } from './run.ts';

/**
 * The arguments of the A/B drivers: `<scenario> <checkout A> <checkout B>` among `--flags`; the
 * usage line and exit 2 when they are not that.
 */
export function abArguments(script: string, flags: string): { name: string; checkouts: [string, string] } {
  const [name, a, b, ...rest] = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
  if (!name || !scenarioNames().includes(name) || !a || !b || rest.length > 0) {
    console.error(
      `usage: node bench/${script} <${scenarioNames().join('|')}> <checkout A> <checkout B> ${flags}`,
    );
    process.exit(2);
  }
  return { name, checkouts: [a, b] };
}

/** The scenarios of `bench/scenarios/`, by name. */
export function scenarioNames(): string[] {
  return readdirSync(fileURLToPath(new URL('./scenarios/', import.meta.url)))
    .filter((file) => file.endsWith('.ts'))
    .map((file) => file.replace(/\.ts$/, ''));
}

export async function loadScenario(name: string): Promise<Scenario> {
  return (await import(`./scenarios/${name}.ts`)).default;
}

export interface ScenarioApp {
  base: string;
  child: ChildProcess;
  /** Stops the app and drops what it made on the shared servers (database, NATS streams, data dir). */
  stop(): Promise<void>;
}

/**
 * The app as a scenario runs it: its services and backends, a fresh PostgreSQL database and NATS
 * namespace of its own when it uses them. `cwd` runs another checkout of the code (A/B runs).
 */
export async function startScenarioApp(
  scenario: Scenario,
  options: { tag: string; cwd?: string },
): Promise<ScenarioApp & { analyze(): Promise<void> }> {
  const database = scenario.backends?.postgres
    ? await createBenchDatabase(BENCH_SERVICES.postgres)
    : undefined;
  const namespace = `bench_${options.tag}_${Date.now()}`;
  // Absolute: another checkout's app runs in its own directory.
  const dataDir = resolve(`data/bench-${options.tag}-${Date.now()}`);
  const { child, base } = await startBenchApp(
    {
      SERVICES: scenario.services,
      NAMESPACE: namespace,
      DATA_DIR: dataDir,
      DATABASE_URL: database?.url ?? '',
      REDIS_URL: scenario.backends?.redis ? BENCH_SERVICES.redis : '',
      NATS_URL: scenario.backends?.nats ? BENCH_SERVICES.nats : '',
      ...scenario.env,
    },
    // BENCH_PROFILE_DIR=<dir> makes the app write a CPU profile there when it stops.
    { cwd: options.cwd, profile: true },
  );
  return {
    base,
    child,
    analyze: async () => database?.analyze(),
    async stop() {
      await stopProcess(child);
      await database?.drop();
      if (scenario.backends?.nats) await dropNatsNamespace(namespace);
      if (existsSync(dataDir)) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
