import { rssOf } from './standalone.ts';

/**
 * Samples each server process every few seconds during a mixed run (the soak is a long one):
 * resident memory from /proc, and from each process's /metrics the event-loop delay (p99)
 * and database connections in use and waited for.
 */
export interface Sample {
  second: number;
  process: string;
  rssBytes: number;
  heapUsedBytes: number;
  eventLoopP99Ms: number;
  poolInUse: number;
  poolWaiting: number;
}

const metric = (text: string, pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? Number.NaN);

export function startSampler(targets: { name: string; pid: number; base: string }[], everyMs = 5000) {
  const samples: Sample[] = [];
  const started = performance.now();
  const take = async () => {
    const second = Math.round((performance.now() - started) / 1000);
    await Promise.all(
      targets.map(async ({ name, pid, base }) => {
        const text = await fetch(`${base}/metrics`).then(
          (response) => response.text(),
          () => '',
        );
        samples.push({
          second,
          process: name,
          rssBytes: rssOf(pid),
          heapUsedBytes: metric(text, /^nodejs_heap_size_used_bytes (\S+)/m),
          eventLoopP99Ms: metric(text, /^nodejs_eventloop_lag_p99_seconds (\S+)/m) * 1000,
          poolInUse: metric(text, /^db_pool_connections\{state="in_use"\} (\S+)/m),
          poolWaiting: metric(text, /^db_pool_connections\{state="waiting"\} (\S+)/m),
        });
      }),
    );
  };
  const timer = setInterval(() => void take(), everyMs);
  return {
    samples,
    stop() {
      clearInterval(timer);
      return samples;
    },
  };
}

/** Per process: memory after warm-up (the first quarter) vs at the end, worst loop delay and pool use. */
export function soakReport(samples: Sample[]): string[] {
  const names = [...new Set(samples.map((sample) => sample.process))].sort();
  return names.map((name) => {
    const mine = samples.filter((sample) => sample.process === name).sort((a, b) => a.second - b.second);
    const warm = mine[Math.floor(mine.length / 4)] ?? mine[0];
    const last = mine.at(-1) ?? warm;
    const growth = warm && last ? ((last.rssBytes - warm.rssBytes) / warm.rssBytes) * 100 : 0;
    const worstLoop = Math.max(0, ...mine.map((sample) => sample.eventLoopP99Ms).filter(Number.isFinite));
    const pool = Math.max(0, ...mine.map((sample) => sample.poolInUse).filter(Number.isFinite));
    const waiting = Math.max(0, ...mine.map((sample) => sample.poolWaiting).filter(Number.isFinite));
    const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);
    const heap = `heap used ${mb(warm?.heapUsedBytes ?? 0)} → ${mb(last?.heapUsedBytes ?? 0)} MiB`;
    return `${name}: RSS ${mb(warm?.rssBytes ?? 0)} MiB after warm-up → ${mb(last?.rssBytes ?? 0)} MiB at the end (${growth >= 0 ? '+' : ''}${growth.toFixed(1)} %), ${heap}, event-loop p99 ≤ ${worstLoop.toFixed(0)} ms, pool in use ≤ ${pool}, waiting ≤ ${waiting}`;
  });
}
