import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import autocannon from 'autocannon';
import pg from 'pg';

export interface Figures {
  label: string;
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  non2xx: number;
  total: number;
}

export const PIN = process.env.BENCH_PINNED === '1';

/** The local PostgreSQL, Redis and NATS the benchmarks run the app on. */
export const BENCH_SERVICES = {
  postgres: process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/postgres',
  redis: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
  nats: process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222',
};

/**
 * Deletes the JetStream streams and key-value buckets of a run's namespace (the app names them
 * `{NAMESPACE}_Q_…`, `{NAMESPACE}_DLQ_…` and `KV_{namespace}_…`, platform/queue/jetstream.ts).
 * Without it every run left its queues on the shared NATS server: notify-accept runs, which
 * start no workers, had left 5.5 M messages (1.4 GB) there in two days, and a NATS server that
 * size is slower for every later run.
 */
export async function dropNatsNamespace(namespace: string): Promise<void> {
  const nc = await connect({ servers: BENCH_SERVICES.nats, name: `${namespace}-cleanup` });
  try {
    const jsm = await jetstreamManager(nc);
    const prefixes = [`${namespace.toUpperCase()}_`, `KV_${namespace}_`];
    for await (const name of jsm.streams.names()) {
      if (prefixes.some((prefix) => name.startsWith(prefix))) await jsm.streams.delete(name);
    }
  } finally {
    await nc.close();
  }
}

/** `--key=value` from the command line (everything after the first `=`), or undefined. */
export function textFlag(key: string): string | undefined {
  return process.argv.find((arg) => arg.startsWith(`--${key}=`))?.slice(key.length + 3);
}

/** `--key=N` from the command line, or `fallback`. */
export function numberFlag(key: string, fallback: number): number {
  const found = textFlag(key);
  return found === undefined ? fallback : Number(found);
}

/** Re-runs this process on core 1 (servers go on core 0); returns false when already pinned or impossible. */
export function pinSelf(): boolean {
  if (PIN || process.env.BENCH_NO_PIN === '1' || process.platform !== 'linux') return false;
  const probe = spawnSync('taskset', ['-c', '1', 'true']);
  if (probe.status !== 0) return false;
  const result = spawnSync('taskset', ['-c', '1', process.execPath, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, BENCH_PINNED: '1' },
  });
  process.exit(result.status ?? 1);
}

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  return port;
}

/** Starts a child process and resolves once `readyUrl` answers 200. */
/** The bare Fastify baseline of a scenario, on its own port. */
export function startBaseline(
  port: number,
  baseline: { kind: string; bodyBytes?: number },
): Promise<ChildProcess> {
  return startProcess(
    ['bench/baseline.ts'],
    {
      PORT: String(port),
      BASELINE_KIND: baseline.kind,
      BASELINE_BODY_BYTES: String(baseline.bodyBytes ?? 0),
    },
    `http://127.0.0.1:${port}/ready`,
  );
}

export async function startProcess(
  args: string[],
  env: Record<string, string | undefined>,
  readyUrl: string,
  timeoutMs = 90_000,
  cwd?: string,
): Promise<ChildProcess> {
  // Servers on core 0, the load generator (this process) on core 1, when taskset exists, so
  // the two do not trade places on the CPUs between runs (it halves the run-to-run spread).
  const pinned = PIN
    ? (['taskset', ['-c', '0', process.execPath, ...args]] as const)
    : ([process.execPath, args] as const);
  const child = spawn(pinned[0], [...pinned[1]], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`process did not start: ${output.slice(-2000)}`)),
      timeoutMs,
    );
    const collect = (chunk: Buffer) => {
      output += chunk;
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    const poll = async () => {
      while (child.exitCode === null) {
        const ok = await fetch(readyUrl).then(
          (r) => r.ok,
          () => false,
        );
        if (ok) {
          clearTimeout(timer);
          return resolve();
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    void poll();
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`process exited with ${code}: ${output.slice(-2000)}`));
    });
  });
  child.removeAllListeners('exit');
  child.stdout?.resume();
  child.stderr?.resume();
  return child;
}

