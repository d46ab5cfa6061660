import { systemClock } from '../clock.ts';
import { createDatabase } from '../db/index.ts';
import type { Queue } from './index.ts';
import { createJetStreamQueue } from './jetstream.ts';
import { createPostgresQueue } from './postgres.ts';

/** A worker that takes messages and never finishes them: the crash test SIGKILLs it mid-job. */
const kind = process.env.QUEUE_KIND;
let queue: Queue;
if (kind === 'jetstream') {
  queue = await createJetStreamQueue(process.env.NATS_URL!, systemClock, {
    namespace: process.env.NAMESPACE!,
    leaseMs: 1200,
    ackWaitMs: 3000,
    partitions: 8,
  });
} else {
  const database = await createDatabase({
    databaseUrl: process.env.DATABASE_URL,
    schema: process.env.SCHEMA,
  });
  queue = createPostgresQueue(database.db, systemClock, { leaseMs: 2000, pollMs: 20 });
}
queue.consume('crash', { group: 'g', retryDelaysMs: [100, 100] }, async (delivery) => {
  process.stdout.write(`got ${delivery.id}\n`);
  await new Promise(() => {});
});
process.stdout.write('worker ready\n');
