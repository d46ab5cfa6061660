import { resolve } from 'node:path';
import {
  freePort,
  type LoadOptions,
  load,
  mean,
  numberFlag,
  pidsOf,
  pinSelf,
  processCpuMs,
  settle,
  startBaseline,
  stopProcess,
} from './harness.ts';
import { abArguments, loadScenario, type ScenarioApp, startScenarioApp } from './scenario-app.ts';

/**
 * `node bench/ab.ts <scenario> <checkout A> <checkout B> [--cycles=6] [--duration=6] [--settle=1] [--warmup=6] [--connections=N] [--freeze]`
 *
 * One scenario for two versions of the code at once: each checkout's app (its own database and
 * NATS namespace) and the bare baseline run side by side, servers on core 0 and autocannon on
 * core 1 as in `npm run bench`, and each cycle loads the three one after the other (every other
 * cycle in reverse order). The machine's speed swings by a third between separate runs here;
 * within a cycle it hardly moves, so B/A per cycle shows a change of a few per cent that separate
 * runs cannot. Also prints each app's own CPU time per request (user + system from /proc), which
 * moves less than throughput on a shared machine, and with PostgreSQL, the database server's CPU
 * time per request over the same load (every `postgres` process: the queries' cost). A checkout
 * is a directory with `src/main.ts` and its dependencies, e.g.
 * `git worktree add /tmp/a 48de4ab && ln -s $PWD/node_modules /tmp/a/`.
 * Each measured load follows `--settle` seconds of unmeasured load on its target (`settle`).
 * Before the first cycle, each target gets `--warmup` seconds of load: a process's first seconds
 * under load cost more per request (compilation, heap sizing), and what is measured is a service
 * that has been running, not one still starting.
 * `--freeze` stops (SIGSTOP) the apps that are not being loaded and resumes each for its turn:
 * otherwise an idle app's own work (timers, queue polls, its database sessions) runs on the same
 * core and the same database while the other is measured, and lands in the other's figures.
 */
pinSelf();
const { name, checkouts } = abArguments('ab.ts', '[--cycles=6] [--duration=6] [--settle=1] [--warmup=6]');
const scenario = await loadScenario(name);
const cycles = numberFlag('cycles', 6);
const duration = numberFlag('duration', 6);
const settleSeconds = numberFlag('settle', 1);
const warmupSeconds = numberFlag('warmup', scenario.warmup ?? 6);
const connections = numberFlag('connections', scenario.connections ?? 100);
const freeze = process.argv.includes('--freeze');

interface Target {
  name: string;
  options: LoadOptions;
  pid?: number;
  app?: ScenarioApp & { analyze(): Promise<void> };
  rates: number[];
  cpuPerRequest: number[];
  /** The PostgreSQL server's CPU time per request while this target was loaded (all its processes). */
  dbCpuPerRequest: number[];
}

/** CPU time of each PostgreSQL process on this machine so far, in ms, by pid: the queries' cost. */
const databaseCpu = () => new Map(pidsOf('postgres').map((pid) => [pid, processCpuMs(pid)]));

/**
 * The PostgreSQL CPU time used since `before`: by the processes alive now (one started meanwhile
 * from 0). A process that ended meanwhile (a pooled connection closed) is left out, rather than
 * taking its whole life's time off.
 */
function databaseCpuSince(before: Map<number, number>): number {
  let sum = 0;
  for (const [pid, ms] of databaseCpu()) sum += Math.max(0, ms - (before.get(pid) ?? 0));
  return sum;
}

