import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { realServices } from '../support/platform.ts';

/**
 * The fault suite's tools: a load generator that records every answer, checks of what an
 * answer to a request hit by a fault may be, and the faults themselves on this machine's
 * PostgreSQL, Redis and NATS. It runs on its own (`npm run test:faults`), after the main
 * suite, because restarting Redis or NATS would break tests running beside it.
 */

export function faultSkipReason(): string | false {
  if (!realServices.databaseUrl || !realServices.redisUrl || !realServices.natsUrl)
    return 'the fault suite needs TEST_DATABASE_URL, REDIS_URL and NATS_URL';
  return false;
}

export interface Answer {
  status: number | 'network';
  retryAfter: string | null;
  contentType: string | null;
  body: string;
  /** What the request was about (e.g. the paste content), to check it afterwards. */
  sent: string;
}

type Request = (sent: string) => Promise<Response>;

/** `concurrency` loops sending requests until stopped; every answer is kept. */
export function startLoad(
  request: Request,
  options: { concurrency: number; tag: string; make?: (counter: number) => string },
) {
  const answers: Answer[] = [];
  let running = true;
  let counter = 0;
  const loop = async () => {
    while (running) {
      const n = counter++;
      const sent = options.make?.(n) ?? `${options.tag} ${n} ${Math.random().toString(36).slice(2)}`;
      try {
        const response = await request(sent);
        answers.push({
          status: response.status,
          retryAfter: response.headers.get('retry-after'),
          contentType: response.headers.get('content-type'),
          body: await response.text(),
          sent,
        });
      } catch {
        answers.push({ status: 'network', retryAfter: null, contentType: null, body: '', sent });
        await sleep(50);
      }
    }
  };
  const loops = Array.from({ length: options.concurrency }, loop);
  return {
    answers,
    async stop() {
      running = false;
      await Promise.all(loops);
      return answers;
    },
  };
}

/** Succeeded, or refused with a 503 problem+json that says when to retry — never a 500. */
export function assertHonest(answers: Answer[], options: { allowNetworkErrors?: boolean } = {}) {
  const bad = answers.filter((answer) => {
    if (answer.status === 'network') return !options.allowNetworkErrors;
    if (answer.status < 300) return false;
    if (answer.status !== 503) return true;
    return !answer.retryAfter || !answer.contentType?.startsWith('application/problem+json');
  });
  assert.deepEqual(
    bad.slice(0, 5).map(({ status, body }) => ({ status, body: body.slice(0, 300) })),
    [],
    `${bad.length} of ${answers.length} answers were neither a success nor a 503 with Retry-After`,
  );
  for (const answer of answers)
    assert.doesNotMatch(answer.body, /\bat .+\.ts:\d+|node:internal/, 'a stack trace leaked');
}

export function tally(answers: Answer[]) {
  const counts: Record<string, number> = {};
  for (const answer of answers) counts[answer.status] = (counts[answer.status] ?? 0) + 1;
  return counts;
}

/** Polls `probe` until it succeeds: the system must come back on its own. */
export async function waitForRecovery(probe: () => Promise<boolean>, withinMs = 20_000) {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (await probe().catch(() => false)) return;
    await sleep(200);
  }
  assert.fail(`the system did not recover within ${withinMs} ms`);
}

export async function withPg<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: realServices.databaseUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Terminates the backends of one application (PGAPPNAME of the server under test). */
export function terminateBackends(applicationName: string): Promise<number> {
  return withPg(async (client) => {
    const result = await client.query(
      'select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1',
      [applicationName],
    );
    return result.rowCount ?? 0;
  });
}

/**
 * Restarts the local Redis with the settings it runs with now. It keeps nothing on disk here,
 * so a restart loses every key: caches and rate-limit counters start empty.
 */
export async function restartRedis(downMs: number) {
  const cli = (...args: string[]) => execFileSync('redis-cli', args, { encoding: 'utf8' }).trim();
  const setting = (name: string) => cli('config', 'get', name).split('\n')[1] ?? '';
  const args = [
    '--bind',
    ...setting('bind').split(' '),
    '--port',
    setting('port'),
    '--dir',
    setting('dir'),
    '--save',
    setting('save'),
    '--appendonly',
    setting('appendonly'),
    '--daemonize',
    'yes',
  ];
  try {
    cli('shutdown', 'nosave');
  } catch {
    // redis-cli reports the dropped connection of a successful shutdown as an error.
  }
  await sleep(downMs);
  execFileSync('redis-server', args);
  await waitForRecovery(async () => cli('ping') === 'PONG', 10_000);
}

/** Stops the local NATS server and starts it again with the same command line (JetStream keeps its files). */
export async function restartNats(downMs: number) {
  const pid = execFileSync('pgrep', ['-x', 'nats-server'], { encoding: 'utf8' }).trim().split('\n')[0];
  const commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  process.kill(Number(pid), 'SIGTERM');
  while (processAlive(Number(pid))) await sleep(50);
  await sleep(downMs);
  const [command, ...args] = commandLine;
  spawn(command, args, { detached: true, stdio: 'ignore' }).unref();
  const port = Number(new URL(realServices.natsUrl ?? 'nats://127.0.0.1:4222').port || 4222);
  await waitForRecovery(() => tcpOpen(port), 10_000);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function tcpOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.end();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

/** The server's error log lines, shortened to what tells the cause (for a failing fault test). */
export function serverErrors(output: string): string {
  return output
    .split('\n')
    .filter((line) => line.includes('"level":50') || line.includes('"level":60') || !line.startsWith('{'))
    .map((line) => {
      try {
        const entry = JSON.parse(line) as {
          msg?: string;
          err?: { type?: string; message?: string; code?: string };
        };
        return `${entry.msg}: ${entry.err?.type} ${entry.err?.code ?? ''} ${entry.err?.message ?? ''}`;
      } catch {
        return line;
      }
    })
    .filter(Boolean)
    .join('\n')
    .slice(-4000);
}
