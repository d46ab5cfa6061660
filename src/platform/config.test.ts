import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
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
