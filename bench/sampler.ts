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
  /** V8's heap as reserved from the OS (used + free pages it keeps). */
  heapTotalBytes: number;
  /** Buffers and other memory held by JS objects outside the V8 heap (cached paste bytes…). */
  externalBytes: number;
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
          heapTotalBytes: metric(text, /^nodejs_heap_size_total_bytes (\S+)/m),
          externalBytes: metric(text, /^nodejs_external_memory_bytes (\S+)/m),
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

/**
 * Per process: memory after warm-up (the first quarter), at half time and at the end — flat means
 * the second half adds (next to) nothing — with the V8 heap and external memory beside RSS, the
 * worst loop delay and pool use.
 */
export function soakReport(samples: Sample[]): string[] {
  const names = [...new Set(samples.map((sample) => sample.process))].sort();
  return names.map((name) => {
    const mine = samples.filter((sample) => sample.process === name).sort((a, b) => a.second - b.second);
    const warm = mine[Math.floor(mine.length / 4)] ?? mine[0];
    const half = mine[Math.floor(mine.length / 2)] ?? warm;
    const last = mine.at(-1) ?? warm;
    const growth = warm && last ? ((last.rssBytes - warm.rssBytes) / warm.rssBytes) * 100 : 0;
    const secondHalf = half && last ? ((last.rssBytes - half.rssBytes) / half.rssBytes) * 100 : 0;
    const worstLoop = Math.max(0, ...mine.map((sample) => sample.eventLoopP99Ms).filter(Number.isFinite));
    const pool = Math.max(0, ...mine.map((sample) => sample.poolInUse).filter(Number.isFinite));
    const waiting = Math.max(0, ...mine.map((sample) => sample.poolWaiting).filter(Number.isFinite));
    const mb = (bytes: number | undefined) => ((bytes ?? 0) / 1024 / 1024).toFixed(0);
    const pct = (value: number) => `${value >= 0 ? '+' : ''}${value.toFixed(1)} %`;
    const trend = (pick: (sample: Sample) => number) =>
      `${mb(warm && pick(warm))} → ${mb(half && pick(half))} → ${mb(last && pick(last))} MiB`;
    return (
      `${name}: RSS ${trend((s) => s.rssBytes)} (warm-up → end ${pct(growth)}, second half ${pct(secondHalf)}), ` +
      `heap used ${trend((s) => s.heapUsedBytes)}, heap total ${trend((s) => s.heapTotalBytes)}, ` +
      `external ${trend((s) => s.externalBytes)}, event-loop p99 ≤ ${worstLoop.toFixed(0)} ms, ` +
      `pool in use ≤ ${pool}, waiting ≤ ${waiting}`
    );
  });
}
