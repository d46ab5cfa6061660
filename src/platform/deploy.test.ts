import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parseEnv } from 'node:util';
import { loadConfig } from './config.ts';

const DEPLOY = new URL('../../deploy/', import.meta.url);
const env = (file: string) =>
  parseEnv(readFileSync(new URL(`env/${file}`, DEPLOY), 'utf8')) as Record<string, string>;

test('every instance file of deploy/env is a valid configuration on the shared servers', () => {
  const instances = readdirSync(new URL('env/', DEPLOY)).filter((file) => /-\d+\.env$/.test(file));
  assert.ok(instances.length >= 5, `instances: ${instances.join(', ')}`);
  const ports = new Set<number>();
  for (const file of instances) {
    const role = file.replace(/-\d+\.env$/, '');
    const config = loadConfig([], { ...env('common.env'), ...env(`${role}.env`), ...env(file) });
    assert.equal(config.role, role, file);
    assert.ok(config.databaseUrl && config.redisUrl && config.natsUrl, `${file} uses all three servers`);
    assert.ok(!ports.has(config.port), `${file}: port ${config.port} used twice`);
    ports.add(config.port);
  }
});

test('nginx sends traffic to exactly the API instances', () => {
  const nginx = readFileSync(new URL('nginx.conf', DEPLOY), 'utf8');
  const upstream = /upstream four_services_api \{([^}]*)\}/.exec(nginx)?.[1] ?? '';
  const proxied = [...upstream.matchAll(/server 127\.0\.0\.1:(\d+)/g)].map((m) => Number(m[1])).sort();
  const apis = readdirSync(new URL('env/', DEPLOY))
    .filter((file) => /^api-\d+\.env$/.test(file))
    .map((file) => Number(env(file).PORT))
    .sort();
  assert.deepEqual(proxied, apis);
  assert.match(nginx, /proxy_buffering off/, 'SSE is not buffered');
  assert.match(nginx, /X-Request-Id/, 'request ids pass through');
});

test('the systemd unit runs the pinned Node on src/main.ts and stops with SIGTERM', () => {
  const unit = readFileSync(new URL('systemd/four-services@.service', DEPLOY), 'utf8');
  assert.match(unit, /ExecStart=.*exec node_modules\/\.bin\/node src\/main\.ts' %i/);
  // What the unit's shell does with instance api-1, with systemd's $$ and %% escapes undone.
  const script = /sh -c '([^']*)'/.exec(unit)![1].replaceAll('$$', '$').replaceAll('%%', '%');
  // Run the unit's shell line for api-2, printing the environment instead of starting Node.
  const shown = execFileSync('/bin/sh', ['-c', script.replace(/exec node_modules.*$/, 'env'), 'api-2'], {
    cwd: new URL('../../', import.meta.url),
    env: { PATH: process.env.PATH },
    encoding: 'utf8',
  });
  const config = loadConfig([], parseEnv(shown) as Record<string, string>);
  assert.equal(config.role, 'api');
  assert.equal(config.port, 3002);
  assert.equal(config.namespace, 'prod');
  assert.match(unit, /KillSignal=SIGTERM/);
  const stop = Number(/TimeoutStopSec=(\d+)/.exec(unit)?.[1]);
  const shutdownMs = Number(env('common.env').SHUTDOWN_TIMEOUT_MS);
  assert.ok(stop * 1000 > shutdownMs, 'systemd waits longer than the app drains');
});
