import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BENCH_SERVICES,
  createBenchDatabase,
  dropNatsNamespace,
  startBenchApp,
  stopProcess,
} from './harness.ts';

/** One app process on a throwaway PostgreSQL database plus the local Redis and NATS. */
export async function startApp(services: string, env: Record<string, string> = {}) {
  const database = await createBenchDatabase(BENCH_SERVICES.postgres);
  const namespace = `bench_${Date.now()}`;
  const { child, base } = await startBenchApp({
    SERVICES: services,
    NAMESPACE: namespace,
    DATABASE_URL: database.url,
    REDIS_URL: BENCH_SERVICES.redis,
    NATS_URL: BENCH_SERVICES.nats,
    ...env,
  });
  return {
    base,
    pid: child.pid ?? 0,
    async stop() {
      await stopProcess(child);
      await database.drop();
      await dropNatsNamespace(namespace);
    },
  };
}

/** Resident memory of a process in bytes (Linux). */
export function rssOf(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('VmRSS:'));
  return Number(line?.match(/(\d+)/)?.[1] ?? 0) * 1024;
}

export const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** A parking lot file of `floors` floors of compact spots, so no benchmark entry finds it full. */
export function writeBenchLot(floors: number, spotsPerFloor: number): string {
  const path = join(mkdtempSync(join(tmpdir(), 'bench-lot-')), 'lot.json');
  writeFileSync(
    path,
    JSON.stringify({
      id: 'bench-lot',
      name: 'Benchmark lot',
      timeZone: 'UTC',
      currency: 'USD',
      lostTicketFee: 50,
      pricing: { strategy: 'hourly' },
      entryPanels: [{ id: 'in' }],
      exitPanels: [{ id: 'out' }],
      floors: Array.from({ length: floors }, (_, floor) => ({ floor, spots: { COMPACT: spotsPerFloor } })),
    }),
  );
  return path;
}
