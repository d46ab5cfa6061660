import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseEnv } from 'node:util';
import Fastify from 'fastify';
import { secretWeakness } from './auth/production.ts';
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

/**
 * The subset of YAML deploy/compose.yaml is written in: `services:`, each service's keys, its
 * `env_file: [a, b]` list and its `environment:` map. Enough to check the file against the
 * configuration without a YAML parser among the dependencies.
 */
function composeServices(text: string) {
  const services = new Map<
    string,
    { keys: Map<string, string>; envFiles: string[]; environment: Record<string, string> }
  >();
  let section = '';
  let current: ReturnType<typeof services.get>;
  let inEnvironment = false;
  for (const line of text.split('\n')) {
    if (/^\s*(#|$)/.test(line)) continue;
    const top = /^(\w[\w-]*):/.exec(line);
    if (top) {
      section = top[1];
      continue;
    }
    if (section !== 'services') continue;
    const service = /^ {2}([\w-]+):\s*$/.exec(line);
    if (service) {
      current = { keys: new Map(), envFiles: [], environment: {} };
      services.set(service[1], current);
      continue;
    }
    const key = /^ {4}([\w-]+):\s*(.*)$/.exec(line);
    if (key && current) {
      current.keys.set(key[1], key[2]);
      inEnvironment = key[1] === 'environment';
      if (key[1] === 'env_file')
        current.envFiles = key[2]
          .replace(/[[\]]/g, '')
          .split(',')
          .map((f) => f.trim());
      continue;
    }
    const variable = /^ {6}(\w+):\s*"?([^"]*)"?$/.exec(line);
    if (variable && current && inEnvironment) current.environment[variable[1]] = variable[2];
  }
  return services;
}

test('compose: every app service is a valid production configuration that reaches the compose servers', () => {
  const services = composeServices(readFileSync(new URL('compose.yaml', DEPLOY), 'utf8'));
  for (const server of ['postgres', 'redis', 'nats']) assert.ok(services.has(server), server);
  const apps = [...services].filter(([, service]) => service.keys.has('build'));
  assert.deepEqual(
    apps.map(([name]) => name),
    ['api-1', 'api-2', 'worker-1', 'worker-2', 'scheduler-1'],
  );
  const ports = new Set<number>();
  for (const [name, service] of apps) {
    const files = service.envFiles.map((file) =>
      file === 'env/secrets.env' ? secrets : env(file.replace(/^env\//, '')),
    );
    assert.ok(service.envFiles.includes('env/secrets.env'), `${name} loads the generated secrets`);
    const config = loadConfig([], Object.assign({}, ...files, service.environment));
    assert.equal(config.role, name.replace(/-\d+$/, ''), name);
    assert.equal(config.development, false, `${name} runs in production mode`);
    assert.equal(new URL(config.databaseUrl!).hostname, 'postgres', name);
    assert.equal(new URL(config.redisUrl!).hostname, 'redis', name);
    assert.equal(new URL(config.natsUrl!).hostname, 'nats', name);
    assert.equal(config.host, '0.0.0.0', `${name} listens beyond the container's loopback`);
    assert.ok(!ports.has(config.port), `${name}: port ${config.port} used twice`);
    ports.add(config.port);
    const published = /"127\.0\.0\.1:(\d+):(\d+)"/.exec(service.keys.get('ports') ?? '');
    if (published) assert.equal(Number(published[2]), config.port, `${name} publishes its own port`);
  }
});

test('Dockerfile: multi-stage, production dependencies only, Node 24 slim, non-root, runs src/main.ts', () => {
  const dockerfile = readFileSync(new URL('Dockerfile', DEPLOY), 'utf8');
  const stages = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
  assert.ok(stages.length >= 2, 'a build stage and a runtime stage');
  for (const image of stages) assert.match(image, /^node:24-[\w-]*slim\b/);
  assert.match(dockerfile, /npm ci --omit=dev/);
  assert.match(dockerfile, /^USER node$/m);
  assert.match(dockerfile, /^CMD \["node", "src\/main\.ts"\]$/m);
  const engines = JSON.parse(readFileSync(new URL('../package.json', DEPLOY), 'utf8')).engines.node;
  assert.match(engines, /^>=24 /, 'the image follows the Node the project runs on');
  // Everything the image copies exists, and the ignore file keeps secrets and tests out.
  for (const [, source] of dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)) {
    for (const path of source.split(' ')) assert.ok(existsSync(new URL(`../${path}`, DEPLOY)), path);
  }
  const ignored = readFileSync(new URL('../.dockerignore', DEPLOY), 'utf8');
  for (const entry of ['node_modules', '.git', 'deploy/env/secrets.env', '**/*.test.ts']) {
    assert.ok(ignored.split('\n').includes(entry), `.dockerignore: ${entry}`);
  }
});

test('a random key that spells a placeholder word by chance is refused, so `npm run secrets` draws again', () => {
  const spelled = `Kq3TODOz${randomBytes(26).toString('base64url')}`;
  assert.equal(secretWeakness(spelled), 'looks like a placeholder');
  for (const line of generatedSecrets()
    .split('\n')
    .filter((text) => /^[A-Z_]+=/.test(text))) {
    const value = line.slice(line.indexOf('=') + 1).replace(/^"|"$/g, '');
    for (const key of value.split(';').map((entry) => entry.trim().split(' ').at(-1) ?? entry)) {
      assert.equal(secretWeakness(key), undefined, line);
    }
  }
});
