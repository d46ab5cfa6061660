import { closeSync, openSync, readSync, statSync, writeFileSync } from 'node:fs';
import pg from 'pg';
import { BENCH_SERVICES, numberFlag, startBenchApp, stopProcess, textFlag } from './harness.ts';
import { runMixed } from './mixed-load.ts';
import { appEnv, databaseUrl, lotFile, prepareFixtures } from './scale-fixtures.ts';
import { HOT_PATHS } from './scale-paths.ts';

/**
 * `npm run bench -- plans --database=<seeded database> [--pg-log=/var/log/postgresql/postgresql-15-main.log]`
 *
 * The plan of every statement each hot path sends, as PostgreSQL ran it on a seeded database:
 * `auto_explain` (shipped with PostgreSQL) logs each statement's `EXPLAIN (ANALYZE, BUFFERS)` to
 * the server log while each hot path runs for a moment, with the real statements and parameters
 * of the running app (prepared statements included). Writes `src/<module>/plans.md` per module,
 * the reviewed snapshots, and prints every plan that reads a table sequentially.
 * Needs a superuser connection (it sets `session_preload_libraries` on that database for the run)
 * and read access to the server log.
 */
const database = textFlag('database');
const logPath = textFlag('pg-log') ?? '/var/log/postgresql/postgresql-15-main.log';
const seconds = numberFlag('duration', 1);
if (!database) {
  console.error('usage: npm run bench -- plans --database=<name> [--pg-log=<server log>] [--duration=1]');
  process.exit(2);
}

/** A scan that reads past this many rows and returns fewer than it reads is flagged. */
const LARGE_SCAN_ROWS = 10_000;

const MODULES: [RegExp, string][] = [
  [/\b(pastes|paste_contents|paste_users)\b/, 'paste'],
  [/\b(notifications|notification_\w+|notify_\w+)\b/, 'notify'],
  [/\bbooking_\w+/, 'booking'],
  [/\bparking_\w+/, 'parking'],
  [/\bpayments?\w*/, 'payments'],
];

interface Plan {
  path: string;
  module: string;
  query: string;
  plan: string;
}

const AUTO_EXPLAIN = {
  session_preload_libraries: 'auto_explain',
  'auto_explain.log_min_duration': '0',
  'auto_explain.log_analyze': 'on',
  'auto_explain.log_buffers': 'on',
  'auto_explain.log_timing': 'on',
  'auto_explain.log_format': 'text',
};

const url = databaseUrl(database);
const admin = new pg.Client({ connectionString: BENCH_SERVICES.postgres });
await admin.connect();
const setAll = async (on: boolean) => {
  for (const [name, value] of Object.entries(AUTO_EXPLAIN)) {
    await admin.query(
      on ? `alter database ${database} set ${name} = '${value}'` : `alter database ${database} reset ${name}`,
    );
  }
};
const plans: Plan[] = [];
const { child, base } = await startBenchApp({
  ...appEnv(url, `plans_${Date.now()}`, lotFile(database)),
  ROLE: 'api',
});
const pool = new pg.Pool({ connectionString: url, max: 2 });
try {
  const fixtures = await prepareFixtures(base, pool);
  await stopProcess(child);
  await setAll(true);
  for (const path of HOT_PATHS) {
    // An app per path, on new connections: a connection loads auto_explain when it opens.
    const app = await startBenchApp({
      ...appEnv(url, `plans_${Date.now()}`, lotFile(database)),
      ROLE: 'api',
    });
    const from = statSync(logPath).size;
    await runMixed({
      bases: [app.base],
      workloads: [
        { name: path.name, weight: 1, step: (send, context) => path.step(send, context, fixtures) },
      ],
      connections: 1,
      durationMs: seconds * 1000,
      accept: () => true,
    });
    await stopProcess(app.child);
    plans.push(...distinctPlans(readFrom(logPath, from), path.name));
  }
} finally {
  await setAll(false).catch(() => {});
  await admin.end();
  await pool.end();
  await stopProcess(child);
}
writeSnapshots(plans);

