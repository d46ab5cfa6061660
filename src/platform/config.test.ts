import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { generateSecret } from './auth/production.ts';
import { ConfigError, loadConfig } from './config.ts';

test('defaults start every service, every role, on embedded adapters', () => {
  const config = loadConfig([], {});
  assert.equal(config.port, 3000);
  assert.deepEqual(config.services, ['paste', 'notify', 'booking', 'parking']);
  assert.equal(config.role, 'all');
  assert.equal(config.databaseUrl, undefined);
  assert.equal(config.redisUrl, undefined);
  assert.equal(config.natsUrl, undefined);
  assert.equal(config.baseUrl, 'http://localhost:3000');
  assert.deepEqual([config.databasePoolSize, config.databasePoolWaitMs], [20, 5000]);
});

test('flags win over the environment', () => {
  const config = loadConfig(['--services=paste,notify', '--role=worker', '--port=8080'], {
    PORT: '9000',
    ROLE: 'api',
  });
  assert.deepEqual(config.services, ['paste', 'notify']);
  assert.equal(config.role, 'worker');
  assert.equal(config.port, 8080);
  assert.equal(config.baseUrl, 'http://localhost:8080');
});

test('the payment webhook secret is its own setting, derived from APP_SECRET when unset', () => {
  const derived = loadConfig([], { APP_SECRET: 'a'.repeat(32) });
  assert.notEqual(derived.paymentWebhookSecret, derived.secret);
  assert.equal(
    derived.paymentWebhookSecret,
    loadConfig([], { APP_SECRET: 'a'.repeat(32) }).paymentWebhookSecret,
  );
  assert.notEqual(
    derived.paymentWebhookSecret,
    loadConfig([], { APP_SECRET: 'b'.repeat(32) }).paymentWebhookSecret,
  );
  const given = loadConfig([], { PAYMENT_WEBHOOK_SECRET: 'whsec_0123456789abcdef' });
  assert.equal(given.paymentWebhookSecret, 'whsec_0123456789abcdef');
  assert.equal(given.paymentTimeoutMs, 10_000);
});

test('each bad value names its variable', () => {
  const cases: [string[], Record<string, string>, RegExp][] = [
    [[], { PORT: '70000' }, /^PORT must be an integer/],
    [[], { PORT: '3e3' }, /^PORT/],
    [['--services=paste,blog'], {}, /^SERVICES must be one of/],
    [['--role=boss'], {}, /^ROLE must be one of/],
    [[], { DATABASE_URL: 'mysql://x' }, /^DATABASE_URL must use postgres/],
    [[], { REDIS_URL: 'not a url' }, /^REDIS_URL must be a URL/],
    [[], { NATS_URL: 'http://x' }, /^NATS_URL must use nats/],
    [[], { BASE_URL: '/relative' }, /^BASE_URL must be an absolute URL/],
    [[], { APP_SECRET: 'short' }, /^APP_SECRET must be at least 16/],
    [['oops'], {}, /unknown argument "oops"/],
    [[], { PAYMENT_TIMEOUT_MS: '0' }, /^PAYMENT_TIMEOUT_MS must be an integer/],
    [[], { PAYMENT_WEBHOOK_SECRET: 'short' }, /^PAYMENT_WEBHOOK_SECRET must be at least 16/],
    [[], { DATABASE_POOL_SIZE: '0' }, /^DATABASE_POOL_SIZE must be an integer/],
    [[], { DATABASE_POOL_WAIT_MS: 'soon' }, /^DATABASE_POOL_WAIT_MS must be an integer/],
  ];
  for (const [argv, env, message] of cases) {
    assert.throws(
      () => loadConfig(argv, env),
      (error: Error) => error instanceof ConfigError && message.test(error.message),
    );
  }
});

