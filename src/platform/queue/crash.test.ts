import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { dropNamespace, realServices, uniqueName } from '../../../test/support/platform.ts';
import { systemClock } from '../clock.ts';
import { createDatabase } from '../db/index.ts';
import { migrateModule } from '../db/migrate.ts';
import { platformMigrations } from '../migrations.ts';
import type { Queue } from './index.ts';
import { createJetStreamQueue } from './jetstream.ts';
import { createPostgresQueue } from './postgres.ts';

/**
 * At-least-once across a crash: a worker process takes a message and is SIGKILLed before it
 * acknowledges; another worker gets the message. Needs a queue shared by processes, so it
 * runs on the real servers only (PGlite is one process's embedded database).
 */
const backends: [
  string,
  () => Promise<{ queue: Queue; env: Record<string, string>; cleanup(): Promise<void> }>,
][] = [];
if (realServices.databaseUrl) {
  const url = realServices.databaseUrl;
  backends.push([
    'postgres',
    async () => {
      const schema = uniqueName('c');
      const database = await createDatabase({ databaseUrl: url, schema });
      await migrateModule(database, 'platform', platformMigrations);
      return {
        queue: createPostgresQueue(database.db, systemClock, { leaseMs: 2000, pollMs: 20 }),
        env: { QUEUE_KIND: 'postgres', DATABASE_URL: url, SCHEMA: schema },
        async cleanup() {
          await database.close();
          await dropNamespace({ databaseUrl: url, namespace: schema }, schema);
        },
      };
    },
  ]);
}
if (realServices.natsUrl) {
  const url = realServices.natsUrl;
  backends.push([
    'jetstream',
    async () => {
      const namespace = uniqueName('c');
      return {
        queue: await createJetStreamQueue(url, systemClock, {
          namespace,
          leaseMs: 1200,
          ackWaitMs: 3000,
          partitions: 8,
        }),
        env: { QUEUE_KIND: 'jetstream', NATS_URL: url, NAMESPACE: namespace },
        async cleanup() {
          await dropNamespace({ natsUrl: url, namespace }, undefined);
        },
      };
    },
  ]);
}

describe('queue: a SIGKILLed worker loses nothing', () => {
  if (backends.length === 0) {
    test('needs a queue shared by processes', {
      skip: 'PGlite is single-process; set TEST_DATABASE_URL or NATS_URL',
    }, () => {});
  }
  for (const [name, make] of backends) {
    test(`${name}: the message comes back to another worker, ahead of its key's later ones`, {
      timeout: 60_000,
    }, async () => {
      const { queue, env, cleanup } = await make();
      const worker = spawn(process.execPath, ['test/fixtures/queue-crash-worker.ts'], {
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      worker.stdout.on('data', (chunk) => {
        output += chunk;
      });
      worker.stderr.on('data', (chunk) => {
        output += chunk;
      });
      try {
        while (!output.includes('worker ready')) {
          if (worker.exitCode !== null) throw new Error(output);
          await sleep(50);
        }
        await sleep(500);
        await queue.publish('crash', { id: 'precious', key: 'user-1', payload: { amount: 42 } });
        while (!output.includes('got precious')) {
          if (worker.exitCode !== null) throw new Error(output);
          await sleep(50);
        }
        // The dying worker has taken this one too (it waits behind "precious" on the same key)…
        await queue.publish('crash', { id: 'second', key: 'user-1', payload: { amount: 2 } });
        await sleep(300);
        worker.kill('SIGKILL');
        await once(worker, 'exit');
        // …and this one arrives after the crash: it must not overtake the two before it.
        await queue.publish('crash', { id: 'third', key: 'user-1', payload: { amount: 3 } });
        const received: { id: string; payload: unknown }[] = [];
        const consumer = queue.consume(
          'crash',
          { group: 'g', retryDelaysMs: [100, 100] },
          async (delivery) => {
            received.push({ id: delivery.id, payload: delivery.payload });
          },
        );
        const deadline = Date.now() + 30_000;
        while (received.length < 3 && Date.now() < deadline) await sleep(100);
        await consumer.stop();
        assert.deepEqual(received, [
          { id: 'precious', payload: { amount: 42 } },
          { id: 'second', payload: { amount: 2 } },
          { id: 'third', payload: { amount: 3 } },
        ]);
      } finally {
        if (worker.exitCode === null) worker.kill('SIGKILL');
        await queue.close();
        await cleanup();
      }
    });
  }
});
