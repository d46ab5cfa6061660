import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createPaste } from '../../../test/support/paste.ts';
import { createTestApp, metricValue, type TestApp } from '../../../test/support/platform.ts';
import { FAILED_CREDENTIALS } from '../auth/index.ts';

/**
 * What Prometheus's own tools say about `/metrics` and the shipped alert rules
 * (`deploy/prometheus/alerts.yml`), and whether the rules and the Grafana dashboard
 * (`deploy/grafana/four-services.json`) read metrics the app serves. promtool is Debian's `prometheus` package; CI installs it and
 * sets REQUIRE_PROMTOOL=1, where its absence fails these tests instead of skipping them.
 */
const PROMTOOL = '/usr/bin/promtool';
const promtool = existsSync(PROMTOOL)
  ? false
  : process.env.REQUIRE_PROMTOOL === '1'
    ? false
    : `needs promtool (apt-get install prometheus), not at ${PROMTOOL}`;
const RULES = fileURLToPath(new URL('../../../deploy/prometheus/alerts.yml', import.meta.url));
const DASHBOARD = fileURLToPath(new URL('../../../deploy/grafana/four-services.json', import.meta.url));

let t: TestApp;
let exposition = '';

before(async () => {
  t = await createTestApp({ services: ['paste', 'notify', 'booking', 'parking'] });
  // Some traffic, so labelled series have samples: a create, reads, a 404, a problem.
  const { short_url } = await createPaste(t.app, { content: 'metrics' });
  await t.app.inject({ url: `/api/v1/paste/${short_url}` });
  await t.app.inject({ url: `/${short_url}/raw` });
  await t.app.inject({ url: '/api/v1/paste/nope0000' });
  await t.app.inject({ url: '/no/such/path' });
  exposition = (await t.app.inject({ url: '/metrics' })).body;
});
after(() => t.close());

/** `# TYPE name kind` lines: every family the app serves. */
function families(text: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const [, name, kind] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) found.set(name, kind);
  return found;
}

test('a counter ends in _total and nothing else does (the rule promtool enforces)', () => {
  const served = families(exposition);
  assert.ok(served.size > 20, `only ${served.size} families`);
  const wrong = [...served].filter(([name, kind]) => (kind === 'counter') !== name.endsWith('_total'));
  assert.deepEqual(wrong, []);
});

test('the shared cache, rate-limit refusals, open connections and streams, and the build are measured', async () => {
  // The create put the paste in the shared cache; the first read, missing this process's own
  // cache, found it there.
  assert.ok((await metricValue(t.app, 'cache_lookups_total', 'cache="paste",outcome="hit"')) >= 1);
  // Wrong credentials are refused by a limit after 30 tries from one address.
  for (let i = 0; i <= FAILED_CREDENTIALS.points; i++) {
    await t.app.inject({ url: '/api/v1/users/me/pastes', headers: { authorization: `Bearer pk_wrong${i}` } });
  }
  assert.ok((await metricValue(t.app, 'rate_limit_refusals_total', 'policy="auth.failures"')) >= 1);
  assert.equal(await metricValue(t.app, 'sse_open_streams'), 0);
  assert.ok((await metricValue(t.app, 'http_open_connections')) >= 0);
  const info = families(exposition).get('app_info');
  assert.equal(info, 'gauge');
  assert.match(
    exposition,
    /^app_info\{version="\d+\.\d+\.\d+",node="24\.[\d.]+",role="all",services="booking,notify,parking,paste"\} 1$/m,
  );
});

test('promtool check metrics: clean', { skip: promtool }, () => {
  const run = spawnSync(PROMTOOL, ['check', 'metrics'], { input: exposition, encoding: 'utf8' });
  assert.equal(run.status, 0, `${run.stdout}${run.stderr}`);
  assert.equal(`${run.stdout}${run.stderr}`.trim(), '');
});

test('promtool check rules: the shipped alert rules parse and pass', { skip: promtool }, () => {
  const run = spawnSync(PROMTOOL, ['check', 'rules', RULES], { encoding: 'utf8' });
  assert.equal(run.status, 0, `${run.stdout}${run.stderr}`);
  assert.match(run.stdout, /SUCCESS: \d+ rules found/);
});

const FUNCTIONS = new Set(['histogram_quantile', 'max_over_time', 'min_over_time', 'label_values']);

/** The metric families an expression reads (`_bucket`, `_count` and `_sum` are their histogram's). */
function metricsIn(expr: string): string[] {
  const text = expr
    .replace(/"[^"]*"/g, '')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '');
  return [...text.matchAll(/\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b/g)]
    .map(([name]) => name)
    .filter((name) => !FUNCTIONS.has(name))
    .map((name) => name.replace(/_(bucket|count|sum)$/, ''));
}

test('every metric an alert rule names is one the app serves', () => {
  const served = families(exposition);
  const named = new Set(alertExpressions(readFileSync(RULES, 'utf8')).flatMap(metricsIn));
  assert.ok(named.size >= 7, [...named].join());
  assert.deepEqual(
    [...named].filter((name) => !served.has(name)),
    [],
  );
});

test('the Grafana dashboard queries only metrics the app serves, in every panel', () => {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
    uid: string;
    panels: { type: string; title: string; targets?: { expr: string }[] }[];
    templating: { list: { query: string | object }[] };
  };
  assert.equal(dashboard.uid, 'four-services');
  const graphs = dashboard.panels.filter((panel) => panel.type !== 'row');
  assert.ok(graphs.length >= 12, `${graphs.length} panels`);
  const served = families(exposition);
  const expressions = [
    ...graphs.flatMap((panel) => {
      assert.ok(panel.targets?.length, `${panel.title} has a query`);
      return panel.targets.map((target) => target.expr);
    }),
    ...dashboard.templating.list.flatMap((variable) =>
      typeof variable.query === 'string' ? [variable.query] : [],
    ),
  ];
  const unknown = expressions.flatMap(metricsIn).filter((name) => !served.has(name));
  assert.deepEqual([...new Set(unknown)], []);
  // Golden signals, queues, jobs and business metrics all have a panel.
  for (const family of [
    'http_request_duration_seconds',
    'queue_depth',
    'job_runs_total',
    'notify_deliveries_total',
  ]) {
    assert.ok(
      expressions.some((expr) => metricsIn(expr).includes(family)),
      family,
    );
  }
});

/** Each rule's `expr`, on one line or as a `|` block (the lines indented deeper than the key). */
function alertExpressions(yaml: string): string[] {
  const expressions: string[] = [];
  const lines = yaml.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const match = /^(\s*)expr: (.*)$/.exec(lines[i]);
    if (!match) continue;
    if (match[2] !== '|') {
      expressions.push(match[2]);
      continue;
    }
    const block: string[] = [];
    for (let j = i + 1; j < lines.length && lines[j].search(/\S/) > match[1].length; j++)
      block.push(lines[j]);
    expressions.push(block.join('\n'));
  }
  return expressions;
}
