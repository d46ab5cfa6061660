import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseEnv } from 'node:util';
import Fastify from 'fastify';
import { ConfigError, loadConfig } from './config.ts';

const DEPLOY = new URL('../../deploy/', import.meta.url);
const env = (file: string) =>
  parseEnv(readFileSync(new URL(`env/${file}`, DEPLOY), 'utf8')) as Record<string, string>;
/** What `npm run secrets` writes for a deployment (fresh each time). */
const generatedSecrets = () =>
  execFileSync(process.execPath, ['scripts/generate-secrets.ts'], {
    cwd: new URL('../../', import.meta.url),
    encoding: 'utf8',
  });
const secrets = parseEnv(generatedSecrets()) as Record<string, string>;

test('every instance file of deploy/env plus generated secrets is a valid production configuration', () => {
  const instances = readdirSync(new URL('env/', DEPLOY)).filter((file) => /-\d+\.env$/.test(file));
  assert.ok(instances.length >= 5, `instances: ${instances.join(', ')}`);
  const ports = new Set<number>();
  for (const file of instances) {
    const role = file.replace(/-\d+\.env$/, '');
    const config = loadConfig([], { ...env('common.env'), ...secrets, ...env(`${role}.env`), ...env(file) });
    assert.equal(config.role, role, file);
    assert.equal(config.development, false, `${file} runs in production mode`);
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
  assert.match(nginx, /^\s*gzip on;/m, 'text is compressed');
  assert.doesNotMatch(/gzip_types([^;]*);/.exec(nginx)?.[1] ?? '', /event-stream/, 'never SSE');
  assert.match(nginx, /proxy_buffering off;[^}]*gzip off;/, 'nor in the SSE location');
  assert.match(nginx, /X-Request-Id/, 'request ids pass through');
  assert.match(nginx, /location = \/metrics \{\s*return 404;/, '/metrics is not served to the public');
});

test('the systemd unit runs the pinned Node on src/main.ts and stops with SIGTERM', () => {
  const unit = readFileSync(new URL('systemd/four-services@.service', DEPLOY), 'utf8');
  assert.match(unit, /ExecStart=.*exec node_modules\/\.bin\/node src\/main\.ts' %i/);
  // What the unit's shell does with instance api-1, with systemd's $$ and %% escapes undone, and
  // the deployment's generated secrets file (never in the repository) in a temporary folder.
  const secretsFile = join(mkdtempSync(join(tmpdir(), 'secrets-')), 'secrets.env');
  writeFileSync(secretsFile, generatedSecrets());
  const script = /sh -c '([^']*)'/
    .exec(unit)![1]
    .replaceAll('$$', '$')
    .replaceAll('%%', '%')
    .replace('deploy/env/secrets.env', secretsFile);
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

test('the shipped placeholders are refused in production, naming the variable', () => {
  assert.throws(
    () => loadConfig([], { ...env('common.env'), ...env('secrets.env.example'), ...env('api.env') }),
    (error: Error) =>
      error instanceof ConfigError && /^APP_SECRET looks like a placeholder/.test(error.message),
  );
  assert.throws(
    () => loadConfig([], { ...env('common.env'), ...env('api.env') }),
    (error: Error) => error instanceof ConfigError && /^APP_SECRET must be set/.test(error.message),
  );
});

test('behind the shipped nginx, a spoofed X-Forwarded-For cannot change the client address', async () => {
  const nginx = readFileSync(new URL('nginx.conf', DEPLOY), 'utf8');
  assert.match(
    nginx,
    /proxy_set_header X-Forwarded-For \$remote_addr;/,
    'the edge overwrites X-Forwarded-For',
  );
  assert.doesNotMatch(nginx, /proxy_add_x_forwarded_for/);
  for (const file of readdirSync(new URL('env/', DEPLOY))) {
    assert.doesNotMatch(readFileSync(new URL(`env/${file}`, DEPLOY), 'utf8'), /^TRUST_PROXY=true/m, file);
  }
  const config = loadConfig([], { ...env('common.env'), ...secrets, ...env('api.env'), ...env('api-1.env') });
  const app = Fastify({ trustProxy: config.trustProxy });
  app.get('/ip', async (request) => ({ ip: request.ip }));
  const ip = async (remoteAddress: string, forwarded?: string) =>
    (
      await app.inject({
        url: '/ip',
        remoteAddress,
        headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded },
      })
    ).json().ip;
  // nginx (loopback) forwards what it saw; a client's own header would have been overwritten, and
  // even an appended one only moves the client's choice further from the end.
  assert.equal(await ip('127.0.0.1', '203.0.113.7'), '203.0.113.7');
  assert.equal(await ip('127.0.0.1', '6.6.6.6, 203.0.113.7'), '203.0.113.7');
  // Anyone else connecting directly is not believed.
  assert.equal(await ip('198.51.100.9', '6.6.6.6'), '198.51.100.9');
  await app.close();
});
