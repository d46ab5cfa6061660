import type { ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import autocannon from 'autocannon';
import {
  BENCH_SERVICES,
  createBenchDatabase,
  dropNatsNamespace,
  freePort,
  numberFlag,
  pinSelf,
  startBaseline,
  startBenchApp,
  stopProcess,
} from './harness.ts';
import { createUsers, JSON_AS_SERVICE, notificationBody, notifyProcessEnv } from './notify-common.ts';

/**
 * `node bench/notify-ab.ts <checkout A> <checkout B> [--cycles=8] [--duration=6]`
 *
 * notify-accept for two versions of the code at once: each checkout's app (ROLE=api, its own
 * database and NATS namespace) and the bare Fastify baseline run side by side, servers on core 0
 * and autocannon on core 1 as in `npm run bench`, and each cycle loads the three one after the
 * other (every other cycle in reverse order). The machine's speed swings by a third between
 * bench runs here; within a cycle it hardly moves, so B/A per cycle shows a change of a few per
 * cent that separate runs cannot. A checkout is a directory with `src/main.ts` and its
 * dependencies (e.g. `git worktree add /tmp/a <rev>` and a `node_modules` symlink). Prints
 * accepts per second per cycle, ratios to the baseline and B/A per cycle.
 */
pinSelf();
const checkouts = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
if (checkouts.length !== 2) {
  console.error('usage: node bench/notify-ab.ts <checkout A> <checkout B> [--cycles=8] [--duration=6]');
  process.exit(2);
}
const cycles = numberFlag('cycles', 8);
const duration = numberFlag('duration', 6);

interface Target {
  name: string;
  url: string;
  child: ChildProcess;
  cleanup?: () => Promise<void>;
}

async function startCheckout(name: string, dir: string, index: number): Promise<Target> {
  const database = await createBenchDatabase(BENCH_SERVICES.postgres);
  const namespace = `notifyab_${Date.now()}_${index}`;
  const { child, base } = await startBenchApp(notifyProcessEnv('api', namespace, database.url), {
    cwd: resolve(dir),
  });
  await createUsers(base);
  const cleanup = async () => {
    await dropNatsNamespace(namespace);
    await database.drop();
  };
  return { name, url: `${base}/api/notifications`, child, cleanup };
}

const load = async (url: string, seconds: number) =>
  (
    await autocannon({
      url,
      connections: 100,
      duration: seconds,
      method: 'POST',
      headers: JSON_AS_SERVICE,
      requests: [{ setupRequest: (request: object) => ({ ...request, body: notificationBody() }) }],
    })
  ).requests.average;

const baselinePort = await freePort();
const targets: Target[] = [
  {
    name: 'baseline',
    url: `http://127.0.0.1:${baselinePort}/target`,
    child: await startBaseline(baselinePort, { kind: 'post' }),
  },
];
try {
  targets.push(await startCheckout('A', checkouts[0], 0), await startCheckout('B', checkouts[1], 1));
  for (const target of targets) await load(target.url, 3);
  const rates = new Map<string, number[]>(targets.map((target) => [target.name, []]));
  const of = (name: string) => rates.get(name) ?? [];
  for (let cycle = 1; cycle <= cycles; cycle++) {
    for (const target of cycle % 2 ? targets : [...targets].reverse())
      of(target.name).push(await load(target.url, duration));
    console.log(
      `cycle ${cycle}: ${targets.map((t) => `${t.name} ${of(t.name)[cycle - 1].toFixed(0)}`).join(', ')}`,
    );
  }
  const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;
  const per = (a: number[], b: number[]) => a.map((value, i) => value / b[i]);
  const list = (values: number[]) => values.map((v) => v.toFixed(3)).join(' ');
  for (const name of ['A', 'B']) {
    const ratios = per(of(name), of('baseline'));
    console.log(
      `${name} (${checkouts[name === 'A' ? 0 : 1]}): ratio to baseline ${list(ratios)}; mean ${mean(ratios).toFixed(3)}`,
    );
  }
  const change = per(of('B'), of('A'));
  console.log(`B/A: ${list(change)}; mean ${mean(change).toFixed(3)}`);
} finally {
  for (const target of targets) {
    await stopProcess(target.child);
    await target.cleanup?.();
  }
}
