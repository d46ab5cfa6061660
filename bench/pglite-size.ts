import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { numberFlag, startBenchApp, stopProcess } from './harness.ts';
import { runMixed, type Send } from './mixed-load.ts';
import { type OperationSummary, summarise } from './mixed-report.ts';
import { AS_SERVICE, notificationRequest, userId } from './notify-common.ts';

/**
 * `npm run bench -- pglite-size [--step=100000] [--max=600000] [--duration=3]`
 *
 * The embedded default (`npm start`: PGlite in `DATA_DIR`) as its data grows: paste reads (each
 * paste once, so the database answers, not the cache), paste creates and notification sends,
 * p50/p99 at each size, then `step` more pastes through the API, until `max` or until a p99 has
 * doubled from the first size's. What the README's "comfortable size" of the embedded database is.
 */
const step = numberFlag('step', 100_000);
const max = numberFlag('max', 600_000);
const durationMs = numberFlag('duration', 3) * 1000;
const CONNECTIONS = 16;
const BODY = 'x'.repeat(1500);

const dataDir = mkdtempSync(join(tmpdir(), 'pglite-size-'));
const { child, base } = await startBenchApp({
  SERVICES: 'paste,notify',
  DATA_DIR: dataDir,
  PASTE_RATE_ANON: '100000000/600',
  NOTIFY_LIMIT_EMAIL_PER_DAY: '1000000',
});
const created: string[] = [];
let readNext = 0;

const create = async (send: Send) => {
  const answer = await send('paste create', 'POST', '/api/v1/paste', {
    content: `${created.length} ${BODY}`,
  });
  if (answer.status === 201) created.push(JSON.parse(answer.body).short_url);
};
const workloads = [
  {
    name: 'paste read',
    weight: 1,
    step: async (send: Send) => {
      const id = created[readNext++ % created.length];
      await send('paste read (uncached)', 'GET', `/api/v1/paste/${id}`);
    },
  },
  { name: 'paste create', weight: 1, step: create },
  {
    name: 'notification send',
    weight: 1,
    step: async (send: Send) =>
      void (await send(
        'notification send',
        'POST',
        '/api/notifications',
        notificationRequest(userId(readNext % 1000)),
        AS_SERVICE,
      )),
  },
];

const rows: { pastes: number; bytes: number; operations: OperationSummary[] }[] = [];
try {
  await grow(1000);
  while (true) {
    // Reads walk the pastes made since the last size, newest first, each once.
    readNext = Math.max(0, created.length - step);
    const recorder = await runMixed({
      bases: [base],
      workloads,
      connections: CONNECTIONS,
      durationMs,
      accept: (_, status) => status < 400,
    });
    const operations = summarise(recorder, durationMs);
    const bytes = Number(execFileSync('du', ['-sb', dataDir]).toString().split('\t')[0]);
    rows.push({ pastes: created.length, bytes, operations });
    console.log(
      `${created.length} pastes, ${(bytes / 1024 / 1024).toFixed(0)} MiB: ${operations
        .map((o) => `${o.operation} p50 ${o.p50Ms.toFixed(1)} p99 ${o.p99Ms.toFixed(1)} ms`)
        .join('; ')}`,
    );
    const doubled = operations.some((o) => {
      const first = rows[0].operations.find((f) => f.operation === o.operation);
      return first !== undefined && o.p99Ms >= 2 * first.p99Ms;
    });
    if (doubled || created.length >= max) break;
    await grow(step);
  }
} finally {
  await stopProcess(child);
  rmSync(dataDir, { recursive: true, force: true });
}

async function grow(count: number): Promise<void> {
  const target = created.length + count;
  const worker = async () => {
    while (created.length < target) {
      const response = await fetch(`${base}/api/v1/paste`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ content: `${created.length} ${BODY}` }),
      });
      if (response.status !== 201) throw new Error(`create: ${response.status} ${await response.text()}`);
      created.push(((await response.json()) as { short_url: string }).short_url);
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
}