const baselinePort = await freePort();
const baselineChild = await startBaseline(baselinePort, scenario.baseline);
const targets: Target[] = [];
try {
  const apps: Target[] = [];
  let prepared: Awaited<ReturnType<typeof scenario.prepare>> | undefined;
  for (const [index, dir] of checkouts.entries()) {
    const app = await startScenarioApp(scenario, { tag: `ab${index}`, cwd: resolve(dir) });
    const load = await scenario.prepare(app.base);
    prepared ??= load;
    const { path = '/', ...options } = load;
    apps.push({
      name: index === 0 ? 'A' : 'B',
      options: { url: `${app.base}${path}`, ...options, connections, duration },
      pid: app.child.pid,
      app,
      rates: [],
      cpuPerRequest: [],
      dbCpuPerRequest: [],
    });
  }
  targets.push(
    {
      name: 'baseline',
      options: {
        url: `http://127.0.0.1:${baselinePort}/target`,
        ...scenario.baselineRequest(prepared!),
        connections,
        duration,
      },
      pid: baselineChild.pid,
      rates: [],
      cpuPerRequest: [],
      dbCpuPerRequest: [],
    },
    ...apps,
  );
  /** With --freeze: only `target`'s app runs (none for the baseline). */
  const runOnly = (target: Target) => {
    if (!freeze) return;
    for (const app of apps) process.kill(app.pid!, app === target ? 'SIGCONT' : 'SIGSTOP');
  };
  const runAll = () => {
    if (freeze) for (const app of apps) process.kill(app.pid!, 'SIGCONT');
  };
  for (const target of targets) {
    runOnly(target);
    await load('warm-up', { ...target.options, duration: warmupSeconds });
  }
  runAll();
  // As run.ts does: statistics after the warm-up, so pooled connections plan their prepared
  // statements for tables that hold rows (what autovacuum would have done by then).
  for (const app of apps) await app.app?.analyze();
  for (let cycle = 1; cycle <= cycles; cycle++) {
    for (const target of cycle % 2 ? targets : [...targets].reverse()) {
      runOnly(target);
      // Settled first, and only then the CPU count starts: the steady state alone is measured.
      await settle(target.options, settleSeconds);
      const cpuBefore = target.pid ? processCpuMs(target.pid) : 0;
      const dbBefore = databaseCpu();
      const figures = await load(target.name, target.options);
      target.rates.push(figures.requestsPerSec);
      target.cpuPerRequest.push(target.pid ? (processCpuMs(target.pid) - cpuBefore) / figures.total : 0);
      target.dbCpuPerRequest.push(databaseCpuSince(dbBefore) / figures.total);
    }
    console.log(
      `cycle ${cycle}: ${targets.map((t) => `${t.name} ${t.rates.at(-1)!.toFixed(0)} req/s`).join(', ')}`,
    );
  }
  runAll();
  report(targets);
  for (const app of apps)
    for (const line of (await scenario.verify?.(app.app!.base)) ?? []) console.log(`${app.name}: ${line}`);
} finally {
  // Resumed before they are stopped: a stopped process would not hear SIGTERM. One that has
  // exited already is not there to resume.
  if (freeze) for (const target of targets) if (target.app) resume(target.pid!);
  await stopProcess(baselineChild);
  for (const target of targets) await target.app?.stop();
}

function resume(pid: number) {
  try {
    process.kill(pid, 'SIGCONT');
  } catch {}
}

function report([baseline, a, b]: Target[]) {
  const per = (x: number[], y: number[]) => x.map((value, i) => value / y[i]);
  const list = (values: number[]) => values.map((v) => v.toFixed(3)).join(' ');
  for (const [target, dir] of [
    [a, checkouts[0]],
    [b, checkouts[1]],
  ] as const) {
    const ratios = per(target.rates, baseline.rates);
    console.log(
      `${target.name} (${dir}): ratio to baseline ${list(ratios)}; mean ${mean(ratios).toFixed(3)}`,
    );
    console.log(`${target.name}: CPU ms per request ${list(target.cpuPerRequest)}`);
    if (scenario.backends?.postgres) {
      console.log(`${target.name}: PostgreSQL CPU ms per request ${list(target.dbCpuPerRequest)}`);
    }
  }
  console.log(
    `B/A throughput: ${list(per(b.rates, a.rates))}; mean ${mean(per(b.rates, a.rates)).toFixed(3)}`,
  );
  console.log(
    `B/A CPU per request: ${list(per(b.cpuPerRequest, a.cpuPerRequest))}; mean ${mean(per(b.cpuPerRequest, a.cpuPerRequest)).toFixed(3)}`,
  );
  if (scenario.backends?.postgres) {
    const db = per(b.dbCpuPerRequest, a.dbCpuPerRequest);
    console.log(`B/A PostgreSQL CPU per request: ${list(db)}; mean ${mean(db).toFixed(3)}`);
  }
}