test('npm start with a bad value exits non-zero with one clear line', () => {
  const result = spawnSync(process.execPath, ['src/main.ts'], {
    env: { ...process.env, PORT: 'abc', DATABASE_URL: '' },
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(result.status, 2);
  assert.equal(
    result.stderr.trim(),
    'configuration error: PORT must be an integer from 0 to 65535, got "abc"',
  );
});

test('TEST_CLOCK is off by default and refused in production', () => {
  assert.equal(loadConfig([], {}).testClock, false);
  assert.equal(loadConfig([], { TEST_CLOCK: '1' }).testClock, true);
  assert.throws(() => loadConfig([], { TEST_CLOCK: '1', NODE_ENV: 'production' }), ConfigError);
});

test('modules read their own settings from config.env, the environment the config came from', () => {
  const config = loadConfig([], { PARKING_LOT_CONFIG: './lot.json' });
  assert.equal(config.env.PARKING_LOT_CONFIG, './lot.json');
  assert.equal(loadConfig([], {}).env.PARKING_LOT_CONFIG, undefined);
});

describe('production refuses what is unsafe, naming the variable', () => {
  const strong = generateSecret;
  const production = (): Record<string, string> => ({
    NODE_ENV: 'production',
    APP_SECRET: strong(),
    ADMIN_API_KEY: strong(),
    PAYMENT_WEBHOOK_SECRET: strong(),
    SERVICE_KEYS: `backoffice notify:send ${strong()}`,
    OPERATOR_KEYS: `gate parking:panel ${strong()}; door booking:door ${strong()}`,
    PAYMENTS_SANDBOX: 'true',
  });
  const refused = (overrides: Record<string, string | undefined>, message: RegExp) =>
    assert.throws(
      () => loadConfig([], { ...production(), ...overrides }),
      (error: Error) => error instanceof ConfigError && message.test(error.message),
      `${JSON.stringify(overrides)} should be refused with ${message}`,
    );

  test('strong generated secrets start', () => {
    const config = loadConfig([], production());
    assert.equal(config.development, false);
    assert.equal(config.serviceKeys[0].name, 'backoffice');
  });

  test('missing, development, placeholder and weak secrets', () => {
    refused({ APP_SECRET: undefined }, /^APP_SECRET must be set/);
    refused(
      { APP_SECRET: 'dev-secret-change-me-in-production' },
      /^APP_SECRET is a documented development default/,
    );
    refused({ ADMIN_API_KEY: undefined }, /^ADMIN_API_KEY must be set/);
    refused({ ADMIN_API_KEY: 'dev-admin-key' }, /^ADMIN_API_KEY is a documented development default/);
    refused(
      { ADMIN_API_KEY: 'replace-with-a-long-random-admin-key' },
      /^ADMIN_API_KEY looks like a placeholder/,
    );
    refused({ ADMIN_API_KEY: 'Summer2026!Summer2026!' }, /^ADMIN_API_KEY has less than 32 bytes of entropy/);
    refused({ APP_SECRET: randomBytes(16).toString('hex') }, /^APP_SECRET has less than 32 bytes/);
    refused({ PAYMENT_WEBHOOK_SECRET: undefined }, /^PAYMENT_WEBHOOK_SECRET must be set/);
    refused({ SERVICE_KEYS: undefined }, /^SERVICE_KEYS must be set/);
    refused(
      { SERVICE_KEYS: 'dev * dev-service-key' },
      /^SERVICE_KEYS: the key of dev is a documented development default/,
    );
    refused({ OPERATOR_KEYS: 'gate parking:panel short-key-1' }, /^OPERATOR_KEYS: the key of gate/);
  });

  test('the sandbox gateway, a blanket TRUST_PROXY and test switches', () => {
    refused({ PAYMENTS_SANDBOX: undefined }, /^PAYMENTS_SANDBOX must be true/);
    refused({ TRUST_PROXY: 'true' }, /^TRUST_PROXY=true lets every client choose/);
    refused({ BOOKING_UNSAFE_NO_ARBITER: '1' }, /^BOOKING_UNSAFE_NO_ARBITER is a test-only switch/);
    refused({ PARKING_UNSAFE_NO_ARBITER: '1' }, /^PARKING_UNSAFE_NO_ARBITER is a test-only switch/);
    refused({ TEST_CLOCK: '1' }, /^TEST_CLOCK/);
    // Services that are not run need no keys or gateway of theirs.
    assert.equal(
      loadConfig([], {
        ...production(),
        SERVICES: 'paste',
        SERVICE_KEYS: '',
        OPERATOR_KEYS: '',
        PAYMENTS_SANDBOX: '',
      }).services[0],
      'paste',
    );
  });

  test('NODE_ENV=production npm start with the development secrets exits, naming the variable', () => {
    // A process still running after the spawn's timeout is killed: its status is then null, not 2.
    const result = spawnSync(process.execPath, ['src/main.ts'], {
      env: { PATH: process.env.PATH, NODE_ENV: 'production', DATA_DIR: 'memory://' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(result.status, 2);
    assert.match(
      result.stderr.trim(),
      /^configuration error: APP_SECRET must be set when NODE_ENV=production/,
    );
  });
});

test('TRUST_PROXY: false, a hop count or proxy addresses; anything else names the variable', () => {
  assert.equal(loadConfig([], {}).trustProxy, false);
  assert.deepEqual(loadConfig([], { TRUST_PROXY: '10.0.0.1, 10.1.0.0/16,::1' }).trustProxy, [
    '10.0.0.1',
    '10.1.0.0/16',
    '::1',
  ]);
  const hops = loadConfig([], { TRUST_PROXY: '1' }).trustProxy as (address: string, hop: number) => boolean;
  assert.deepEqual([hops('x', 0), hops('x', 1)], [true, false]);
  assert.throws(() => loadConfig([], { TRUST_PROXY: 'nginx' }), /^ConfigError: TRUST_PROXY must be/);
  assert.throws(() => loadConfig([], { TRUST_PROXY: '10.0.0.0/33' }), /^ConfigError: TRUST_PROXY must be/);
});
