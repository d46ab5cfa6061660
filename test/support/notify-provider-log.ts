import { type ChildProcess, spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { CHANNELS, type Channel } from '../../src/notify/api.ts';
import { type ChannelSender, ProviderError } from '../../src/notify/ports.ts';
import type { Db } from '../../src/platform/db/index.ts';
import { realServices } from './platform.ts';

/**
 * TESTS ONLY: a provider shared by processes through the database, for the multi-process
 * ordering and crash tests. Every call is logged (`test_provider_calls`); like a real provider
 * honouring idempotency keys it accepts each `deliveryId` once (`test_provider_log`).
 */
export async function createProviderLog(db: Db): Promise<void> {
  await sql`create table if not exists test_provider_calls (
    id bigserial primary key, delivery_id text not null, user_id text not null, n int not null, pid int not null)`.execute(
    db,
  );
  await sql`create table if not exists test_provider_log (
    id bigserial primary key, delivery_id text not null unique, user_id text not null, n int not null,
    pid int not null, at timestamptz not null default clock_timestamp())`.execute(db);
  await sql`create table if not exists test_provider_gate (open boolean not null)`.execute(db);
  await sql`insert into test_provider_gate values (false)`.execute(db);
}

/** Until then every call waits: a test can queue its whole load first and time only the delivery. */
export async function openProviderGate(db: Db): Promise<void> {
  await sql`update test_provider_gate set open = true`.execute(db);
}

export function providerLogSenders(
  database: () => Db,
  options: { failFirstCallFor?: string; delayMs?: number } = {},
): Record<Channel, ChannelSender> {
  let open = false;
  const gate = async (db: Db) => {
    while (!open) {
      const { rows } = await sql<{ open: boolean }>`select open from test_provider_gate`.execute(db);
      open = rows[0]?.open ?? true;
      if (!open) await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };
  const sender = (channel: Channel): ChannelSender => ({
    async send(message) {
      const db = database();
      await gate(db);
      const userId = message.recipient.userId;
      const n = Number((message.message.text.match(/"n":(\d+)/) ?? [])[1] ?? -1);
      const { rows } = await sql<{ calls: number }>`with logged as (
          insert into test_provider_calls (delivery_id, user_id, n, pid)
          values (${message.deliveryId}, ${userId}, ${n}, ${process.pid}) returning 1)
        select count(*)::int + 1 as calls from test_provider_calls where delivery_id = ${message.deliveryId}`.execute(
        db,
      );
      if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
      if (userId === options.failFirstCallFor && rows[0].calls === 1) {
        throw new ProviderError('timeout', 'the provider timed out', { permanent: false });
      }
      await sql`insert into test_provider_log (delivery_id, user_id, n, pid)
        values (${message.deliveryId}, ${userId}, ${n}, ${process.pid}) on conflict (delivery_id) do nothing`.execute(
        db,
      );
      return { provider: `log-${channel}`, providerMessageId: message.deliveryId };
    },
    states: () => [{ provider: `log-${channel}`, channel, state: 'closed' }],
    close: async () => {},
  });
  return Object.fromEntries(CHANNELS.map((channel) => [channel, sender(channel)])) as Record<
    Channel,
    ChannelSender
  >;
}

/** Starts worker.fixture.ts on the real servers under `namespace`; resolves once it consumes. */
export async function spawnWorker(
  namespace: string,
  extra: Record<string, string> = {},
  script = 'test/fixtures/notify-worker.ts',
): Promise<ChildProcess> {
  const worker = spawn(process.execPath, [script], {
    env: {
      ...process.env,
      ...extra,
      DATABASE_URL: realServices.databaseUrl,
      DATABASE_SCHEMA: namespace,
      NAMESPACE: namespace,
      NATS_URL: realServices.natsUrl ?? '',
      REDIS_URL: realServices.redisUrl ?? '',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  worker.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  worker.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  while (!output.includes('worker ready')) {
    if (worker.exitCode !== null) throw new Error(`worker exited: ${output}`);
    await sleep(50);
  }
  return worker;
}
