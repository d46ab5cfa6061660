import { connect } from '@nats-io/transport-node';
import { Redis } from 'ioredis';
import pg from 'pg';

/**
 * Fails loudly when a configured real service is unreachable, before the suite starts (the
 * tests would fail too, with noisier messages). Used by .ci/run.
 */
const checks: [string, string | undefined, (url: string) => Promise<void>][] = [
  [
    'TEST_DATABASE_URL',
    process.env.TEST_DATABASE_URL,
    async (url) => {
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
      await client.connect();
      const { rows } = await client.query('show server_version');
      await client.end();
      console.log(`PostgreSQL ${rows[0].server_version} at ${url}`);
    },
  ],
  [
    'REDIS_URL',
    process.env.REDIS_URL,
    async (url) => {
      const redis = new Redis(url, { lazyConnect: true, connectTimeout: 3000, maxRetriesPerRequest: 0 });
      await redis.connect();
      const info = await redis.info('server');
      redis.disconnect();
      console.log(`Redis ${/redis_version:(\S+)/.exec(info)?.[1]} at ${url}`);
    },
  ],
  [
    'NATS_URL',
    process.env.NATS_URL,
    async (url) => {
      const nc = await connect({ servers: url, timeout: 3000 });
      const version = nc.info?.version;
      const jetstream = nc.info?.jetstream;
      await nc.close();
      if (!jetstream) throw new Error('JetStream is not enabled on this server (start nats-server with -js)');
      console.log(`NATS ${version} with JetStream at ${url}`);
    },
  ],
];

let failed = false;
for (const [name, url, check] of checks) {
  if (!url) {
    console.error(`${name} is not set`);
    failed = true;
    continue;
  }
  try {
    await check(url);
  } catch (error) {
    console.error(`${name}: cannot use ${url}: ${(error as Error).message}`);
    failed = true;
  }
}
process.exit(failed ? 1 : 0);