/**
 * The app (`node src/main.ts`) on a free port with what every benchmark gives it (local address,
 * warnings-only log, no backends until `env` names them); `env` adds or overrides settings.
 * `profile`: with BENCH_PROFILE_DIR set, the process writes a CPU profile there when it stops.
 * `cwd`: another checkout of the code to run (default: this one).
 */
export async function startBenchApp(
  env: Record<string, string>,
  options: { profile?: boolean; cwd?: string } = {},
): Promise<{ child: ChildProcess; base: string }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const profileDir = options.profile ? process.env.BENCH_PROFILE_DIR : undefined;
  const child = await startProcess(
    ['src/main.ts'],
    {
      PORT: String(port),
      HOST: '127.0.0.1',
      BASE_URL: base,
      LOG_LEVEL: 'warn',
      DATA_DIR: 'memory://',
      DATABASE_URL: '',
      REDIS_URL: '',
      NATS_URL: '',
      ...env,
      ...(profileDir ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profileDir}` } : {}),
    },
    `${base}/health/live`,
    90_000,
    options.cwd,
  );
  return { child, base };
}

export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await once(child, 'exit');
  clearTimeout(timer);
}

export type LoadOptions = Omit<autocannon.Options, 'url'> & { url: string };

/**
 * `seconds` of unmeasured load on a target, before a measured one. A process left idle while
 * other targets were loaded has shrunk its young generation, and its first second under load
 * spends several times the steady state's garbage collection per request; a round measures the
 * steady state of a running service.
 */
export async function settle(options: LoadOptions, seconds: number): Promise<void> {
  if (seconds > 0) await load('settle', { ...options, duration: seconds });
}

export async function load(label: string, options: LoadOptions): Promise<Figures> {
  const result = await autocannon({ ...options });
  return {
    label,
    requestsPerSec: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    total: result.requests.total,
  };
}

export function mean(values: number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

export function printTable(rows: Figures[]): void {
  const header = ['run', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'non-2xx', 'requests'];
  const lines = rows.map((r) => [
    r.label,
    r.requestsPerSec.toFixed(0),
    r.p50Ms.toFixed(1),
    r.p99Ms.toFixed(1),
    String(r.errors),
    String(r.non2xx),
    String(r.total),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmt = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join('  ');
  console.log(fmt(header));
  for (const line of lines) console.log(fmt(line));
}

/** Runs one statement on a connection of its own (the statement may not run in a transaction). */
async function runAlone(connectionString: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** A throwaway PostgreSQL database for one benchmark run. */
export async function createBenchDatabase(
  serverUrl: string,
): Promise<{ url: string; analyze(): Promise<void>; drop(): Promise<void> }> {
  const name = `bench_${Date.now()}_${process.pid}`;
  await runAlone(serverUrl, `create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    /**
     * What autovacuum does on a PostgreSQL configured as shipped (ANALYZE once 10 % of a table has
     * changed), which this machine's runs without: statistics for the tables a warm-up filled, so
     * every pooled connection plans its prepared statements again for tables of their size
     * (bench/README.md, "stale generic plans").
     */
    analyze: () => runAlone(url.toString(), 'analyze'),
    drop: () => runAlone(serverUrl, `drop database if exists ${name} with (force)`),
  };
}

/** CPU time (user + system) a process has used so far, in ms (clock ticks of 10 ms); 0 once it has exited. Linux. */
export function processCpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/**
 * The whole machine's CPU time (all cores, ms) and how much of it was idle, from /proc/stat: with
 * two samples, busy / (busy + idle) says whether a run was bound by CPU or by waiting. Linux.
 */
export function machineCpuMs(): { busy: number; idle: number } {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal
    const idle = fields[3] + fields[4];
    const busy = fields.slice(0, 8).reduce((a, b) => a + b, 0) - idle;
    return { busy: busy * 10, idle: idle * 10 };
  } catch {
    return { busy: 0, idle: 0 };
  }
}

/** Processes by command name (e.g. the shared NATS and Redis servers), from /proc. Linux. */
export function pidsOf(command: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === command) pids.push(Number(entry));
    } catch {}
  }
  return pids;
}