function readFrom(path: string, offset: number): string {
  const size = statSync(path).size;
  const buffer = Buffer.alloc(size - offset);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, buffer, 0, buffer.length, offset);
  } finally {
    closeSync(fd);
  }
  return buffer.toString('utf8');
}

/** auto_explain entries of the log text: each a `LOG:  duration: … plan:` line and its tab-indented lines. */
function distinctPlans(log: string, path: string): Plan[] {
  const found = new Map<string, Plan>();
  for (const entry of log.split(/\n(?=\d{4}-\d\d-\d\d )/)) {
    if (!/LOG: {2}duration: [\d.]+ ms {2}plan:/.test(entry)) continue;
    const lines = entry
      .split('\n')
      .slice(1)
      .map((line) => line.replace(/^\t/, ''));
    const start = lines.findIndex((line) => /\(cost=|\(actual/.test(line));
    const query = lines
      .slice(0, start)
      .join('\n')
      .replace(/^Query Text: /, '')
      .trim();
    // Migrations, health checks and the analyzer's own queries are not the hot path's.
    if (!query || /pg_catalog|^select 1$|^(begin|commit|rollback)/i.test(query)) continue;
    const module = MODULES.find(([pattern]) => pattern.test(query))?.[1] ?? 'platform';
    // One entry per statement shape: `in ($1, $2, …)` lists of any length are one statement.
    const shape = query.replace(/\(\$\d+(?:, \$\d+)+\)/g, '($…)');
    if (!found.has(shape))
      found.set(shape, { path, module, query, plan: lines.slice(start).join('\n').trimEnd() });
  }
  return [...found.values()];
}

function writeSnapshots(all: Plan[]): void {
  const modules = [...new Set(all.map((plan) => plan.module))];
  for (const module of modules) {
    const mine = all.filter((plan) => plan.module === module);
    const text = [
      `# Query plans of ${module}'s hot statements at scale`,
      '',
      `Captured by \`npm run bench -- plans --database=${database}\` on ${new Date().toISOString().slice(0, 10)}`,
      '(auto_explain: `EXPLAIN (ANALYZE, BUFFERS)` of each statement as the running app sent it). Review',
      'changes to this file like code: a new `Seq Scan` on a large table is a regression.',
      '',
      ...mine.flatMap((plan) => [
        `## ${plan.path}`,
        '',
        '```sql',
        plan.query,
        '```',
        '',
        '```',
        plan.plan,
        '```',
        '',
      ]),
    ].join('\n');
    const file = module === 'platform' ? 'src/platform/db/plans.md' : `src/${module}/plans.md`;
    writeFileSync(file, text);
    console.log(`${file}: ${mine.length} statements`);
  }
  for (const plan of all) {
    for (const scan of largeScans(plan.plan)) {
      console.log(`"${plan.path}" reads ${scan}: ${plan.query.replace(/\s+/g, ' ').slice(0, 160)}`);
    }
  }
}

/**
 * Scans that read many rows to return few (returned plus removed by their filter, times loops):
 * a catalogue of 5 cities or 18 templates is rightly read whole, a table that grows is not.
 */
function largeScans(plan: string): string[] {
  const lines = plan.split('\n');
  return lines.flatMap((line, index) => {
    const scan =
      /((?:Seq|Index|Index Only|Bitmap Heap) Scan)(?: using \w+)? on (\w+).*actual time=\S+ rows=(\d+) loops=(\d+)/.exec(
        line,
      );
    if (!scan) return [];
    const removed = Number(
      lines
        .slice(index + 1, index + 5)
        .map((next) => /Rows Removed by Filter: (\d+)/.exec(next)?.[1])
        .find(Boolean) ?? 0,
    );
    const [returned, loops] = [Number(scan[3]), Number(scan[4])];
    const read = (returned + removed) * loops;
    const wasteful = scan[1] === 'Seq Scan' ? read > returned * loops : removed > returned;
    return read > LARGE_SCAN_ROWS && wasteful
      ? [`${read} rows of ${scan[2]} (${scan[1]}) for ${returned * loops}`]
      : [];
  });
}
